package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/host/state/pebblestate"
)

// pluginStateJobOn is pluginStateJob (a Wasm reduce whose accumulators
// are host keyed state) with the pipeline's state: backend set.
func pluginStateJobOn(backend string) string {
	return strings.Replace(pluginStateJob, "parallelism: 2\n", "parallelism: 2\nstate: { backend: "+backend+" }\n", 1)
}

// finalTotals is each account's last total.
func finalTotals(t *testing.T, vals [][]byte) map[string]int64 {
	m := map[string]int64{}
	for _, v := range vals {
		k, _, _ := abi.MapField(v, "accountId")
		a, _, err := abi.MapField(v, "amount")
		if err != nil {
			t.Fatal(err)
		}
		n, _ := abi.ReadInt(a)
		m[string(k)] = n
	}
	return m
}

// TestPebbleBackendSameResult: the job from YAML with state: {backend:
// pebble} emits, subtask by subtask, exactly the records it emits on the
// heap, and leaves no database behind.
func TestPebbleBackendSameResult(t *testing.T) {
	runOn := func(backend string) (*markConnectors, string) {
		src := strings.Replace(pluginStateJobOn(backend), "  - id: src\n", "  - id: src\n    parallelism: 1\n", 1)
		g, plugins := planCheckpointJob(t, src, 0)
		if got := g.Operators[1].State.Backend; got != backend {
			t.Fatalf("planned backend %q, want %q", got, backend)
		}
		root := t.TempDir()
		conn := newMarkConnectors()
		if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conn, Plugins: plugins, StateBackends: pebblestate.Backends{Root: root}}); err != nil {
			t.Fatal(err)
		}
		return conn, root
	}
	// one source subtask: each keyed subtask's input order is the same in
	// every run
	heap, _ := runOn("heap")
	peb, root := runOn("pebble")
	for sub := range 2 {
		h, p := heap.got[sub], peb.got[sub]
		if len(h) == 0 || len(h) != len(p) {
			t.Fatalf("subtask %d: %d records on pebble, %d on the heap", sub, len(p), len(h))
		}
		for i := range h {
			if string(h[i]) != string(p[i]) {
				t.Fatalf("subtask %d record %d: pebble %x, heap %x", sub, i, p[i], h[i])
			}
		}
	}
	if n := len(finalTotals(t, append(peb.got[0], peb.got[1]...))); n != 40 {
		t.Fatalf("%d accounts, want 40", n)
	}
	ents, err := os.ReadDir(filepath.Join(root, "plugin-state"))
	if err != nil {
		t.Fatalf("the Pebble run made no state folder: %v", err)
	}
	if len(ents) != 0 {
		t.Fatalf("databases left behind: %v", ents)
	}
}

// TestPebbleCheckpointAcrossBackends: a savepoint taken at parallelism 2
// on one backend restores at 3 on the other (and on the same one), and a
// checkpoint taken on Pebble (its native format) restores on Pebble at 2
// (the copied database opened as it is) and at 3 (clipped ranges): every
// account's final total is that of an uninterrupted run. A native
// checkpoint restored on the heap is refused, saying what to do.
func TestPebbleCheckpointAcrossBackends(t *testing.T) {
	g, plugins := planCheckpointJob(t, pluginStateJob, 0)
	conn := newMarkConnectors()
	if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conn, Plugins: plugins}); err != nil {
		t.Fatal(err)
	}
	want := finalTotals(t, conn.committed(0))
	for _, c := range []struct {
		from, to string
		kind     checkpoint.Kind
		p        int
	}{
		{"pebble", "heap", checkpoint.KindSavepoint, 3},
		{"heap", "pebble", checkpoint.KindSavepoint, 3},
		{"pebble", "pebble", checkpoint.KindSavepoint, 3},
		{"pebble", "pebble", checkpoint.KindCheckpoint, 3},
		{"pebble", "pebble", checkpoint.KindCheckpoint, 2},
		{"pebble", "pebble", checkpoint.KindCheckpoint, 1},
		{"pebble", "heap", checkpoint.KindCheckpoint, 2},
	} {
		t.Run(fmt.Sprintf("%s-%s-to-%s-at-%d", c.kind, c.from, c.to, c.p), func(t *testing.T) {
			backends := pebblestate.Backends{Root: t.TempDir()}
			g, plugins := planCheckpointJob(t, pluginStateJobOn(c.from), 0)
			conn := newMarkConnectors()
			acks := runtime.NewAckRecorder()
			e, err := runtime.Start(context.Background(), g, runtime.Deps{Connectors: conn, Plugins: plugins, Checkpoints: acks, StateBackends: backends})
			if err != nil {
				t.Fatal(err)
			}
			for conn.count() < 500 {
				select {
				case <-e.Done():
					t.Fatal("the job ended before the checkpoint")
				case <-time.After(time.Millisecond):
				}
			}
			if err := e.TriggerCheckpoint(1, c.kind, time.Now(), false); err != nil {
				t.Fatal(err)
			}
			acks.WaitAcked(t, e, 1)
			rd := acks.Publish(t, t.TempDir(), 1)
			if err := rd.Verify(); err != nil {
				t.Fatal(err)
			}
			e.Cancel()
			if _, err := e.Wait(); err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("first run: %v", err)
			}
			native := false
			if om, ok := rd.Operator("total"); ok {
				for _, s := range om.Subtasks {
					native = native || s.Native != nil
				}
			}
			if want := c.kind == checkpoint.KindCheckpoint && c.from == "pebble"; native != want {
				t.Fatalf("native keyed state in the %s: %v, want %v", c.kind, native, want)
			}
			g, plugins = planCheckpointJob(t, pluginStateJobOn(c.to), c.p, "total", "out")
			conn2 := newMarkConnectors()
			_, err = runtime.Run(context.Background(), g, runtime.Deps{Connectors: conn2, Plugins: plugins, Restore: rd, StateBackends: backends})
			if native && c.to == "heap" {
				if err == nil || !strings.Contains(err.Error(), `keyed state of "total" in the pebble-v2 backend's own format, and its state backend is heap now`) {
					t.Fatalf("a Pebble checkpoint restored on the heap: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := finalTotals(t, append(conn.committed(1), conn2.committed(0)...))
			if len(got) != len(want) {
				t.Fatalf("%d accounts, want %d", len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("account %s: %d after the restore, %d uninterrupted", k, got[k], v)
				}
			}
		})
	}
}

// TestPebbleDiskQuota: a job whose keyed state outgrows state: disk-quota
// fails with an error that names the operator, its subtask and the
// setting.
func TestPebbleDiskQuota(t *testing.T) {
	src := strings.Replace(pluginStateJobOn("pebble, disk-quota: 1"), "count: 6000, rate: 12000, accounts: 40", "count: 200000, accounts: 100000", 1)
	g, plugins := planCheckpointJob(t, src, 0)
	_, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: newMarkConnectors(), Plugins: plugins, StateBackends: pebblestate.Backends{Root: t.TempDir()}})
	if err == nil || !strings.Contains(err.Error(), `operator "total" subtask`) || !strings.Contains(err.Error(), "past its disk quota of 1048576 bytes (state: disk-quota)") {
		t.Fatalf("a job past its disk quota: %v", err)
	}
	t.Log(err)
}
