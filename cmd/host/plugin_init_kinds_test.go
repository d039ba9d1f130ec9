package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

// TestPluginInitKinds: every --kind in every language, as a plugin author
// without a checkout makes it: scaffolded into an empty folder outside the
// checkout (a Go project copies its SDK; the others name the checkout's SDK
// with --sdk, as they must), built and tested with the commands its README
// gives, then `host plugin check --kind KIND` and a run on the project's
// own sample records — `plugin run` for an operator (--key accountId for a
// reduce), `host run pipeline.yaml` for a partitioner — whose output must be
// what the kind does to those records, computed here from records.jsonl.
// The builds share one cache per toolchain (Go's, one cargo target folder).
func TestPluginInitKinds(t *testing.T) {
	sdk, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	code, help, _ := runPluginCLI(t, "", "plugin", "init", "--help")
	if code != 0 {
		t.Fatalf("init --help: exit %d", code)
	}
	for kind := range initKinds {
		if !strings.Contains(help, "\n  "+kind+" ") {
			t.Errorf("init --help does not describe --kind %s:\n%s", kind, help)
		}
	}
	empty := t.TempDir()
	t.Chdir(empty) // no checkout above: a Go project copies the SDK
	cargoTarget := t.TempDir()
	langs := []struct {
		lang, title string
		steps       [][]string
		env         []string
	}{
		{"go", "Go", [][]string{{"make", "test"}, {"make"}}, []string{"GOFLAGS=-mod=mod", "GOPROXY=off"}},
		{"rust", "Rust", [][]string{{"make", "test"}, {"make"}}, []string{"CARGO_TARGET_DIR=" + cargoTarget}},
		{"c", "C", [][]string{{"make", "test"}, {"make"}}, nil},
		{"assemblyscript", "AssemblyScript", [][]string{{"npm", "install", "--offline", "--no-audit", "--no-fund"}, {"npm", "test"}}, nil},
	}
	kinds := []string{"filter", "map", "flat-map", "process", "reduce", "partitioner"}
	if len(kinds) != len(initKinds) {
		t.Fatalf("the test covers %v; initKinds has %d", kinds, len(initKinds))
	}
	for _, l := range langs {
		t.Run(l.lang, func(t *testing.T) {
			for _, kind := range kinds {
				t.Run(kind, func(t *testing.T) {
					start := time.Now()
					name := "my-" + l.lang + "-" + kind
					args := []string{"plugin", "init", "--lang", l.lang, "--kind", kind}
					if l.lang != "go" {
						args = append(args, "--sdk", sdk)
					}
					if code, out, errs := runPluginCLI(t, "", append(args, name)...); code != 0 {
						t.Fatalf("init: exit %d: %s%s", code, out, errs)
					}
					dir := filepath.Join(empty, name)
					readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
					if want := "A sluice " + kind + " plugin in " + l.title + ": " + initKinds[kind] + "."; !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), want) {
						t.Errorf("README lacks %q:\n%s", want, readme)
					}
					for _, step := range l.steps {
						cmd := exec.Command(step[0], step[1:]...)
						cmd.Dir = dir
						cmd.Env = append(os.Environ(), l.env...)
						if msg, err := cmd.CombinedOutput(); err != nil {
							t.Fatalf("%s: %v\n%s", strings.Join(step, " "), err, msg)
						}
					}
					wasm := filepath.Join(dir, name+".wasm")
					code, out, errs := runPluginCLI(t, "", "plugin", "check", "--kind", kind, wasm)
					if code != 0 || strings.Contains(out, "FAIL") {
						t.Fatalf("plugin check --kind %s: exit %d:\n%s%s", kind, code, out, errs)
					}
					records := readLines(t, filepath.Join(dir, "records.jsonl"))
					if kind == "partitioner" {
						checkPartitioned(t, dir, name, records)
					} else {
						checkRun(t, dir, wasm, kind, records)
					}
					t.Logf("%s %s: built, checked and run in %v", l.lang, kind, time.Since(start).Round(time.Millisecond))
				})
			}
		})
	}
}

// checkRun runs the operator over the sample records with plugin run and
// compares each port's records with what the kind makes of them.
func checkRun(t *testing.T, dir, wasm, kind string, records []object) {
	t.Helper()
	args := []string{"plugin", "run", wasm, "--input", filepath.Join(dir, "records.jsonl")}
	if kind == "reduce" {
		args = append(args, "--key", "accountId")
	}
	code, out, errs := runPluginCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("plugin run: exit %d: %s%s", code, out, errs)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var o struct {
			Port   string
			Record json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("plugin run printed %q: %v", line, err)
		}
		got[o.Port] = append(got[o.Port], compact(t, o.Record))
	}
	want := map[string][]string{}
	accs := map[string]object{}
	for _, r := range records {
		amount := r.integer(t, "amount")
		switch kind {
		case "filter":
			if amount > 0 {
				want["main"] = append(want["main"], r.String())
			}
		case "map":
			want["main"] = append(want["main"], r.set("positive", strconv.FormatBool(amount > 0)).String())
		case "flat-map":
			for range min(r.integer(t, "count"), 10) {
				want["main"] = append(want["main"], r.String())
			}
		case "process":
			port := "main"
			if amount > 1000 {
				port = "large"
			}
			want[port] = append(want[port], r.String())
		case "reduce":
			key := r.str(t, "accountId")
			acc, ok := accs[key]
			if ok {
				acc = acc.set("amount", strconv.FormatInt(acc.integer(t, "amount")+amount, 10))
			} else {
				acc = r
			}
			accs[key] = acc
			want["main"] = append(want["main"], acc.String())
		}
	}
	if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("plugin run %s:\ngot  %q\nwant %q\n%s", kind, got, want, errs)
	}
}

// checkPartitioned runs the project's pipeline.yaml: the records keyed by
// accountId over 4 subtasks, each printing "NAME:N> record"; a record goes
// to subtask 1 + (Java hashCode of its accountId mod 4).
func checkPartitioned(t *testing.T, dir, name string, records []object) {
	t.Helper()
	var out, errb bytes.Buffer
	t.Setenv("SLUICE_SLOTS", "")
	if code := run(t.Context(), []string{"run", filepath.Join(dir, "pipeline.yaml")}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("host run pipeline.yaml: exit %d: %s%s", code, out.String(), errb.String())
	}
	var got, want []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.HasPrefix(line, name+":") {
			got = append(got, line)
		}
	}
	subtasks := map[int]bool{}
	for _, r := range records {
		var h int32
		for _, u := range utf16.Encode([]rune(r.str(t, "accountId"))) {
			h = 31*h + int32(u)
		}
		sub := int((h%4+4)%4) + 1
		subtasks[sub] = true
		want = append(want, fmt.Sprintf("%s:%d> %s", name, sub, r.String()))
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(subtasks) < 2 || !slices.Equal(got, want) {
		t.Fatalf("host run pipeline.yaml (the sample keys must reach 2 subtasks or more):\ngot  %q\nwant %q\n%s", got, want, errb.String())
	}
}

// object is a JSON object with its keys in order, as the host prints
// records; values are kept as compact JSON.
type object []struct{ k, v string }

func readLines(t *testing.T, file string) []object {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []object
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		out = append(out, parseObject(t, line))
	}
	if len(out) < 3 {
		t.Fatalf("%s: %d sample records", file, len(out))
	}
	return out
}

func parseObject(t *testing.T, s string) object {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%q is not a JSON object", s)
	}
	var o object
	for d.More() {
		k, err := d.Token()
		var v json.RawMessage
		if err == nil {
			err = d.Decode(&v)
		}
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		o = append(o, struct{ k, v string }{k.(string), compact(t, v)})
	}
	return o
}

func compact(t *testing.T, raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	return b.String()
}

func (o object) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.k)
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(f.v)
	}
	b.WriteByte('}')
	return b.String()
}

// set returns o with field k set to the JSON v: in place, or appended.
func (o object) set(k, v string) object {
	out := slices.Clone(o)
	for i := range out {
		if out[i].k == k {
			out[i].v = v
			return out
		}
	}
	return append(out, struct{ k, v string }{k, v})
}

// integer is the SDKs' lenient integer: a number truncated toward zero, else 0.
func (o object) integer(t *testing.T, k string) int64 {
	for _, f := range o {
		if f.k == k {
			n, err := strconv.ParseFloat(f.v, 64)
			if err != nil {
				return 0
			}
			return int64(n)
		}
	}
	return 0
}

func (o object) str(t *testing.T, k string) string {
	t.Helper()
	for _, f := range o {
		if f.k == k {
			var s string
			if err := json.Unmarshal([]byte(f.v), &s); err != nil {
				t.Fatalf("field %s of %s is not a string", k, o)
			}
			return s
		}
	}
	t.Fatalf("%s has no field %s", o, k)
	return ""
}
