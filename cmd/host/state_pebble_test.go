package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPebbleStateLargerThanStateMemory: a keyed Wasm reduce whose state
// is more than four times --state-memory 2 (the heap refuses it at 8 MiB,
// with the state-memory error naming the operator) runs on Pebble with
// the same limit to exactly the output of an unlimited run on the heap.
func TestPebbleStateLargerThanStateMemory(t *testing.T) {
	bin := buildHost(t)
	j := newRecoveryJob(t, bin, "reduce-sum/reduce-sum.wasm")
	job := func(name, state string) string {
		writeFile(t, filepath.Join(j.dir, name+".yaml"), fmt.Sprintf(`version: 1
name: %s
parallelism: 1
%splugins:
  sum: { path: reduce-sum.wasm }
operators:
  - id: txns
    source: { type: generator, preset: transactions, count: 200000, seed: 9, accounts: 100000 }
  - id: totals
    key-by: accountId
    reduce: sum
  - id: out
    sink: { type: file, path: out/%s.jsonl }
`, name, state, name))
		return name + ".yaml"
	}
	if code, errs := j.run(job("ref", "")); code != 0 {
		t.Fatalf("the heap run without a limit: exit %d\n%s", code, errs)
	}
	code, errs := j.run("--state-memory", "8", job("heap", ""))
	if code != 1 || !strings.Contains(errs, `(operator totals, subtask 1/1)`) || !strings.Contains(errs, "past the limit of 8388608 bytes for an operator's subtask (the state-memory setting, in MiB)") {
		t.Fatalf("the heap at state-memory 8: exit %d, want 1 and the state-memory error\n%s", code, errs)
	}
	if code, errs := j.run("--state-memory", "2", job("peb", "state: { backend: pebble, dir: state }\n")); code != 0 {
		t.Fatalf("Pebble at state-memory 2: exit %d\n%s", code, errs)
	}
	ref, got := j.lines("ref"), j.lines("peb")
	if len(ref) != 200000 || !slices.Equal(unfiled(got), unfiled(ref)) {
		t.Fatalf("Pebble committed %d totals, the heap %d: they differ", len(got), len(ref))
	}
}
