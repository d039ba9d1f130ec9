package sandbox

import (
	"testing"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// Row 1: an infinite loop in process, open or a custom partitioner stops
// near its deadline; the error names plugin, export and deadline; the
// instance is replaced. (The assertions are about what the user sees, so
// they hold whatever interrupts the guest: today the call's deadline, later
// a fuel budget.)
func TestSandbox01_InfiniteLoop(t *testing.T) {
	h := tenant(t, func(c *plugin.Config) { c.CallTimeout = runaway })
	t.Run("process", func(t *testing.T) {
		j := runYAML(t, h, t.TempDir(), poisonJob(`[{n: 1}, {n: 2, c: spin}, {n: 3}]`, "fail"), runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `plugin "poison" (operator m, subtask 1/1) export sluice_process at input record 2`, "deadline")
		if want := "{\"n\":1}\n"; j.out != want { // the record before the runaway, once; none after
			t.Errorf("printed %q, want %q", j.out, want)
		}
	})
	t.Run("process, instance replaced", func(t *testing.T) {
		// on-error skip: the runaway record is isolated and skipped, its
		// instance replaced, and the job goes on with its neighbours.
		j := runYAML(t, h, t.TempDir(), poisonJob(`[{n: 1}, {n: 2, c: spin}, {n: 3}]`, "skip"), runtime.Options{}, nil)
		if j.err != nil {
			t.Fatal(j.err)
		}
		if want := "{\"n\":1}\n{\"n\":3}\n"; j.out != want {
			t.Errorf("printed %q, want %q", j.out, want)
		}
		if m := j.res.Operator("m"); m.Skipped != 1 || m.Restarts != 1 {
			t.Errorf("skipped %d, restarts %d; want 1 and 1", m.Skipped, m.Restarts)
		}
	})
	t.Run("open", func(t *testing.T) {
		j := runYAML(t, h, t.TempDir(), `version: 1
name: spin-open
plugins:
  life: { path: {wasm:lifecycle}, config: { mode: ospn } }
operators:
  - { id: src, source: { type: elements, values: [{n: 1}] } }
  - { id: m, map: life }
  - { id: out, sink: { type: print } }
`, runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `plugin "life" (operator m, subtask 1/1) export sluice_open`, "deadline")
	})
	t.Run("custom partitioner", func(t *testing.T) {
		j := runYAML(t, h, t.TempDir(), `version: 1
name: spin-partition
plugins:
  part: { path: {wasm:partitioner}, config: { mode: pspn } }
operators:
  - { id: src, source: { type: elements, values: [{k: a}, {k: b}] } }
  - { id: out, sink: { type: print }, parallelism: 2, partition: { custom: part, key: k } }
`, runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `custom partitioner plugin "part" of "out"`, `plugin "part" (edge src->out, subtask 1/1) export sluice_partition`, "deadline")
	})
	healthy(t, h)
}

// Row 4: unbounded recursion is a stack-overflow error; the host lives on.
func TestSandbox04_UnboundedRecursion(t *testing.T) {
	h := tenant(t, nil)
	j := runYAML(t, h, t.TempDir(), poisonJob(`[{n: 1}, {n: 2, c: deep}]`, "fail"), runtime.Options{}, nil)
	failed(t, h, j)
	wantWords(t, j.err, `plugin "poison" (operator m, subtask 1/1) export sluice_process at input record 2`, "wasm trap", "stack overflow")
	healthy(t, h)
}
