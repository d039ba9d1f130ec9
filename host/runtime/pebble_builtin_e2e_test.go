package runtime_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/host/state/pebblestate"
)

// runPrinted plans src, checks every keyed operator's backend is want,
// runs it with Pebble's backends under root and returns the lines its
// print sinks wrote, as a multiset.
func runPrinted(t *testing.T, src, want, root string) []string {
	t.Helper()
	p, err := pipeline.Parse("w.yaml", []byte(strings.TrimSpace(src)+"\n"), pipeline.ParseOptions{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	keyed := 0
	for _, op := range g.Operators {
		if op.Keyed {
			keyed++
			if op.State.Backend != want {
				t.Fatalf("operator %s planned on %q (%s), want %q", op.ID, op.State.Backend, op.State.Note, want)
			}
		}
	}
	if keyed == 0 && !strings.Contains(src, "window-all") {
		t.Fatal("no keyed operator")
	}
	var stdout syncBuffer
	wd, _ := os.Getwd()
	conns := timedConnectors{&connector.Builtin{Stdout: &stdout, Stdin: strings.NewReader(""), Root: wd}}
	if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conns, StateBackends: pebblestate.Backends{Root: root}}); err != nil {
		t.Fatalf("run: %v", err)
	}
	return multiset(parseLines(t, stdout.b.String()))
}

func onBackend(src, backend string) string {
	return strings.Replace(src, "operators:\n", "state: { backend: "+backend+" }\noperators:\n", 1)
}

// TestPebbleBuiltinWindows: the built-in windows keep their contents,
// timers and merging sets on Pebble when it is chosen, and give Flink's
// test vectors (those of TestWindowsEndToEndFromYAML: TimeWindowTest's
// size 7 offset 3 before 1970, merging sessions, a window-all) as on the
// heap; no database is left behind.
func TestPebbleBuiltinWindows(t *testing.T) {
	for _, c := range []struct{ name, values, op string }{{
		name: "tumbling",
		values: `[{k: a, ts: -7, v: 1}, {k: b, ts: -8, v: 1}, {k: a, ts: -1, v: 2}, {k: a, ts: 0, v: 3}, {k: b, ts: 3, v: 4},
      {k: a, ts: 6, v: 5}, {k: a, ts: 7, v: 6}, {k: a, ts: 13, v: 7}, {k: b, ts: 14, v: 8}]`,
		op: `  - id: win
    key-by: k
    window: { type: tumbling, size: 7ms, offset: 3ms }
    sum: v`,
	}, {
		name:   "sliding max",
		values: `[{k: a, ts: -3, v: 2}, {k: a, ts: 0, v: 9}, {k: a, ts: 7, v: 4}]`,
		op: `  - id: win
    key-by: k
    window: { type: sliding, size: 10ms, slide: 5ms }
    max: v`,
	}, {
		name:   "sessions",
		values: `[{k: c, ts: 0}, {k: c, ts: 3}, {k: d, ts: 1}, {k: c, ts: 11}, {k: c, ts: 16}, {k: c, ts: 20}, {k: d, ts: 6}]`,
		op: `  - id: win
    key-by: k
    window: { type: session, gap: 5ms }
    count: true`,
	}, {
		name:   "window-all",
		values: `[{k: a, ts: -7}, {k: b, ts: -8}, {k: a, ts: -1}, {k: a, ts: 0}, {k: b, ts: 3}]`,
		op: `  - id: win
    window-all: { type: tumbling, size: 7ms, offset: 3ms }
    count: true`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range []string{"1", "4"} {
				src := windowPipeline("streaming", p, c.values, c.op)
				heap := runPrinted(t, src, "heap", t.TempDir())
				root := t.TempDir()
				peb := runPrinted(t, onBackend(src, "pebble"), "pebble", root)
				if len(heap) == 0 || !slices.Equal(heap, peb) {
					t.Fatalf("parallelism %s: on Pebble\n  %s\non the heap\n  %s", p, strings.Join(peb, "\n  "), strings.Join(heap, "\n  "))
				}
				if ents, _ := os.ReadDir(filepath.Join(root, "windows")); len(ents) != 0 {
					t.Fatalf("databases left behind: %v", ents)
				}
			}
		})
	}
}

const builtinAggJob = `
version: 1
name: aggs
parallelism: 2
operators:
  - id: src
    source: { type: generator, preset: transactions, count: 6000, seed: 4, accounts: 300 }
    parallelism: 1
  - id: total
    key-by: accountId
    sum: amount
  - id: p1
    sink: { type: print, prefix: sum }
  - id: n
    input: src
    key-by: accountId
    count: true
  - id: p2
    sink: { type: print, prefix: count }
  - id: big
    input: src
    key-by: accountId
    max-by: amount
  - id: p3
    sink: { type: print, prefix: maxby }
  - id: low
    input: src
    key-by: accountId
    min: amount
  - id: p4
    sink: { type: print, prefix: min }
`

// TestPebbleBuiltinAggregations: sum, count, max-by and min on Pebble
// emit exactly the records they emit on the heap.
func TestPebbleBuiltinAggregations(t *testing.T) {
	heap := runPrinted(t, builtinAggJob, "heap", t.TempDir())
	peb := runPrinted(t, onBackend(builtinAggJob, "pebble"), "pebble", t.TempDir())
	if len(heap) != 4*6000 || !slices.Equal(heap, peb) {
		t.Fatalf("%d lines on Pebble, %d on the heap (want %d): they differ", len(peb), len(heap), 4*6000)
	}
}

const builtinCheckpointJob = `
version: 1
name: builtin-state
parallelism: 2
operators:
  - id: src
    source: { type: generator, preset: transactions, count: 6000, rate: 12000, accounts: 40 }
  - id: total
    key-by: accountId
    sum: amount
  - id: out
    sink: { type: discard }
`

// TestPebbleBuiltinCheckpoint: a built-in sum on Pebble takes native
// checkpoints; one taken at parallelism 2 restores at 3 and at 2 to every
// account's uninterrupted final total, and a savepoint of it restores on
// the heap.
func TestPebbleBuiltinCheckpoint(t *testing.T) {
	g, _ := planCheckpointJob(t, builtinCheckpointJob, 0)
	conn := newMarkConnectors()
	if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conn}); err != nil {
		t.Fatal(err)
	}
	want := finalTotals(t, conn.committed(0))
	for _, c := range []struct {
		kind checkpoint.Kind
		to   string
		p    int
	}{{checkpoint.KindCheckpoint, "pebble", 3}, {checkpoint.KindCheckpoint, "pebble", 2}, {checkpoint.KindSavepoint, "heap", 3}} {
		t.Run(c.kind.String()+"-to-"+c.to, func(t *testing.T) {
			backends := pebblestate.Backends{Root: t.TempDir()}
			g, _ := planCheckpointJob(t, onBackend(builtinCheckpointJob, "pebble"), 0)
			conn := newMarkConnectors()
			acks := runtime.NewAckRecorder()
			e, err := runtime.Start(context.Background(), g, runtime.Deps{Connectors: conn, Checkpoints: acks, StateBackends: backends})
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
			e.Cancel()
			if _, err := e.Wait(); err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("first run: %v", err)
			}
			om, _ := rd.Operator("total")
			if native := om.Subtasks[0].Native != nil; native != (c.kind == checkpoint.KindCheckpoint) {
				t.Fatalf("native state in the %s: %v", c.kind, native)
			}
			g, _ = planCheckpointJob(t, onBackend(builtinCheckpointJob, c.to), c.p, "total", "out")
			conn2 := newMarkConnectors()
			if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conn2, Restore: rd, StateBackends: backends}); err != nil {
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
