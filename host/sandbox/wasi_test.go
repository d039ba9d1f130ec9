package sandbox

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// Row 12: a guest has no file system, no network and an empty environment
// (nothing is mounted, let alone writable: every WASI call past stdio gets
// EBADF), and proc_exit mid-batch counts as a plugin failure.
func TestSandbox12_WASIConfined(t *testing.T) {
	h := tenant(t, nil)
	j := runYAML(t, h, t.TempDir(), `version: 1
name: wasi
plugins:
  wasi: { path: {wasm:wasi} }
operators:
  - { id: src, source: { type: elements, values: [{n: 1}] } }
  - { id: m, map: wasi }
  - { id: out, sink: { type: print } }
`, runtime.Options{}, nil)
	if j.err != nil {
		t.Fatal(j.err)
	}
	const ebadf = 8 // WASI errno badf
	want := `{"f":8,"o":8,"w":8,"s":8,"e":0,"a":0}` + "\n"
	if j.out != want {
		t.Errorf("WASI calls returned %s, want %s (errno %d: no preopened folder, file or socket; no environment, no arguments)", j.out, want, ebadf)
	}

	t.Run("proc_exit fails the call", func(t *testing.T) {
		j := runYAML(t, h, t.TempDir(), poisonJob(`[{n: 1}, {n: 2, c: exit}, {n: 3}]`, "fail"), runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `plugin "poison" (operator m, subtask 1/1) export sluice_process at input record 2`, "plugin exited: the guest called proc_exit(3) during the call")
		if !errors.Is(j.err, plugin.ErrExit) {
			t.Errorf("errors.Is(err, ErrExit) is false")
		}
	})
	t.Run("proc_exit is a crash under skip", func(t *testing.T) {
		j := runYAML(t, h, t.TempDir(), poisonJob(`[{n: 1}, {n: 2, c: exit}, {n: 3}]`, "skip"), runtime.Options{}, nil)
		if j.err != nil {
			t.Fatal(j.err)
		}
		if m := j.res.Operator("m"); j.out != "{\"n\":1}\n{\"n\":3}\n" || m.Skipped != 1 || m.Restarts != 1 {
			t.Errorf("printed %q, skipped %d, restarts %d", j.out, m.Skipped, m.Restarts)
		}
	})
	healthy(t, h)
}

// Row 13: clock and random are deterministic by default: two runs of a job
// whose plugin reads the wall clock, the monotonic clock and random bytes
// print byte-identical output. A real clock and random source only come
// with grant: [clock, random] on the plugin.
func TestSandbox13_Deterministic(t *testing.T) {
	h := tenant(t, nil)
	job := func(grant string) string {
		return `version: 1
name: clock
plugins:
  clock: { path: {wasm:clock}` + grant + ` }
operators:
  - { id: src, source: { type: elements, values: [{n: 1}, {n: 2}, {n: 3}] } }
  - { id: m, map: clock }
  - { id: out, sink: { type: print } }
`
	}
	first := runYAML(t, h, t.TempDir(), job(""), runtime.Options{}, nil)
	second := runYAML(t, h, t.TempDir(), job(""), runtime.Options{}, nil)
	if first.err != nil || second.err != nil {
		t.Fatal(first.err, second.err)
	}
	if first.out != second.out || strings.Count(first.out, "\n") != 3 {
		t.Fatalf("two runs differ:\n%s\n%s", first.out, second.out)
	}
	year := time.Now().Add(-365 * 24 * time.Hour).UnixNano()
	for _, v := range readings(t, first.out) {
		if v.T >= year {
			t.Errorf("an ungranted plugin read the real wall clock: %d", v.T)
		}
	}

	granted := runYAML(t, h, t.TempDir(), job(`, grant: [clock, random]`), runtime.Options{}, nil)
	again := runYAML(t, h, t.TempDir(), job(`, grant: [clock, random]`), runtime.Options{}, nil)
	if granted.err != nil || again.err != nil {
		t.Fatal(granted.err, again.err)
	}
	a, b := readings(t, granted.out), readings(t, again.out)
	if now := time.Now().UnixNano(); a[0].T < year || a[0].T > now {
		t.Errorf("a plugin granted the clock read %d, not the real time (now %d)", a[0].T, now)
	}
	if a[0].R == b[0].R {
		t.Errorf("a plugin granted random read the same bytes in two runs: %d", a[0].R)
	}
}

type reading struct{ T, M, R int64 }

func readings(t *testing.T, out string) []reading {
	t.Helper()
	var rs []reading
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var r struct{ T, M, R int64 }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		rs = append(rs, reading(r))
	}
	return rs
}
