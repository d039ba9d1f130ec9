package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runPluginCLI runs the CLI with a private compilation cache.
func runPluginCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("SLUICE_CACHE_DIR", t.TempDir())
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// watFixture compiles host/plugin/testdata/name.wat with wat2wasm.
func watFixture(t *testing.T, name string) string {
	t.Helper()
	return wat(t, filepath.Join("..", "..", "host", "plugin", "testdata", name+".wat"))
}

// wat compiles the text module src with wat2wasm and returns its path.
func wat(t *testing.T, src string) string {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(src), ".wat")
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatalf("wat2wasm not found: install wabt (Debian/Ubuntu: apt-get install -y wabt)")
	}
	out := filepath.Join(t.TempDir(), name+".wasm")
	if msg, err := exec.Command(tool, src, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s: %v\n%s", name, err, msg)
	}
	return out
}

func TestPluginInspect(t *testing.T) {
	wasm := watFixture(t, "identity")
	code, out, errs := runPluginCLI(t, "", "plugin", "inspect", wasm)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"plugin   identity\n",
		"abi      v1\n",
		"kind     map (from sluice_describe)\n",
		"sdk      wat\n",
		"outputs  late\n",
		"keyed    no\n",
		"memory   min 2 pages (128 KiB), max none\n",
		"  sluice_process        function (i32, i32, i32, i32) -> i32\n",
		"imports  1\n",
		"  sluice_v1.emit  function (i32, i32, i32, i32) -> i32\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runPluginCLI(t, "", "plugin", "inspect", "--json", wasm)
	if code != 0 || !strings.Contains(out, `"Kind": "map"`) || !strings.Contains(out, `"SHA256": "`) {
		t.Errorf("--json exit %d:\n%s", code, out)
	}
}

func TestPluginInspectRefusesNonPlugins(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.wasm")
	os.WriteFile(text, []byte("hello, world\n"), 0o600)
	code, out, errs := runPluginCLI(t, "", "plugin", "inspect", text)
	want := `error: plugin "notes" (` + text + `) cannot be loaded: is not a WebAssembly module: it starts with "hello, w", not the wasm magic \0asm` + "\n"
	if code != 1 || out != "" || errs != want {
		t.Errorf("exit %d, stdout %q, stderr\n got: %s\nwant: %s", code, out, errs, want)
	}
	code, _, errs = runPluginCLI(t, "", "plugin", "inspect", watFixture(t, "nomarker"))
	if code != 1 || !strings.Contains(errs, "cannot be loaded: missing the ABI marker export sluice_abi_v1") {
		t.Errorf("exit %d: %s", code, errs)
	}
	// a module that fails a check still shows its author what it holds
	code, out, errs = runPluginCLI(t, "", "plugin", "inspect", watFixture(t, "missing_export"))
	if code != 1 || !strings.Contains(errs, "cannot be loaded:") || !strings.Contains(out, "sluice_abi_v1") || !strings.Contains(out, "exports") {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s", code, out, errs)
	}
	// one with no operator export has no kind to show: (module (memory (export "memory") 1))
	bare := filepath.Join(t.TempDir(), "bare.wasm")
	if err := os.WriteFile(bare, []byte("\x00asm\x01\x00\x00\x00\x05\x03\x01\x00\x01\x07\x0a\x01\x06memory\x02\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runPluginCLI(t, "", "plugin", "inspect", bare)
	if code != 1 || !strings.Contains(out, "kind     unknown (from exports: neither sluice_process nor sluice_partition)") {
		t.Errorf("exit %d, stdout:\n%s", code, out)
	}
}

func TestPluginRun(t *testing.T) {
	wasm := watFixture(t, "identity")
	input := `{"txnId":1,"accountId":"a","amount":12.5,"tags":["x"]}

{"z":1,"a":{"nested":true},"m":null}
`
	code, out, errs := runPluginCLI(t, input, "plugin", "run", wasm, "--input", "-", "--operator-config", "threshold=30", "--operator-config", "bank=NBI")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := `{"port":"main","record":{"txnId":1,"accountId":"a","amount":12.5,"tags":["x"]}}
{"port":"main","record":{"z":1,"a":{"nested":true},"m":null}}
`
	if out != want {
		t.Errorf("stdout\n got: %s\nwant: %s", out, want)
	}
	if errs != "identity: 2 records in, out: main 2\n" {
		t.Errorf("stderr %q", errs)
	}
	// Keyed by a field: the key travels with each record.
	code, out, errs = runPluginCLI(t, `{"accountId":"a","amount":1}`+"\n", "plugin", "run", wasm, "--input", "-", "--key", "accountId", "--batch", "1")
	if code != 0 || out != `{"port":"main","key":"a","record":{"accountId":"a","amount":1}}`+"\n" {
		t.Errorf("exit %d %s: %s", code, errs, out)
	}
}

// TestPluginRunNoOutput: a run whose plugin emits nothing (empty input,
// or a filter that drops every record) says so instead of crashing.
func TestPluginRunNoOutput(t *testing.T) {
	for name, input := range map[string]string{"empty input": "", "all dropped": `{"amount":-5}` + "\n"} {
		code, out, errs := runPluginCLI(t, input, "plugin", "run", filepath.Join("..", "..", "plugins", "valid", "valid-c.wasm"), "--input", "-")
		if code != 0 || out != "" || !strings.HasSuffix(errs, "out: none\n") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errs)
		}
	}
}

func TestPluginRunInputErrors(t *testing.T) {
	wasm := watFixture(t, "identity")
	for _, tt := range []struct {
		input string
		args  []string
		want  string
	}{
		{"{\"a\":1}\n{\"a\":\n", nil, "error: standard input:2: json: unexpected end of input at byte 5\n"},
		{"[1,2]\n", nil, "error: standard input:1: a record must be a JSON object, not an array\n"},
		{"{\"a\":1}\n", []string{"--key", "id"}, "error: standard input:1: the record has no field \"id\" for --key\n"},
		{"", []string{"--operator-config", "novalue"}, "error: --operator-config \"novalue\": want key=value (the operator's config; the host settings file is --config FILE)\n"},
		// the old spelling of --operator-config is refused, naming the new one
		{"", []string{"--config", "threshold=30"}, "error: --config \"threshold=30\": the operator's config is --operator-config key=value now; --config is the host settings file (YAML), as for every command\n"},
	} {
		args := append([]string{"plugin", "run", wasm, "--input", "-"}, tt.args...)
		code, _, errs := runPluginCLI(t, tt.input, args...)
		if code != 1 || errs != tt.want {
			t.Errorf("exit %d, stderr\n got: %s\nwant: %s", code, errs, tt.want)
		}
	}
}

func TestConfigValues(t *testing.T) {
	cfg, err := parseConfig(newPluginRunCmd(), []string{"n=30", "f=1.5", "b=true", "s=NBI", "l=[1,\"x\"]", "e=", "eq=a=b"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg["n"] != int64(30) || cfg["f"] != 1.5 || cfg["b"] != true || cfg["s"] != "NBI" || cfg["e"] != "" || cfg["eq"] != "a=b" {
		t.Errorf("%#v", cfg)
	}
	if l, ok := cfg["l"].([]any); !ok || l[0] != int64(1) || l[1] != "x" {
		t.Errorf("list %#v", cfg["l"])
	}
}

// goPlugin returns plugins/name/name.wasm, building it when `make plugins`
// has not (Go is the only toolchain it needs).
func goPlugin(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "plugins", name)
	built := filepath.Join(dir, name+".wasm")
	if _, err := os.Stat(built); err == nil {
		return built
	}
	out := filepath.Join(t.TempDir(), name+".wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build plugins/%s: %v\n%s", name, err, msg)
	}
	return out
}

// A Go SDK plugin with a side output: each record is printed with the
// name of its port.
func TestPluginRunSideOutput(t *testing.T) {
	input := `{"deviceId":"b1","value":21.5}
{"deviceId":"b2","value":34.2}
`
	code, out, errs := runPluginCLI(t, input, "plugin", "run", goPlugin(t, "high-temp"), "--input", "-", "--operator-config", "threshold=30")
	want := `{"port":"main","record":{"deviceId":"b1","value":21.5}}
{"port":"main","record":{"deviceId":"b2","value":34.2}}
{"port":"alerts","record":{"deviceId":"b2","value":34.2}}
`
	if code != 0 || out != want || errs != "high-temp: 2 records in, out: main 2, alerts 1\n" {
		t.Errorf("exit %d, stderr %q, stdout\n got: %s\nwant: %s", code, errs, out, want)
	}
	code, _, errs = runPluginCLI(t, "", "plugin", "run", goPlugin(t, "country"), "--input", "-")
	if code != 1 || errs != "error: plugin \"country\" is a partitioner: plugin run runs operators (map, filter, flat-map, process, reduce)\n" {
		t.Errorf("partitioner: exit %d: %s", code, errs)
	}
}

// TestRunChecksPluginUses: a plugin used as another kind than it describes
// itself, or a side output its plugin does not declare, stops the run
// before it starts, at the pipeline's file:line:col.
func TestRunChecksPluginUses(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	dir := t.TempDir()
	p := filepath.Join(dir, "uses.yaml")
	local := func(path string) string { // a copy beside the pipeline: plugin paths may not climb out
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, filepath.Base(path)), string(b))
		return filepath.Base(path)
	}
	writeFile(t, p, `version: 1
name: uses
plugins:
  enrich: { path: `+local("plugins/enrich/enrich-c.wasm")+` }
  high-temp: { path: `+local("plugins/high-temp/high-temp.wasm")+` }
operators:
  - id: src
    source: { type: generator, preset: sensors, count: 10 }
  - id: f
    filter: enrich
  - id: hot
    process: high-temp
  - id: out
    sink: { type: discard }
  - id: nope
    input: hot.warm
    sink: { type: discard }
  - id: keyed
    input: src
    key-by: { plugin: enrich }
    sink: { type: discard }
  - id: hot2
    input: src
    process: high-temp
    on-error: dead-letter
  - id: dead
    input: hot2.dead-letter
    sink: { type: discard }
`)
	code, out, errs := runPluginCLI(t, "", "run", "--progress", "none", p)
	for _, want := range []string{
		p + `:10:5: operator "f" uses plugin "enrich" as a filter, but the plugin is a map (its sluice_describe): write map: enrich`,
		p + `:16:12: operator "nope" reads side output "warm" of "hot", which its plugin "high-temp" does not declare (its side outputs: alerts)`,
		p + `:20:13: the key-by of operator "keyed" uses plugin "enrich", which is a map, not a key-selector`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("missing %q in:\n%s", want, errs)
		}
	}
	if code == 0 || out != "" {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errs)
	}
	if strings.Contains(errs, "dead-letter") { // the host's side output of an on-error: dead-letter operator
		t.Errorf("a dead-letter output was refused:\n%s", errs)
	}
}

// TestPluginUnknownSubcommand: `host plugin <typo>` fails (it printed the
// help and exited 0), with a suggestion when one is close.
func TestPluginUnknownSubcommand(t *testing.T) {
	code, _, errs := runPluginCLI(t, "", "plugin", "inspet", "x.wasm")
	if code == 0 || !strings.Contains(errs, `unknown command "inspet" for "host plugin"; did you mean inspect?`) {
		t.Errorf("exit %d: %s", code, errs)
	}
	if code, out, _ := runPluginCLI(t, "", "plugin"); code != 0 || !strings.Contains(out, "Usage:") {
		t.Errorf("host plugin alone: exit %d, %q", code, out)
	}
}

// TestRunNamesTheMissingPluginsLine: a plugin that cannot be loaded is
// reported at the line of the pipeline that names it, once, by the
// pipeline's name (it read `plugin "v": plugin "nope" (nope.wasm)`); lint
// and plan refuse a missing file too (they passed), and every command says
// the file is missing and what builds it.
func TestRunNamesTheMissingPluginsLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, "version: 1\nname: p\nplugins:\n  v: { path: nope.wasm }\noperators:\n  - { id: s, source: { type: generator, preset: words, count: 1 } }\n  - { id: m, map: v }\n  - { id: o, sink: { type: discard } }\n")
	nope := filepath.Join(dir, "nope.wasm")
	code, _, errs := runPluginCLI(t, "", "run", "--progress", "none", p)
	if want := "error: " + p + `:4:3: plugin "v" (` + nope + ") cannot be loaded: the file does not exist; build the plugin first\n"; code != 1 || errs != want {
		t.Errorf("run: exit %d:\n got: %s\nwant: %s", code, errs, want)
	}
	want := p + ":4:3: plugin v: nope.wasm (" + nope + ") does not exist; build the plugin first\n"
	for _, verb := range []string{"lint", "plan"} {
		code, out, errs := runPluginCLI(t, "", verb, p)
		if code != 1 || out+errs != want {
			t.Errorf("%s: exit %d:\n got: %s%s\nwant: %s", verb, code, out, errs, want)
		}
	}
	// an example plugin of the checkout names its make target
	missing := filepath.Join("..", "..", "plugins", "split", "split-nope-rust.wasm")
	code, out, errs := runPluginCLI(t, "", "plugin", "check", missing)
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	if want := "error: " + missing + " does not exist; build it first: make plugins in " + root + " builds the example plugins\n"; code != 1 || out != "" || errs != want {
		t.Errorf("plugin check: exit %d, stdout %q\n got: %s\nwant: %s", code, out, errs, want)
	}
	if hint := buildHint(filepath.Join("..", "..", "plugins", "split", "split-rust.wasm")); hint != "build it first: make plugins-rust in "+root+" builds it (make plugins builds every example)" {
		t.Errorf("split-rust.wasm: %s", hint)
	}
	if hint := buildHint(filepath.Join("..", "..", "plugins", "split", "split.wasm")); !strings.HasPrefix(hint, "build it first: make go-plugins in ") {
		t.Errorf("split.wasm: %s", hint)
	}
}

// TestErrorsNameThePluginOnce: a plugin the pipeline names differently
// from its file is named by the pipeline's name, once, in lint's and run's
// errors.
func TestErrorsNameThePluginOnce(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "badkind.wasm"), string(mustRead(t, wat(t, filepath.Join("testdata", "badkind.wat")))))
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, "version: 1\nname: p\nplugins:\n  norm: { path: badkind.wasm }\noperators:\n  - { id: s, source: { type: generator, preset: words, count: 1 } }\n  - { id: m, map: norm }\n  - { id: o, sink: { type: discard } }\n")
	for _, verb := range []string{"lint", "run"} {
		code, out, errs := runPluginCLI(t, "", verb, p)
		if code != 1 || strings.Count(out+errs, `plugin "`) != 1 || !strings.Contains(out+errs, `plugin "norm" export sluice_describe`) {
			t.Errorf("%s: exit %d:\n%s%s", verb, code, out, errs)
		}
	}
}

// TestPluginRunTakesHostConfig: the plugin commands' --config is the
// operator's (key=value), so their host settings file is --host-config
// (it was unreachable: `host --config f.yaml plugin run` was refused).
func TestPluginRunTakesHostConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "host.yaml")
	writeFile(t, file, "memory-pages: 1\n")
	// --config is the host settings file for the plugin commands too (it
	// was the operator's config there); --host-config still works
	for _, flag := range []string{"--host-config", "--config"} {
		for _, verb := range []string{"run", "check"} {
			args := []string{flag, file, "plugin", verb, filepath.Join("..", "..", "plugins", "valid", "valid-c.wasm")}
			if verb == "run" {
				args = append(args, "--input", "-")
			}
			code, out, errs := runPluginCLI(t, "", args...)
			if code == 0 || !strings.Contains(out+errs, "above the host's limit of 1 pages (64 KiB)") {
				t.Errorf("%s: exit %d: %s%s", strings.Join(args, " "), code, out, errs)
			}
		}
	}
}

// TestPluginInitHelpListsItsOwnFlags: init writes files and runs no
// plugin, so its help lists neither the host settings file nor the plugin
// limits (it listed --config as if it were a setting of the project).
func TestPluginInitHelpListsItsOwnFlags(t *testing.T) {
	code, out, _ := runPluginCLI(t, "", "plugin", "init", "--help")
	if code != 0 || !strings.Contains(out, "--lang") || strings.Contains(out, "--config") || strings.Contains(out, "--memory-pages") || strings.Contains(out, "Global Flags") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	// the other commands' help still lists them
	if code, out, _ := runPluginCLI(t, "", "plugin", "run", "--help"); code != 0 || !strings.Contains(out, "--config string") || !strings.Contains(out, "--operator-config") {
		t.Errorf("plugin run --help: exit %d:\n%s", code, out)
	}
}

// TestRunTakesThePluginLimitFlags: host run takes --memory-pages,
// --call-timeout and --cache-dir as the plugin commands do (they were
// unknown flags there).
func TestRunTakesThePluginLimitFlags(t *testing.T) {
	code, _, errs := runPluginCLI(t, "", "run", "--progress", "none", "--memory-pages", "1", "--call-timeout", "1s",
		"--plugin-root", filepath.Join("..", ".."), filepath.Join("..", "..", "configs", "quickstart.yaml"))
	if code == 0 || !strings.Contains(errs, "above the host's limit of 1 pages (64 KiB)") {
		t.Errorf("exit %d: %s", code, errs)
	}
	// every plugin that does not fit is named, not just the first
	for _, name := range []string{`plugin "enrich"`, `plugin "valid"`} {
		if !strings.Contains(errs, name) {
			t.Errorf("%s is not named:\n%s", name, errs)
		}
	}
}

// A plugin failing in plugin run is named with the input lines of the batch
// it failed on (the line itself at --batch 1), and --key refuses a key a
// key-by refuses.
func TestPluginRunNamesTheFailingInput(t *testing.T) {
	wasm := watFixture(t, "poison")
	input := "{\"a\":1}\n\n{\"a\":2}\n{\"c\":\"fail\"}\n{\"a\":3}\n"
	code, _, errs := runPluginCLI(t, input, "plugin", "run", wasm, "--input", "-")
	if want := "error: standard input:1-5, a batch of 4 records (--batch 1 names the record): "; code != 1 || !strings.HasPrefix(errs, want) || !strings.Contains(errs, "bad record") {
		t.Errorf("exit %d, stderr %q, want it to begin %q", code, errs, want)
	}
	code, out, errs := runPluginCLI(t, input, "plugin", "run", wasm, "--input", "-", "--batch", "1")
	if want := "error: standard input:4: "; code != 1 || !strings.HasPrefix(errs, want) || strings.Count(out, "\n") != 2 {
		t.Errorf("--batch 1: exit %d, stdout %q, stderr %q, want the two records before line 4 and an error beginning %q", code, out, errs, want)
	}
	// the line of the failing record, not of blank lines after it
	code, _, errs = runPluginCLI(t, "{\"c\":\"fail\"}\n\n\n", "plugin", "run", wasm, "--input", "-")
	if want := "error: standard input:1: "; code != 1 || !strings.HasPrefix(errs, want) {
		t.Errorf("trailing blank lines: exit %d, stderr %q, want it to begin %q", code, errs, want)
	}
	// an SDK's "record N: " (0-based, within the call) becomes the line
	code, _, errs = runPluginCLI(t, "\n{\"c\":\"rec0\"}\n{\"a\":1}\n", "plugin", "run", wasm, "--input", "-")
	if want := "error: standard input:2: plugin \"poison\" (operator poison, subtask 1/1) export sluice_process: plugin returned status -3 (user error): bad record\n"; code != 1 || errs != want {
		t.Errorf("record 0 of a batch: exit %d, stderr\n got: %s\nwant: %s", code, errs, want)
	}
	code, _, errs = runPluginCLI(t, "{\"k\":{\"a\":1}}\n", "plugin", "run", wasm, "--input", "-", "--key", "k")
	if want := "error: standard input:1: the --key field \"k\" is no key: a key must be a string, a number, a boolean or an array of them, not a map\n"; code != 1 || errs != want {
		t.Errorf("--key of a map: exit %d, stderr\n got: %s\nwant: %s", code, errs, want)
	}
}

// TestPluginRunHoldsStateToStateMemory: host plugin run --key holds the
// plugin's keyed state to the state-memory setting, from a host config
// file, a SLUICE_ variable or its flag, as a job does: a guest storing
// 1 MiB under a key of its own making for every record grew it without
// bound (2.4 GB in a reviewer's run), whatever the setting said.
func TestPluginRunHoldsStateToStateMemory(t *testing.T) {
	hog := wat(t, filepath.Join("testdata", "statehog.wat"))
	input := strings.Repeat(`{"k": 1}`+"\n", 8) // 8 MiB of state
	hostConfig := filepath.Join(t.TempDir(), "host.yaml")
	writeFile(t, hostConfig, "state-memory: 3\n")
	run := func(args ...string) (int, string) {
		code, out, errs := runPluginCLI(t, input, append([]string{"plugin", "run", hog, "--input", "-", "--key", "k", "--batch", "1"}, args...)...)
		if out != "" {
			t.Errorf("%v: stdout %q", args, out)
		}
		return code, errs
	}
	if code, errs := run(); code != 0 || errs != "statehog: 8 records in, out: none\n" {
		t.Fatalf("within the default state-memory (1024 MiB): exit %d: %s", code, errs)
	}
	// 1 MiB and 65 bytes a key: the third record's state_put is refused
	want := `error: standard input:3: plugin "statehog" (operator statehog, subtask 1/1) export sluice_process: keyed state: state_put slot 0: keyed state would hold 3145923 bytes, past the limit of 3145728 bytes for an operator's subtask (the state-memory setting, in MiB)` + "\n"
	for _, c := range []struct {
		name string
		env  string
		args []string
	}{
		{"--host-config", "", []string{"--host-config", hostConfig}},
		{"SLUICE_STATE_MEMORY", "3", nil},
		{"--state-memory", "", []string{"--state-memory", "3"}},
		{"--state-memory over SLUICE_STATE_MEMORY", "1024", []string{"--state-memory", "3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("SLUICE_STATE_MEMORY", c.env)
			if c.env == "" {
				os.Unsetenv("SLUICE_STATE_MEMORY")
			}
			if code, errs := run(c.args...); code != 1 || errs != want {
				t.Errorf("exit %d\n got: %s\nwant: %s", code, errs, want)
			}
		})
	}
}

// TestPluginRunEscapesGuestOutput: what a guest writes to stdout and stderr
// is shown escaped, each line marked as the guest's: it can neither clear
// the terminal nor print a line that passes for the host's.
func TestPluginRunEscapesGuestOutput(t *testing.T) {
	code, out, errs := runPluginCLI(t, `{"n":1}`+"\n", "plugin", "run", wat(t, filepath.Join("testdata", "forger.wat")), "--input", "-")
	if code != 0 || out != `{"port":"main","record":{"n":1}}`+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	line := `| \x1b[2J\x1b[H\x00job finished: 0 records\r` + "\n"
	want := "forger: 1 records in, out: main 1\nplugin forger stdout (tail):\n" + line + "plugin forger stderr (tail):\n" + line
	if errs != want {
		t.Errorf("stderr\n got: %q\nwant: %q", errs, want)
	}
}

// TestPluginRunRefusesAnUnknownKind: a describe naming a kind that does not
// exist is refused by plugin run as by pipelines and plugin check, quoted,
// and not offered back as a name to write.
func TestPluginRunRefusesAnUnknownKind(t *testing.T) {
	wasm := wat(t, filepath.Join("testdata", "badkind.wat"))
	const why = `export sluice_describe: malformed output: kind "rm -rf" is not a plugin kind: describe must name one of map, filter, flat-map, process, reduce, co-map, co-process, partitioner, key-selector, process-window`
	code, out, errs := runPluginCLI(t, `{"n":1}`+"\n", "plugin", "run", wasm, "--input", "-")
	if code != 1 || out != "" || errs != `error: plugin "badkind" `+why+"\n" {
		t.Errorf("plugin run: exit %d, stdout %q, stderr\n%s", code, out, errs)
	}
	code, out, _ = runPluginCLI(t, "", "plugin", "check", wasm)
	if code != 1 || !strings.Contains(out, why) {
		t.Errorf("plugin check: exit %d:\n%s", code, out)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "badkind.wasm"), mustRead(t, wasm), 0o600)
	p := filepath.Join(dir, "p.yaml")
	os.WriteFile(p, []byte("version: 1\nname: p\nplugins:\n  bk: {path: badkind.wasm}\noperators:\n  - id: src\n    source: {type: elements, values: [{n: 1}]}\n  - id: m\n    map: bk\n  - id: out\n    sink: {type: discard}\n"), 0o600)
	for _, verb := range []string{"lint", "run"} {
		code, out, errs = runPluginCLI(t, "", verb, p)
		if code != 1 || !strings.Contains(out+errs, why) || strings.Contains(out+errs, "write rm -rf") {
			t.Errorf("%s: exit %d:\n%s%s", verb, code, out, errs)
		}
	}
}

// TestPluginRunNamesARunawayStartFunction: a start function that never
// ends is reported as having spent its fuel, not as a bare trap.
func TestPluginRunNamesARunawayStartFunction(t *testing.T) {
	code, _, errs := runPluginCLI(t, `{"n":1}`+"\n", "plugin", "run", watFixture(t, "startloop"), "--input", "-")
	if code != 1 || !strings.Contains(errs, "the module's start function ran out of its fuel budget") || strings.Contains(errs, "unreachable") {
		t.Errorf("exit %d:\n%s", code, errs)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
