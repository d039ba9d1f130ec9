package sandbox

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/runtime"
)

// Row 9: a trap mid-batch, after the guest emitted some records, drops the
// call's partial output (each call is all-or-nothing). The host then
// narrows the failure down to the record on fresh instances, so the output
// of the records before it comes out exactly once and in order (a leak of
// the trapped call's output would show them twice); under skip or
// dead-letter the records after it too, under fail (the job's end) none.
func TestSandbox09_TrapMidBatch(t *testing.T) {
	h := tenant(t, nil)
	const values = `[{n: 1}, {n: 2}, {n: 3, c: trap}, {n: 4}]`
	t.Run("fail", func(t *testing.T) {
		j := runYAML(t, h, t.TempDir(), poisonJob(values, "fail"), runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `plugin "poison" (operator m, subtask 1/1) export sluice_process at input record 3: wasm trap: unreachable`)
		if want := "{\"n\":1}\n{\"n\":2}\n"; j.out != want {
			t.Errorf("printed %q, want records 1 and 2 once (from the re-run, not the trapped call) and nothing after the trap", j.out)
		}
	})
	t.Run("skip", func(t *testing.T) {
		j := runYAML(t, h, t.TempDir(), poisonJob(values, "skip"), runtime.Options{}, nil)
		if j.err != nil {
			t.Fatal(j.err)
		}
		if want := "{\"n\":1}\n{\"n\":2}\n{\"n\":4}\n"; j.out != want {
			t.Errorf("printed %q, want %q", j.out, want)
		}
		if m := j.res.Operator("m"); m.Skipped != 1 || m.DeadLettered != 0 || m.Restarts != 1 || m.RecordsOut != 3 {
			t.Errorf("m: skipped %d, dead-lettered %d, restarts %d, out %d", m.Skipped, m.DeadLettered, m.Restarts, m.RecordsOut)
		}
	})
	t.Run("dead-letter", func(t *testing.T) {
		j := runYAML(t, h, t.TempDir(), poisonJob(values, "dead-letter"), runtime.Options{}, nil)
		if j.err != nil {
			t.Fatal(j.err)
		}
		want := "{\"n\":1}\n{\"n\":2}\n{\"n\":4}\n" +
			`dead> {"error":"sluice_process: wasm trap: unreachable","plugin":"poison","operator":"m","subtask":0,"position":3,"record":{"n":3,"c":"trap"}}` + "\n"
		if got := sortedLines(j.out); got != sortedLines(want) {
			t.Errorf("printed\n%s\nwant\n%s", j.out, want)
		}
		if m := j.res.Operator("m"); m.DeadLettered != 1 || m.Skipped != 0 || m.Restarts != 1 {
			t.Errorf("m: dead-lettered %d, skipped %d, restarts %d", m.DeadLettered, m.Skipped, m.Restarts)
		}
	})
	t.Run("crash loop", func(t *testing.T) {
		// every record poisons its instance: the restart policy (3
		// restarts per window) fails the job at the 4th crash instead of
		// spinning through the input
		j := runYAML(t, h, t.TempDir(), poisonJob(`[{n: 1}, {c: trap}, {c: trap}, {c: trap}, {c: trap}, {c: trap}, {n: 7}]`, "skip"), runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `plugin "poison" (operator m, subtask 1/1) export sluice_process at input record 5: crashed 4 times in 1h0m0s: restart limit reached (restart-attempts 3); last crash: wasm trap: unreachable`)
		if m := j.res.Operator("m"); m.Skipped != 3 || m.Restarts != 3 {
			t.Errorf("skipped %d, restarts %d before the limit; want 3 and 3", m.Skipped, m.Restarts)
		}
	})
	healthy(t, h)
}

// sortedLines sorts the lines of the print sinks, which interleave.
func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	var main, dead []string
	for _, l := range lines {
		if strings.HasPrefix(l, "dead> ") {
			dead = append(dead, l)
		} else {
			main = append(main, l)
		}
	}
	return strings.Join(append(main, dead...), "\n")
}

// Row 10: an error or a trap in each lifecycle export fails the job with a
// clear error naming the export, and leaves no instance open.
func TestSandbox10_LifecycleErrors(t *testing.T) {
	h := tenant(t, nil)
	for _, tt := range []struct{ mode, want string }{
		{"otrp", "export sluice_open: wasm trap: unreachable"},
		{"oerr", "export sluice_open: plugin returned status -6 (config error): refused in open"},
		{"ptrp", "export sluice_process at input record 1: wasm trap: unreachable"},
		{"perr", "export sluice_process at input record 1: plugin returned status -3 (user error): refused in process"},
		{"ctrp", "export sluice_close: wasm trap: unreachable"},
		{"cerr", "export sluice_close: plugin returned status -3 (user error): refused in close"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			j := runYAML(t, h, t.TempDir(), `version: 1
name: life
plugins:
  life: { path: {wasm:lifecycle}, config: { mode: `+tt.mode+` } }
operators:
  - { id: src, source: { type: elements, values: [{n: 1}, {n: 2}] } }
  - { id: m, map: life }
  - { id: out, sink: { type: print } }
`, runtime.Options{}, nil)
			failed(t, h, j)
			wantWords(t, j.err, `plugin "life" (operator m, subtask 1/1) `+tt.want)
			if strings.Count(j.err.Error(), "subtask 1/1") != 1 {
				t.Errorf("the operator and subtask named more than once: %s", j.err)
			}
		})
	}
	healthy(t, h)
}
