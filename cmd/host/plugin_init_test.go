package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/conformance"
	"github.com/sluicehq/sluice/host/plugin/conformance/conformancetest"
)

// TestPluginCheck runs `host plugin check` on a conforming module
// (plugins/wat/identity.wasm, built by make plugins), on one whose kind is
// not the one asked for, on host/plugin/testdata/identity.wat (a fixture
// that echoes its input unparsed, so malformed input comes back out as
// malformed output) and on a file that is no module.
func TestPluginCheck(t *testing.T) {
	wasm := filepath.Join("..", "..", "plugins", "wat", "identity.wasm")
	if _, err := os.Stat(wasm); err != nil {
		t.Fatalf("%v: run `make plugins`", err)
	}
	code, out, errs := runPluginCLI(t, "", "plugin", "check", "--records", "2000", wasm)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	for _, want := range []string{"PASS  marker and exports", "PASS  large batch", "PASS  truncated batch",
		"PASS  not an envelope", "PASS  deterministic", "PASS  close", "checks\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FAIL") {
		t.Errorf("a failure:\n%s", out)
	}
	code, out, _ = runPluginCLI(t, "", "plugin", "check", "--kind", "filter", wasm)
	if code != 1 || !strings.Contains(out, `FAIL  describe               describe reports kind "map", expected "filter"`) {
		t.Errorf("--kind filter: exit %d:\n%s", code, out)
	}
	code, out, _ = runPluginCLI(t, "", "plugin", "check", "--records", "100", watFixture(t, "identity"))
	if code != 1 || !strings.Contains(out, "FAIL  truncated batch        not an error status") ||
		!strings.Contains(out, "FAIL  emits within bounds") || !strings.Contains(out, "PASS  large batch") {
		t.Errorf("echoing fixture: exit %d:\n%s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.wasm")
	os.WriteFile(bad, []byte("not wasm"), 0o644)
	code, out, _ = runPluginCLI(t, "", "plugin", "check", bad)
	if code != 1 || !strings.Contains(out, "FAIL  marker and exports") || !strings.Contains(out, "1 of 1 checks failed") {
		t.Errorf("not a module: exit %d:\n%s", code, out)
	}
}

// TestPluginInit scaffolds a project in every language into a temporary
// folder, builds it and runs its own test with the commands its README
// gives, then runs the conformance kit on the module it built. The
// toolchains (go, /usr/bin/cargo, clang with wasi-libc, cc, node, npm and
// sdk/assemblyscript/node_modules) are installed by `make tools`; a missing
// one fails the test.
func TestPluginInit(t *testing.T) {
	sdk, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(sdk, "sdk/assemblyscript/node_modules/.bin/asc")); err != nil {
		t.Errorf("sdk/assemblyscript/node_modules is not installed: run `npm ci` in sdk/assemblyscript (make tools)")
	}
	cases := []struct {
		lang  string
		steps [][]string // commands run in the project folder
	}{
		{"go", [][]string{{"make", "test"}, {"make"}}},
		{"rust", [][]string{{"make", "test"}, {"make"}}},
		{"c", [][]string{{"make", "test"}, {"make"}}},
		{"assemblyscript", [][]string{{"npm", "install", "--offline", "--no-audit", "--no-fund"}, {"npm", "test"}}},
	}
	for _, c := range cases {
		t.Run(c.lang, func(t *testing.T) {
			name := "my-" + c.lang + "-op"
			dir := filepath.Join(t.TempDir(), "proj")
			code, out, errs := runPluginCLI(t, "", "plugin", "init", "--lang", c.lang, "--dir", dir, name)
			if code != 0 {
				t.Fatalf("init: exit %d: %s%s", code, out, errs)
			}
			if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
				t.Fatal(err)
			}
			for _, step := range c.steps {
				if _, err := exec.LookPath(step[0]); err != nil {
					t.Fatalf("%s not found: install it (make tools)", step[0])
				}
				cmd := exec.Command(step[0], step[1:]...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
				msg, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(step, " "), err, msg)
				}
				t.Logf("%s:\n%s", strings.Join(step, " "), msg)
			}
			wasm := filepath.Join(dir, name+".wasm")
			if _, err := os.Stat(wasm); err != nil {
				t.Fatalf("the build made no module: %v", err)
			}
			conformancetest.Check(t, wasm, conformance.Options{Records: 2000})
		})
	}
	// Refusals: an unknown language, a bad name, a folder in use.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	for _, args := range [][]string{
		{"--lang", "cobol", "x"},
		{"--lang", "go", "Bad_Name"},
		{"--lang", "go", "--dir", dir, "x"},
		{"--lang", "go", "--sdk", t.TempDir(), "x"},
	} {
		code, _, errs := runPluginCLI(t, "", append([]string{"plugin", "init"}, args...)...)
		if code == 0 {
			t.Errorf("init %v: exit 0", args)
		}
		t.Logf("init %v: %s", args, strings.TrimSpace(errs))
	}
}
