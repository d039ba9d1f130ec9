package plan

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
)

const stateOps = `
plugins:
  r: { path: reduce-sum.wasm }
operators:
  - id: src
    source: {type: generator, preset: transactions, count: 3}
  - id: total
    key-by: accountId
    reduce: r
%s
  - id: sum
    key-by: accountId
    sum: amount
  - id: out
    sink: {type: discard}
`

func planState(t *testing.T, top, op string, opts Options) (*JobGraph, error) {
	t.Helper()
	src := "version: 1\nname: s\n" + top + strings.Replace(stateOps, "%s", op, 1)
	p, err := pipeline.Parse("dir/p.yaml", []byte(src), pipeline.ParseOptions{})
	if err != nil {
		return nil, err
	}
	return Plan(p, opts)
}

// TestStateResolution: the operator's state: over the pipeline's over the
// host's default over the heap; a relative dir from the pipeline file's
// folder; the built-in aggregations and BATCH mode stay on the heap, and
// plan's text says so.
func TestStateResolution(t *testing.T) {
	g, err := planState(t, "", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Operators[1].State != (State{Backend: "heap"}) {
		t.Fatalf("default: %+v", g.Operators[1].State)
	}
	g, err = planState(t, "", "", Options{StateBackend: "pebble", StateDir: "/var/sluice"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Operators[1].State != (State{Backend: "pebble", Dir: "/var/sluice"}) {
		t.Fatalf("host default: %+v", g.Operators[1].State)
	}
	g, err = planState(t, "state: { backend: pebble, dir: st, disk-quota: 64 }\n", "    state: { disk-quota: 8 }", Options{StateBackend: "heap"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (State{Backend: "pebble", Dir: "dir/st", DiskQuota: 8 << 20}); g.Operators[1].State != want {
		t.Fatalf("pipeline and operator: %+v, want %+v", g.Operators[1].State, want)
	}
	if want := (State{Backend: "pebble", Dir: "dir/st", DiskQuota: 64 << 20}); g.Operators[2].State != want {
		t.Fatalf("built-in sum: %+v, want %+v (its cells on Pebble too)", g.Operators[2].State, want)
	}
	var b strings.Builder
	if err := WriteText(&b, g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "total: max parallelism 128, parallelism 1, state pebble in dir/st, disk quota 8 MiB\n") {
		t.Fatalf("plan text:\n%s", b.String())
	}
	g, err = planState(t, "mode: batch\nstate: { backend: pebble }\n", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := g.Operators[1].State; s.Backend != "heap" || !strings.Contains(s.Note, "BATCH") {
		t.Fatalf("batch mode: %+v", s)
	}
}

// TestStateErrors: bad state: settings are refused at their file:line.
func TestStateErrors(t *testing.T) {
	for _, c := range []struct{ top, op, want string }{
		{"state: { backend: rocksdb }\n", "", `dir/p.yaml:3:`},
		{"state: { backend: rocksdb }\n", "", `heap, pebble`},
		{"state: { disk-quota: 10 }\n", "", `dir/p.yaml:3:10: operator 'total': state disk-quota applies to the pebble backend, and its backend is heap: write backend: pebble`},
		{"state: { backend: heap, dir: x }\n", "", `state dir applies to the pebble backend, and its backend is heap`},
		{"state: { backend: pebble, quota: 1 }\n", "", `unknown key "quota"`},
		{"state: { backend: pebble, disk-quota: -1 }\n", "", `disk-quota`},
		{"", "    state: { backend: pebble }", ""},
	} {
		_, err := planState(t, c.top, c.op, Options{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%q %q: %v", c.top, c.op, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.top, err, c.want)
		}
	}
	// state: on an operator that is not keyed
	src := "version: 1\nname: s\noperators:\n  - id: src\n    source: {type: generator, preset: sequence, count: 3}\n    state: { backend: pebble }\n  - id: out\n    sink: {type: discard}\n"
	p, err := pipeline.Parse("p.yaml", []byte(src), pipeline.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Plan(p, Options{}); err == nil || !strings.Contains(err.Error(), "p.yaml:6:12: operator 'src': state: is for keyed operators") {
		t.Fatalf("state on an unkeyed operator: %v", err)
	}
}
