package plan

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// render prints a plan the way `host plan` does, text then JSON.
func render(t *testing.T, g *JobGraph) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteText(&b, g); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n---- json\n")
	if err := WriteJSON(&b, g); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// golden compares got with the file, rewriting it under -update.
func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("plan differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", file, got, want)
	}
}

// configFiles are the example pipelines shipped in configs/.
func configFiles(t *testing.T) []string {
	files, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	return files
}

// parseConfig lints a config as `host lint` run from the project folder
// does: plugin paths may reach the project with "..". No plugin file is
// read, so the .wasm modules need not exist.
func parseConfig(t *testing.T, file string) *pipeline.Pipeline {
	t.Helper()
	p, err := pipeline.ParseFile(file, pipeline.ParseOptions{PluginRoots: []string{"../.."}})
	if err != nil {
		t.Fatalf("lint: %v", err)
	}
	return p
}

// TestConfigsGolden plans every example pipeline and compares the text
// and JSON plans with testdata/configs/NAME.golden.
func TestConfigsGolden(t *testing.T) {
	for _, file := range configFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			g, err := Plan(parseConfig(t, file), Options{})
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			golden(t, filepath.Join("testdata", "configs", name+".golden"), render(t, g))
		})
	}
}

// TestChainingGolden prints the plan of every chaining case.
func TestChainingGolden(t *testing.T) {
	for _, tc := range chainCases {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, filepath.Join("testdata", "chaining", tc.name+".golden"), render(t, mustPlan(t, tc.body)))
		})
	}
}

// TestConfigsTeach: every example opens with a comment that explains its
// Flink concept, and names its pipeline after its file.
func TestConfigsTeach(t *testing.T) {
	for _, file := range configFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		comments := 0
		for _, l := range lines {
			if !strings.HasPrefix(l, "#") {
				break
			}
			comments++
		}
		if comments < 3 {
			t.Errorf("%s: opens with %d comment lines, want a header explaining the concept", file, comments)
		}
		p := parseConfig(t, file)
		if want := strings.TrimSuffix(filepath.Base(file), ".yaml"); p.Name != want {
			t.Errorf("%s: name %q, want %q", file, p.Name, want)
		}
	}
}
