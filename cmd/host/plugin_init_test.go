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
// folder from inside the checkout, which init finds by itself: the project
// names its SDK. The Go one (go.mod replacing the module with the
// checkout) is built and tested with the commands its README gives and run
// through the conformance kit; TestPluginInitKinds builds every language's
// (with --sdk, the same checkout) for every kind. The toolchains (go,
// /usr/bin/cargo, clang with wasi-libc, cc, node, npm and
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
		names string     // how the project names the checkout's SDK
		steps [][]string // commands run in the project folder (Go's)
	}{
		{"go", "go.mod", [][]string{{"make", "test"}, {"make"}}},
		{"rust", "Cargo.toml", nil},
		{"c", "Makefile", nil},
		{"assemblyscript", "package.json", nil},
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
			if b, err := os.ReadFile(filepath.Join(dir, c.names)); err != nil || !strings.Contains(string(b), sdk) {
				t.Fatalf("%s does not name the checkout %s (%v):\n%s", c.names, sdk, err, b)
			}
			if c.steps == nil {
				return
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

// An AssemblyScript scaffold in a fresh checkout (sdk/assemblyscript
// without node_modules) needs the one-time `npm ci` there, which the help
// text and the README give: without it npm test stops and says so, after
// it (offline, from npm's cache, as `make tools` filled it) the scaffold
// builds and passes its test.
func TestPluginInitAssemblyScriptFreshCheckout(t *testing.T) {
	code, out, errs := runPluginCLI(t, "", "plugin", "init", "--help")
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), "assemblyscript once per checkout, npm ci in its sdk/assemblyscript") {
		t.Fatalf("init --help (exit %d) does not give the one-time npm ci:\n%s%s", code, out, errs)
	}
	for _, tool := range []string{"npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: install it (make tools)", tool)
		}
	}
	checkout := t.TempDir()
	src, dst := filepath.Join("..", "..", "sdk", "assemblyscript"), filepath.Join(checkout, "sdk", "assemblyscript")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		}
		return err
	})
	if err == nil {
		err = os.WriteFile(filepath.Join(checkout, "go.mod"), []byte("module "+sluiceModule+"\n"), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "proj")
	if code, out, errs := runPluginCLI(t, "", "plugin", "init", "--lang", "assemblyscript", "--sdk", checkout, "--dir", dir, "fresh"); code != 0 {
		t.Fatalf("init: exit %d: %s%s", code, out, errs)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil || !strings.Contains(string(readme), "Once per sluice checkout: `npm ci` in `"+dst+"`") {
		t.Fatalf("README does not give the one-time npm ci in %s (%v):\n%s", dst, err, readme)
	}
	npm := func(dir string, args ...string) (string, error) {
		cmd := exec.Command("npm", append(args, "--no-audit", "--no-fund")...)
		cmd.Dir = dir
		msg, err := cmd.CombinedOutput()
		return string(msg), err
	}
	if msg, err := npm(dir, "install", "--offline"); err != nil {
		t.Fatalf("npm install: %v\n%s", err, msg)
	}
	if msg, err := npm(dir, "test"); err == nil || !strings.Contains(msg, "no AssemblyScript compiler: run npm ci in "+dst+" once") {
		t.Fatalf("npm test before npm ci in the SDK: %v\n%s", err, msg)
	}
	if msg, err := npm(dst, "ci", "--offline"); err != nil {
		t.Fatalf("npm ci --offline in %s (npm's cache lacks the SDK's packages: run `make tools`): %v\n%s", dst, err, msg)
	}
	if msg, err := npm(dir, "test"); err != nil {
		t.Fatalf("npm test after npm ci in the SDK: %v\n%s", err, msg)
	}
}

// TestPluginInitOutsideACheckout: a plugin author who installed the CLI
// has no sluice checkout (init failed: "pass --sdk PATH"). From an empty
// folder, a Go project gets a copy of the SDK (TestPluginInitKinds builds
// such projects, of every kind, with no checkout and no network); another
// language says it needs a checkout.
func TestPluginInitOutsideACheckout(t *testing.T) {
	empty := t.TempDir()
	t.Chdir(empty)
	code, out, errs := runPluginCLI(t, "", "plugin", "init", "--lang", "go", "my-op")
	if code != 0 || !strings.Contains(out, "copied into my-op/sluice-sdk: no sluice checkout here, and the module is not on the module proxy") {
		t.Fatalf("init: exit %d: %s%s", code, out, errs)
	}
	dir := filepath.Join(empty, "my-op")
	gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	if !strings.Contains(string(gomod), "replace github.com/sluicehq/sluice => ./sluice-sdk") {
		t.Errorf("go.mod:\n%s", gomod)
	}
	if _, err := os.Stat(filepath.Join(dir, "sluice-sdk", "sdk", "go")); err != nil {
		t.Errorf("no SDK copy: %v", err)
	}
	// TestPluginInitKinds builds such projects (offline) for every --kind
	for _, args := range [][]string{{"--kind", "sink"}, {"--lang", "c", "--kind", "co-map"}} {
		code, _, errs := runPluginCLI(t, "", append([]string{"plugin", "init", "--lang", "go", "x"}, args...)...)
		if code != 1 || !strings.Contains(errs, "--kind ") {
			t.Errorf("init %v: exit %d: %s", args, code, errs)
		}
	}
	code, _, errs = runPluginCLI(t, "", "plugin", "init", "--lang", "rust", "my-rust")
	if code != 1 || !strings.Contains(errs, "a rust plugin builds against the SDK of a sluice checkout (only --lang go copies its SDK into the project)") {
		t.Errorf("rust outside a checkout: exit %d: %s", code, errs)
	}
}
