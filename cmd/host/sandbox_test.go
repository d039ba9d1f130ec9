package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFile copies the compiled fixture src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLintPluginMemoryAboveLimit (sandbox row 3): lint reads the header of
// a plugin file that exists and refuses initial memory above the host's
// limit, with both numbers, at the plugin's line.
func TestLintPluginMemoryAboveLimit(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, watFixture(t, "bigmem"), filepath.Join(dir, "big.wasm"))
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, "version: 1\nname: p\nplugins:\n  big: { path: big.wasm }\noperators:\n  - { id: s, source: { type: stdin } }\n  - { id: m, map: big }\n  - { id: o, sink: { type: discard } }\n")
	code, out, _ := runHost(t, "lint", p)
	want := p + ":4:3: plugin big (big.wasm) declares 300 pages (18.8 MiB) of initial memory, above the host's limit of 256 pages (16 MiB)\n"
	if code != 1 || out != want {
		t.Errorf("exit %d\n got: %s\nwant: %s", code, out, want)
	}
	t.Setenv("SLUICE_MEMORY_PAGES", "512")
	if code, out, _ := runHost(t, "lint", p); code != 0 || out != "" {
		t.Errorf("with memory-pages 512: exit %d %s", code, out)
	}
}

// TestInspectPluginMemoryAboveLimit (sandbox row 3): inspect refuses the
// module at load, with both numbers, and still shows what it declares.
func TestInspectPluginMemoryAboveLimit(t *testing.T) {
	code, out, errs := runPluginCLI(t, "", "plugin", "inspect", watFixture(t, "bigmem"))
	if code != 1 || !strings.Contains(out, "min 300 pages") || !strings.Contains(errs, "cannot be loaded: declares 300 pages (18.8 MiB) of initial memory, above the host's limit of 256 pages (16 MiB)") {
		t.Errorf("exit %d, stdout %q, stderr %s", code, out, errs)
	}
}

// TestRunRefusesJobOverMemoryBudget: a job whose plugin instances could
// pass job-memory is refused before it starts, with the numbers.
func TestRunRefusesJobOverMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, watFixture(t, "identity"), filepath.Join(dir, "id.wasm"))
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, `version: 1
name: wide
plugins:
  id: { path: id.wasm }
operators:
  - { id: src, source: { type: elements, values: [1] } }
  - { id: m, map: id, parallelism: 24 }
  - { id: out, sink: { type: discard } }
`)
	t.Setenv("SLUICE_JOB_MEMORY", "256")
	code, out, errs := runHost(t, "run", "--progress=none", p)
	want := `error: job "wide" needs 24 plugin instances × 16 MiB = 384 MiB of plugin memory, above its budget of 256 MiB (setting job-memory)`
	if code != 1 || out != "" || !strings.HasPrefix(errs, want) {
		t.Errorf("exit %d, stdout %q, stderr %s", code, out, errs)
	}
	t.Setenv("SLUICE_JOB_MEMORY", "384")
	if code, _, errs := runHost(t, "run", "--progress=none", p); code != 0 {
		t.Errorf("within the budget: exit %d: %s", code, errs)
	}
}

// TestRunOnErrorCountersAndDeadLetters: a file source's bad lines go to
// its dead-letter output, which a sink reads; the summary counts them.
func TestRunOnErrorCountersAndDeadLetters(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in.jsonl"), "{\"n\":1}\nnot json\n{\"n\":3}\n")
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, `version: 1
name: dl
operators:
  - id: lines
    source: { type: file, path: in.jsonl }
    on-error: dead-letter
  - id: out
    sink: { type: print, prefix: ok }
  - id: bad
    input: lines.dead-letter
    sink: { type: print, prefix: bad }
`)
	code, out, errs := runHost(t, "run", "--progress=none", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"ok> {\"n\":1}\n", "ok> {\"n\":3}\n",
		`bad> {"error":"malformed JSON: `, `"operator":"lines","subtask":0,"input":"` + filepath.Join(dir, "in.jsonl") + `","line":2,"record":"not json"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, `operator "lines": 1 record dead-lettered`) {
		t.Errorf("summary lacks the counter:\n%s", errs)
	}
	// skip: the same file, counted, nothing else printed
	writeFile(t, p, "version: 1\nname: skip\noperators:\n  - { id: lines, source: { type: file, path: in.jsonl }, on-error: skip }\n  - { id: out, sink: { type: print } }\n")
	code, out, errs = runHost(t, "run", "--progress=none", p)
	if code != 0 || out != "{\"n\":1}\n{\"n\":3}\n" || !strings.Contains(errs, `operator "lines": 1 record skipped`) {
		t.Errorf("skip: exit %d, stdout %q, stderr %s", code, out, errs)
	}
}

// TestRunConfinesDataPaths: a file sink path outside the pipeline's
// folder and the data roots is refused, naming the path and the roots.
func TestRunConfinesDataPaths(t *testing.T) {
	dir := t.TempDir()
	jobs := filepath.Join(dir, "jobs")
	if err := mkdir(jobs); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(jobs, "p.yaml")
	writeFile(t, p, "version: 1\nname: out\noperators:\n  - { id: s, source: { type: elements, values: [1] } }\n  - { id: out, sink: { type: file, path: ../../escaped.jsonl } }\n")
	code, _, errs := runHost(t, "run", "--progress=none", p)
	if code != 1 || !strings.Contains(errs, `sink "out": path ../../escaped.jsonl resolves to `+filepath.Join(filepath.Dir(dir), "escaped.jsonl")+", outside the allowed roots "+jobs+", ") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escaped.jsonl")); !os.IsNotExist(err) {
		t.Errorf("the sink wrote outside its roots: %v", err)
	}
	// a data root that is the pipeline's folder too is listed once, and
	// the message names the setting that allows another folder
	t.Setenv("SLUICE_DATA_ROOTS", jobs)
	code, _, errs = runHost(t, "run", "--progress=none", p)
	want := `sink "out": path ../../escaped.jsonl resolves to ` + filepath.Join(filepath.Dir(dir), "escaped.jsonl") + ", outside the allowed root " + jobs +
		" (the data-roots setting chooses the allowed roots besides the pipeline's folder)\n"
	if code != 1 || !strings.HasSuffix(errs, want) {
		t.Errorf("exit %d, want the suffix %q in:\n%s", code, want, errs)
	}
}

// runHostStdin is runHost with text on standard input.
func runHostStdin(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Chdir("../..")
	t.Setenv("SLUICE_SLOTS", "")
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestRunCSVDeadLetterKeepsTheRow: a bad CSV row's dead letter holds the
// row as read, without its line ending (its "record" was "").
func TestRunCSVDeadLetterKeepsTheRow(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, p, `version: 1
name: csvdl
operators:
  - id: in
    source: { type: stdin, format: csv }
    on-error: dead-letter
  - id: out
    sink: { type: print, prefix: ok }
  - id: bad
    input: in.dead-letter
    sink: { type: print, prefix: bad }
`)
	code, out, errs := runHostStdin(t, "id,name,amt\r\n1,ann,2.5\r\n2,bob\r\n\r\n3,\"c\"x,1\r\n4,dan,3\r\n", "run", "--progress=none", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"ok> {\"id\":1,\"name\":\"ann\",\"amt\":2.5}\n",
		`bad> {"error":"wrong number of fields","operator":"in","subtask":0,"input":"stdin","line":3,"record":"2,bob"}` + "\n",
		`"input":"stdin","line":5,"record":"3,\"c\"x,1"}` + "\n",
		"ok> {\"id\":4,\"name\":\"dan\",\"amt\":3}\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

// TestRunInvalidUTF8IsDeadLettered: a JSON line that is not UTF-8 is
// dead-lettered with its bytes (base64, as bin), not printed with U+FFFD.
func TestRunInvalidUTF8IsDeadLettered(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, p, "version: 1\nname: utf\noperators:\n  - { id: in, source: { type: stdin }, on-error: dead-letter }\n  - { id: out, sink: { type: print, prefix: ok } }\n  - { id: bad, input: in.dead-letter, sink: { type: print, prefix: bad } }\n")
	code, out, errs := runHostStdin(t, "{\"a\":\"\xff\xfe\"}\n{\"a\":\"é\"}\n", "run", "--progress=none", p)
	bad := "bad> {\"error\":\"malformed JSON: json: invalid UTF-8 at byte 7\",\"operator\":\"in\",\"subtask\":0,\"input\":\"stdin\",\"line\":1,\"record\":\"eyJhIjoi//4ifQ==\"}\n"
	if code != 0 || len(out) != len(bad)+len("ok> {\"a\":\"é\"}\n") || !strings.Contains(out, bad) || !strings.Contains(out, "ok> {\"a\":\"é\"}\n") {
		t.Fatalf("exit %d, stdout\n%s\nwant\n%s%s", code, out, bad, errs)
	}
}

// TestRunDuplicateFieldIsSkipped: a line naming a field twice is a bad
// record (key-by read the first "k", a JSON reader the last).
func TestRunDuplicateFieldIsSkipped(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, p, "version: 1\nname: dup\noperators:\n  - { id: in, source: { type: stdin }, on-error: skip }\n  - { id: s, key-by: k, sum: v }\n  - { id: out, sink: { type: print } }\n")
	code, out, errs := runHostStdin(t, "{\"k\":\"a\",\"v\":1}\n{\"k\":\"a\",\"v\":1,\"k\":\"b\"}\n{\"k\":\"a\",\"v\":2}\n", "run", "--progress=none", p)
	if code != 0 || out != "{\"k\":\"a\",\"v\":1}\n{\"k\":\"a\",\"v\":3}\n" || !strings.Contains(errs, `operator "in": 1 record skipped`) {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errs)
	}
}

// TestRunSumOverflowPrintsInfinity: a float sum past the largest float64
// prints as Jackson writes it, "Infinity" (it printed Go's "+Inf").
func TestRunSumOverflowPrintsInfinity(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, p, "version: 1\nname: inf\noperators:\n  - { id: in, source: { type: stdin } }\n  - { id: s, key-by: k, sum: v }\n  - { id: out, sink: { type: print } }\n")
	code, out, errs := runHostStdin(t, "{\"k\":\"a\",\"v\":1e308}\n{\"k\":\"a\",\"v\":1e308}\n{\"k\":\"a\",\"v\":-1e308}\n", "run", "--progress=none", p)
	if code != 0 || out != "{\"k\":\"a\",\"v\":1e+308}\n{\"k\":\"a\",\"v\":\"Infinity\"}\n{\"k\":\"a\",\"v\":\"Infinity\"}\n" {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errs)
	}
}
