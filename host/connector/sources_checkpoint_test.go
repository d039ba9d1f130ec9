package connector

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

var _ runtime.CheckpointedSource = (*generatorSource)(nil)

// genRun runs generator subtasks at parallelism p, restored from union
// (none: a fresh start); subtask i stops after stops[i] batches (-1: runs
// to the end). It returns the sequence numbers each emitted and the union
// state of all of them at their stops.
func genRun(t *testing.T, opts map[string]any, p int, union [][]byte, stops []int) (seqs []int64, state [][]byte) {
	t.Helper()
	for i := 0; i < p; i++ {
		g, err := newGenerator(newOptions("source", "gen", &pipeline.Connector{Type: "generator", Options: opts}), i, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.RestoreState(checkpoint.Restore{Union: union}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		c := &collector{t: t, onEmit: func(c *collector) {
			if c.batches == stops[i] {
				cancel()
			}
		}}
		err = g.Run(ctx, c)
		cancel()
		if stops[i] >= 0 && !errors.Is(err, context.Canceled) || stops[i] < 0 && err != nil {
			t.Fatalf("p %d subtask %d: Run: %v", p, i, err)
		}
		if stops[i] < 0 && g.Total() != int64(len(c.records)) {
			t.Errorf("p %d subtask %d: Total %d, emitted %d", p, i, g.Total(), len(c.records))
		}
		for _, r := range c.records {
			raw, _, _ := abi.MapField(r.value, "n")
			n, _ := abi.ReadInt(raw)
			seqs = append(seqs, n)
		}
		split, u, err := g.SnapshotState(1)
		if err != nil || len(split) != 0 {
			t.Fatalf("snapshot: %v %d split", err, len(split))
		}
		state = append(state, u...)
	}
	return seqs, state
}

// TestGeneratorRestoreRescaled: a generator snapshotted at parallelism 2
// (its subtasks at different positions), restored at 3 and snapshotted
// again, then restored at 1 and run to the end, produces every record of
// an uninterrupted run exactly once. Restored at the same parallelism,
// each subtask takes back its own streams.
func TestGeneratorRestoreRescaled(t *testing.T) {
	const count = 20_000
	opts := map[string]any{"preset": "sequence", "count": count}
	seen := make([]int, count)
	add := func(seqs []int64) {
		for _, n := range seqs {
			seen[n]++
		}
	}
	a, state := genRun(t, opts, 2, nil, []int{3, 7})
	add(a)
	b, state := genRun(t, opts, 3, state, []int{1, 4, 2})
	add(b)
	c, state := genRun(t, opts, 3, state, []int{2, 1, 5}) // same parallelism: each keeps its streams
	add(c)
	d, _ := genRun(t, opts, 1, state, []int{-1})
	add(d)
	for n, k := range seen {
		if k != 1 {
			t.Fatalf("record %d emitted %d times (of %d emitted)", n, k, len(a)+len(b)+len(c)+len(d))
		}
	}
	// an unbounded generator too: three restored subtasks share the rest
	opts = map[string]any{"preset": "sequence"}
	_, state = genRun(t, opts, 2, nil, []int{2, 5})
	e, _ := genRun(t, opts, 3, state, []int{3, 3, 3})
	dup := map[int64]bool{}
	for _, n := range e {
		if dup[n] || n < 2*maxBatchRecords*2 && n%2 == 0 || n < 5*maxBatchRecords*2 && n%2 == 1 {
			t.Fatalf("record %d came again after the restore", n)
		}
		dup[n] = true
	}
}

func TestGeneratorRestoreRefuses(t *testing.T) {
	g, err := newGenerator(newOptions("source", "gen", &pipeline.Connector{Type: "generator", Options: map[string]any{"preset": "sequence"}}), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		r    checkpoint.Restore
		want string
	}{
		{checkpoint.Restore{Split: [][]byte{{1}}}, "1 split elements"},
		{checkpoint.Restore{Union: [][]byte{{9, 0, 1, 0, 1, 0}}}, "position 1 of the checkpoint: not a generator position of version 1"},
		{checkpoint.Restore{Union: [][]byte{{1, 0, 1}}}, "truncated"},
		{checkpoint.Restore{Union: [][]byte{{1, 0, 1, 0, 0, 0}}}, "malformed"},
	} {
		if err := g.RestoreState(tc.r); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.r, err, tc.want)
		}
	}
}

var _ runtime.CheckpointedSource = (*elementsSource)(nil)

// TestElementsRestore: an elements source snapshotted after its first
// batch and restored emits the rest, each value once; a position past the
// values (they changed) is refused.
func TestElementsRestore(t *testing.T) {
	values := make([]any, 1000)
	for i := range values {
		values[i] = i
	}
	spec := sourceSpec("el", "elements", map[string]any{"values": values})
	src, err := (&Builtin{}).Source(spec, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := &collector{t: t, onEmit: func(*collector) { cancel() }}
	if err := src.Run(ctx, first); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	split, _, err := src.(runtime.CheckpointedSource).SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	again, err := (&Builtin{}).Source(spec, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := again.(runtime.CheckpointedSource).RestoreState(checkpoint.Restore{Split: split}); err != nil {
		t.Fatal(err)
	}
	if again.Total() != int64(1000-len(first.records)) {
		t.Errorf("Total after the restore %d, want %d", again.Total(), 1000-len(first.records))
	}
	rest := &collector{t: t}
	if err := again.Run(context.Background(), rest); err != nil {
		t.Fatal(err)
	}
	got := append(first.jsons(), rest.jsons()...)
	if len(first.records) == 0 || len(got) != 1000 {
		t.Fatalf("%d then %d records", len(first.records), len(rest.records))
	}
	for i, j := range got {
		if j != fmt.Sprint(i) {
			t.Fatalf("record %d is %s", i, j)
		}
	}
	short, _ := (&Builtin{}).Source(sourceSpec("el", "elements", map[string]any{"values": values[:10]}), 0, 1)
	if err := short.(runtime.CheckpointedSource).RestoreState(checkpoint.Restore{Split: split}); err == nil || !strings.Contains(err.Error(), "did the values change") {
		t.Fatalf("a position past the values: %v", err)
	}
}
