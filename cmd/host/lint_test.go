package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLintConfigs: every shipped example is clean.
func TestLintConfigs(t *testing.T) {
	files, _ := filepath.Glob("../../configs/*.yaml")
	if len(files) < 10 {
		t.Fatalf("found %d configs", len(files))
	}
	args := []string{"lint"}
	for _, f := range files {
		args = append(args, strings.TrimPrefix(f, "../../"))
	}
	code, out, errs := runHost(t, args...)
	if code != 0 || out != "" || errs != "" {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
}

// TestLintProblems: every problem of every file, as file:line:col, exit 1.
func TestLintProblems(t *testing.T) {
	dir := t.TempDir()
	a, b, clean := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "clean.yaml")
	writeFile(t, a, `version: 1
name: a
operators:
  - id: src
    source: { type: generator, preset: sequence }
  - id: total
    sum: n
  - id: out
    input: nowhere
    sink: { type: print, colour: red }
`)
	writeFile(t, b, `version: 1
name: b
mode: batch
operators:
  - id: src
    source: { type: generator, preset: sequence }
  - id: out
    partition: forward
    parallelism: 2
    sink: { type: discard }
`)
	writeFile(t, clean, "version: 1\nname: c\noperators:\n  - { id: s, source: { type: stdin } }\n  - { id: o, sink: { type: discard } }\n")
	code, out, _ := runHost(t, "lint", a, clean, b)
	want := a + ":7:5: operator 'total' is a sum, which needs a keyed stream: add key-by\n" +
		a + ":9:12: operator 'out' reads \"nowhere\", which is not an operator of this pipeline\n" +
		a + ":10:26: unknown key \"colour\" in sink print (known: prefix, type)\n" +
		b + ":6:13: mode is batch but source 'src' is unbounded (a generator without count): batch needs bounded sources\n" +
		b + ":8:16: Forward partitioning does not allow change of parallelism. Upstream operation: src parallelism: 1, " +
		"downstream operation: out parallelism: 2 You must use another partitioning strategy, such as broadcast, rebalance, shuffle or global.\n"
	if code != 1 || out != want {
		t.Errorf("exit %d\ngot:\n%s\nwant:\n%s", code, out, want)
	}
	if code, out, _ := runHost(t, "lint", clean); code != 0 || out != "" {
		t.Errorf("clean file: exit %d, %q", code, out)
	}
	if code, _, _ := runHost(t, "lint"); code == 0 {
		t.Error("lint without a file must fail")
	}
}

// TestLintPluginRoots: plugin paths that climb out of the pipeline's
// folder are refused unless --plugin-root allows the folder they reach.
func TestLintPluginRoots(t *testing.T) {
	identity := string(mustRead(t, watFixture(t, "identity")))
	dir := t.TempDir()
	sub := filepath.Join(dir, "jobs")
	p := filepath.Join(sub, "p.yaml")
	if err := mkdir(sub); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, "version: 1\nname: p\nplugins:\n  m: { path: ../plugins/m.wasm }\noperators:\n  - { id: s, source: { type: stdin } }\n  - { id: x, map: m }\n  - { id: o, sink: { type: discard } }\n")
	code, out, _ := runHost(t, "lint", p)
	if code != 1 || !strings.Contains(out, p+":4:3: plugin m: path ../plugins/m.wasm climbs out of the allowed plugin folders") {
		t.Errorf("exit %d: %s", code, out)
	}
	if err := mkdir(filepath.Join(dir, "plugins")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "plugins", "m.wasm"), identity)
	if code, out, _ := runHost(t, "lint", "--plugin-root", dir, p); code != 0 {
		t.Errorf("with --plugin-root: exit %d: %s", code, out)
	}
}

func mkdir(path string) error { return os.MkdirAll(path, 0o755) }

// TestPluginRootMustBeAFolder: a --plugin-root that does not exist was
// taken silently.
func TestPluginRootMustBeAFolder(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	code, out, errs := runPluginCLI(t, "", "lint", "--plugin-root", missing, filepath.Join("..", "..", "configs", "quickstart.yaml"))
	if code == 0 || !strings.Contains(out+errs, "--plugin-root "+missing+": not a folder") {
		t.Errorf("exit %d: %s%s", code, out, errs)
	}
}

// TestLintHoldsUsesToThePlugin: a plugin file that exists is asked what it
// is, so lint refuses what run would: a partitioner used as a process, a
// side output it does not declare; the same pipeline with a process plugin
// that declares the side output is clean.
func TestLintHoldsUsesToThePlugin(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"country", "high-temp"} {
		wasm, err := os.ReadFile(goPlugin(t, name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name+".wasm"), string(wasm))
	}
	p := filepath.Join(dir, "p.yaml")
	job := func(plugin string) string {
		return `version: 1
name: p
plugins:
  hot: { path: ` + plugin + `.wasm }
operators:
  - id: readings
    source: { type: generator, preset: sensors, count: 10 }
  - id: proc
    process: hot
  - id: alerts
    input: proc.alerts
    sink: { type: discard }
`
	}
	writeFile(t, p, job("country"))
	code, out, _ := runHost(t, "lint", "--cache-dir", "", p)
	want := p + `:9:5: operator "proc" uses plugin "hot" as a process, but the plugin is a partitioner (its sluice_describe): a partitioner goes on an input: partition: { custom: hot, key: FIELD }` + "\n" +
		p + `:11:12: operator "alerts" reads side output "alerts" of "proc", which its plugin "hot" does not declare (its side outputs: none)` + "\n"
	if code != 1 || out != want {
		t.Errorf("exit %d\ngot:\n%s\nwant:\n%s", code, out, want)
	}
	writeFile(t, p, job("high-temp"))
	if code, out, errs := runHost(t, "lint", "--cache-dir", "", p); code != 0 || out != "" {
		t.Errorf("high-temp: exit %d: %s%s", code, out, errs)
	}
}

// TestLintHoldsFilesToTheDataRoots: a file source or sink outside the
// pipeline's folder and the data roots is reported as run refuses it
// (lint took --data-roots and checked nothing), and --data-roots allows it.
func TestLintHoldsFilesToTheDataRoots(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, `version: 1
name: p
operators:
  - id: src
    source: { type: file, path: `+filepath.Join(data, "in.jsonl")+` }
  - id: out
    sink: { type: file, path: out/x.jsonl }
`)
	code, out, _ := runHost(t, "lint", p)
	want := p + ":5:13: source \"src\": path " + filepath.Join(data, "in.jsonl") + " resolves to " + filepath.Join(data, "in.jsonl") + ", outside the allowed roots "
	if code != 1 || !strings.HasPrefix(out, want) || !strings.Contains(out, "(the data-roots setting chooses the allowed roots besides the pipeline's folder)") || strings.Count(out, "\n") != 1 {
		t.Errorf("exit %d:\n%s\nwant it to start %q", code, out, want)
	}
	if code, out, _ := runHost(t, "lint", "--data-roots", data, p); code != 0 || out != "" {
		t.Errorf("with --data-roots: exit %d: %s", code, out)
	}
}

// TestLintReportsPathsWithParseProblems: a file with a problem the parser
// finds (an unknown option) still has its file paths checked, so that
// fixing the one does not bring the other to light; what needs a plan
// waits for a file that parses.
func TestLintReportsPathsWithParseProblems(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "p.yaml")
	in := filepath.Join(data, "in.jsonl")
	writeFile(t, p, `version: 1
name: p
operators:
  - id: src
    source: { type: file, path: `+in+`, formt: json }
  - id: out
    sink: { type: file, path: out/x.jsonl }
`)
	code, out, _ := runHost(t, "lint", p)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 1 || len(lines) != 2 || !strings.HasPrefix(lines[0], p+":5:13: source \"src\": path "+in+" resolves to ") ||
		!strings.HasPrefix(lines[1], p+":5:") || !strings.Contains(lines[1], `unknown key "formt"`) {
		t.Errorf("exit %d:\n%s\nwant the path outside the roots and the unknown key", code, out)
	}
}

// TestOnlySourcesIsRefused: a pipeline of sources alone would run and
// write nothing, exiting 0 (Flink refuses it: No operators defined in
// streaming topology); lint and run refuse it at its operators: line, plan
// shows it. A source and an operator whose output nothing reads runs, as
// in Flink.
func TestOnlySourcesIsRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, p, "version: 1\nname: p\noperators:\n  - { id: src, source: { type: generator, preset: sequence, count: 3 } }\n")
	want := p + ":3:1: the pipeline has only sources: it would run and write nothing (Flink: No operators defined in streaming topology. Cannot execute.); end it with a sink, such as - { id: out, sink: { type: print } }\n"
	if code, out, _ := runHost(t, "lint", p); code != 1 || out != want {
		t.Errorf("lint: exit %d\n got: %s\nwant: %s", code, out, want)
	}
	if code, _, errs := runHost(t, "run", "--progress", "none", p); code != 1 || errs != want {
		t.Errorf("run: exit %d\n got: %s\nwant: %s", code, errs, want)
	}
	if code, _, errs := runHost(t, "plan", p); code != 0 {
		t.Errorf("plan: exit %d: %s", code, errs)
	}
	writeFile(t, p, "version: 1\nname: p\noperators:\n  - { id: src, source: { type: generator, preset: sequence, count: 3 } }\n  - { id: m, key-by: n, count: true }\n")
	if code, out, errs := runHost(t, "run", "--progress", "none", p); code != 0 {
		t.Errorf("a source and a count: exit %d: %s%s", code, out, errs)
	}
}

// TestPluginPathsFromThePipelinesFolder: the CLI user's own files load
// however they are named: from the pipeline's folder as the working
// directory (cd configs && host run quickstart.yaml failed: ../plugins
// climbed out of the working directory), and by an absolute path inside the
// allowed folders; one outside them is refused naming the folders.
func TestPluginPathsFromThePipelinesFolder(t *testing.T) {
	identity := string(mustRead(t, watFixture(t, "identity")))
	t.Chdir(filepath.Join("..", "..", "configs"))
	t.Setenv("SLUICE_CACHE_DIR", t.TempDir())
	var stdout, errb bytes.Buffer
	if code := run(context.Background(), []string{"run", "--progress", "none", "quickstart.yaml"}, strings.NewReader(""), &stdout, &errb); code != 0 {
		t.Fatalf("cd configs && host run quickstart.yaml: exit %d: %s", code, errb.String())
	}
	dir := t.TempDir()
	t.Chdir(dir)
	for _, d := range []string{"lib", "jobs"} {
		if err := mkdir(filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(dir, "lib", "m.wasm"), identity)
	abs := filepath.Join(dir, "lib", "m.wasm")
	job := func(path string) string {
		p := filepath.Join(dir, "jobs", "p.yaml")
		writeFile(t, p, "version: 1\nname: p\nplugins:\n  m: { path: "+path+" }\noperators:\n  - { id: s, source: { type: elements, values: [{n: 1}] } }\n  - { id: x, map: m }\n  - { id: o, sink: { type: discard } }\n")
		return p
	}
	for _, verb := range []string{"lint", "plan", "run"} {
		if code, out, errs := runPluginCLI(t, "", verb, job(abs)); code != 0 {
			t.Errorf("%s with the absolute path %s inside the working directory: exit %d: %s%s", verb, abs, code, out, errs)
		}
	}
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "m.wasm"), identity)
	p := job(filepath.Join(other, "m.wasm"))
	code, out, errs := runPluginCLI(t, "", "lint", p)
	want := p + ":4:3: plugin m: path " + filepath.Join(other, "m.wasm") + " is absolute and outside the allowed plugin folders (allowed: " +
		filepath.Join(dir, "jobs") + ", " + dir + "): to load it, pass --plugin-root " + other + " (its folder, or one above it)\n"
	if code != 1 || out+errs != want {
		t.Errorf("outside: exit %d:\n got: %s%s\nwant: %s", code, out, errs, want)
	}
	if code, out, errs := runPluginCLI(t, "", "run", "--plugin-root", other, p); code != 0 {
		t.Errorf("with --plugin-root: exit %d: %s%s", code, out, errs)
	}
}
