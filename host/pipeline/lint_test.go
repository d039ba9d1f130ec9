package pipeline

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestLintBadPipelines parses every file under testdata/bad and compares
// the problems, one file:line:col: message per line, with NAME.want.
// Every bad file must produce at least one problem. go test -update
// rewrites the .want files.
func TestLintBadPipelines(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad pipelines: %v", err)
	}
	lookup := mapLookup(map[string]string{"P": "3"})
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p, err := ParseFile(file, ParseOptions{Lookup: lookup})
			if err == nil {
				t.Fatalf("parsed without error: %+v", p)
			}
			if p != nil {
				t.Errorf("a failed parse returned a pipeline")
			}
			var list Errors
			if !errors.As(err, &list) {
				t.Fatalf("error is %T, want Errors: %v", err, err)
			}
			for _, e := range list {
				if e.File != file || e.Msg == "" {
					t.Errorf("problem without file or message: %#v", e)
				}
			}
			got := err.Error() + "\n"
			want := strings.TrimSuffix(file, ".yaml") + ".want"
			if *update {
				if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(b) {
				t.Errorf("problems differ from %s\ngot:\n%s\nwant:\n%s", want, got, b)
			}
		})
	}
}

func mapLookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}
