package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// Checkpoints with the real generator and Wasm plugins. The sink of these
// jobs marks, at each barrier, how many records it had: what a
// two-phase-commit sink would have committed with that checkpoint.

type markConnectors struct {
	*connector.Builtin
	mu    sync.Mutex
	got   map[int][][]byte // per sink subtask, in arrival order
	marks map[checkpoint.ID]map[int]int
}

func newMarkConnectors() *markConnectors {
	return &markConnectors{Builtin: &connector.Builtin{Stdin: strings.NewReader("")},
		got: map[int][][]byte{}, marks: map[checkpoint.ID]map[int]int{}}
}

func (c *markConnectors) Sink(_ *pipeline.Operator, subtask, _ int) (runtime.Operator, error) {
	return &markSink{c: c, sub: subtask}, nil
}

// committed is what the sinks had at checkpoint id's barrier, or
// everything they got when id is 0.
func (c *markConnectors) committed(id checkpoint.ID) [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]byte
	for sub, got := range c.got {
		n := len(got)
		if id != 0 {
			n = c.marks[id][sub]
		}
		out = append(out, got[:n]...)
	}
	return out
}

func (c *markConnectors) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, got := range c.got {
		n += len(got)
	}
	return n
}

type markSink struct {
	c   *markConnectors
	sub int
}

func (s *markSink) Open(*runtime.OpenContext) error { return nil }
func (s *markSink) Close(runtime.Collector) error   { return nil }
func (s *markSink) Process(_ int, b []byte, count int, _ runtime.Collector) error {
	rd := abi.NewReader(b, count)
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	for rd.Next() {
		s.c.got[s.sub] = append(s.c.got[s.sub], append([]byte(nil), rd.Record().Value...))
	}
	return rd.Err()
}

func (s *markSink) SnapshotState(id checkpoint.ID) (checkpoint.SubtaskState, error) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.c.marks[id] == nil {
		s.c.marks[id] = map[int]int{}
	}
	s.c.marks[id][s.sub] = len(s.c.got[s.sub])
	return checkpoint.SubtaskState{}, nil
}

func (s *markSink) RestoreState(checkpoint.Restore) error { return nil }

// planCheckpointJob plans src (plugin paths relative to configs/) with
// the parallelism of the operators ids set to p, and loads its plugins.
func planCheckpointJob(t *testing.T, src string, p int, ids ...string) (*plan.JobGraph, runtime.Plugins) {
	t.Helper()
	wd, _ := os.Getwd()
	file := filepath.Join(configsDir, "checkpoint-test.yaml")
	pl, err := pipeline.Parse(file, []byte(strings.TrimSpace(src)+"\n"), pipeline.ParseOptions{PluginRoots: []string{filepath.Join(wd, "../..")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range pl.Operators {
		if slices.Contains(ids, op.ID) {
			op.Parallelism = p
		}
	}
	g, err := plan.Plan(pl, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g, loadPlugins(t, file, pl)
}

// checkpointThenRestore runs src with checkpointing until its sinks got
// after records, takes checkpoint 1, cancels the job (a crash), and runs
// it again to its end from the checkpoint with the operators ids at
// parallelism p. It returns what the sinks committed with the checkpoint and then got
// in the second run, in order.
func checkpointThenRestore(t *testing.T, src string, after, p int, ids ...string) [][]byte {
	t.Helper()
	first, second := checkpointThenRestoreRuns(t, src, after, p, ids...)
	return append(first.committed(1), second.committed(0)...)
}

// checkpointThenRestoreRuns is checkpointThenRestore returning the sinks
// of each run.
func checkpointThenRestoreRuns(t *testing.T, src string, after, p int, ids ...string) (first, second *markConnectors) {
	t.Helper()
	g, plugins := planCheckpointJob(t, src, 0)
	conn := newMarkConnectors()
	acks := runtime.NewAckRecorder()
	e, err := runtime.Start(context.Background(), g, runtime.Deps{Connectors: conn, Plugins: plugins, Checkpoints: acks})
	if err != nil {
		t.Fatal(err)
	}
	for conn.count() < after {
		select {
		case <-e.Done():
			t.Fatal("the job ended before the checkpoint")
		case <-time.After(time.Millisecond):
		}
	}
	if err := e.TriggerCheckpoint(1, checkpoint.KindCheckpoint, time.Now(), false); err != nil {
		t.Fatal(err)
	}
	acks.WaitAcked(t, e, 1)
	rd := acks.Publish(t, t.TempDir(), 1)
	e.Cancel() // it may have ended meanwhile: what counts is the checkpoint
	if _, err := e.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	if len(conn.committed(1)) == 0 {
		t.Fatal("nothing committed with the checkpoint")
	}
	g, plugins = planCheckpointJob(t, src, p, ids...)
	conn2 := newMarkConnectors()
	if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conn2, Plugins: plugins, Restore: rd}); err != nil {
		t.Fatal(err)
	}
	return conn, conn2
}

const generatorRescaleJob = `
version: 1
name: gen-rescale
parallelism: 2
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 20000, rate: 20000 }
  - id: out
    sink: { type: discard }
`

// TestCheckpointGeneratorRescaleExact: a (paced) generator job
// checkpointed at parallelism 2 and restored at 3 produces exactly the
// records of an uninterrupted run: what the sinks committed with the
// checkpoint and what the restored run emitted hold every record once.
func TestCheckpointGeneratorRescaleExact(t *testing.T) {
	got := checkpointThenRestore(t, generatorRescaleJob, 500, 3, "src", "out")
	seen := make([]int, 20000)
	for _, v := range got {
		raw, _, _ := abi.MapField(v, "n")
		n, _ := abi.ReadInt(raw)
		seen[n]++
	}
	for n, k := range seen {
		if k != 1 {
			t.Fatalf("record %d: %d times (%d records in all)", n, k, len(got))
		}
	}
}

// TestCheckpointIdleSourceInjects: a generator at one record per 1000 s
// waits on its ticker, and still injects a barrier at once: it selects on
// its mailbox too.
func TestCheckpointIdleSourceInjects(t *testing.T) {
	g, _ := planCheckpointJob(t, `
version: 1
name: idle
operators:
  - id: src
    source: { type: generator, preset: sequence, rate: 0.001 }
  - id: out
    sink: { type: discard }
`, 0)
	conn := newMarkConnectors()
	acks := runtime.NewAckRecorder()
	e, err := runtime.Start(context.Background(), g, runtime.Deps{Connectors: conn, Checkpoints: acks})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Cancel()
	if err := e.TriggerCheckpoint(1, checkpoint.KindCheckpoint, time.Now(), false); err != nil {
		t.Fatal(err)
	}
	acks.WaitAcked(t, e, 1)
}

const pluginStateJob = `
version: 1
name: plugin-state
parallelism: 2
plugins:
  reducesum: { path: ../plugins/reduce-sum/reduce-sum.wasm }
operators:
  - id: src
    source: { type: generator, preset: transactions, count: 6000, rate: 12000, accounts: 40 }
  - id: total
    key-by: accountId
    reduce: reducesum
  - id: out
    sink: { type: discard }
`

// TestCheckpointPluginKeyedState: a Wasm reduce keeps its accumulators in
// the host's keyed state (its state_* slots); checkpointed at parallelism
// 2 and restored at 3, every account's final total is that of an
// uninterrupted run.
func TestCheckpointPluginKeyedState(t *testing.T) {
	final := func(vals [][]byte) map[string]int64 {
		m := map[string]int64{}
		for _, v := range vals {
			k, _, _ := abi.MapField(v, "accountId")
			a, _, _ := abi.MapField(v, "amount")
			n, _ := abi.ReadInt(a)
			m[string(k)] = n
		}
		return m
	}
	g, plugins := planCheckpointJob(t, pluginStateJob, 0)
	conn := newMarkConnectors()
	if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conn, Plugins: plugins}); err != nil {
		t.Fatal(err)
	}
	// per key, the records of one subtask in order: the last is the total
	want := final(conn.committed(0))
	got := final(checkpointThenRestore(t, pluginStateJob, 500, 3, "total", "out"))
	if len(want) != 40 || len(got) != len(want) {
		t.Fatalf("%d accounts, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("account %s: %d after the restore, %d uninterrupted", k, got[k], v)
		}
	}
}

const operatorStateJob = `
version: 1
name: operator-state
parallelism: 2
plugins:
  count: { path: ../plugins/running-count/running-count.wasm }
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 20000, rate: 20000 }
  - id: count
    map: count
  - id: out
    sink: { type: discard }
`

// TestCheckpointPluginOperatorState: plugins/running-count numbers the
// records of its subtask in operator state (sluice_snapshot). The job
// (source, count and sink chained, two subtasks) is checkpointed and
// restored at 1, 2 and 3 subtasks: new subtask j starts counting after the
// counts of the old subtasks dealt to it round robin (old i goes to
// i mod the new parallelism), and the last counts add up to every record.
func TestCheckpointPluginOperatorState(t *testing.T) {
	countOf := func(v []byte) int64 {
		raw, ok, err := abi.MapField(v, "count")
		if !ok || err != nil {
			t.Fatalf("no count in %x: %v", v, err)
		}
		n, err := abi.ReadInt(raw)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, p := range []int{2, 1, 3} {
		t.Run(fmt.Sprintf("restored-at-%d", p), func(t *testing.T) {
			first, second := checkpointThenRestoreRuns(t, operatorStateJob, 500, p, "src", "count", "out")
			restored := make([]int64, p) // what each new subtask starts from
			var total int64
			for old := 0; old < 2; old++ {
				got := first.got[old][:first.marks[1][old]]
				for i, v := range got {
					if n := countOf(v); n != int64(i+1) {
						t.Fatalf("first run, subtask %d: record %d has count %d", old, i+1, n)
					}
				}
				restored[old%p] += int64(len(got))
				total += int64(len(got))
			}
			for sub := 0; sub < p; sub++ {
				got := second.got[sub]
				if len(got) == 0 {
					t.Fatalf("restored subtask %d got no records", sub)
				}
				for i, v := range got {
					if n, want := countOf(v), restored[sub]+int64(i+1); n != want {
						t.Fatalf("restored at %d, subtask %d: record %d has count %d, want %d (restored %v)", p, sub, i+1, n, want, restored)
					}
				}
				total += int64(len(got))
			}
			if total != 20000 {
				t.Fatalf("%d records committed and emitted after the restore, want 20000", total)
			}
		})
	}
}
