package langtest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// stateLangs are the languages plugins/running-count is written in: all.
var stateLangs = append([]string{"go"}, languages...)

// TestOperatorStateEveryLanguage runs plugins/running-count in each
// language through the real host: three records, a snapshot, a fresh
// instance restored from it (from each language's snapshot: the element is
// the same msgpack bin in every one) counting on from 3; then a rescale's
// merge, two snapshots restored into one instance.
func TestOperatorStateEveryLanguage(t *testing.T) {
	root := repoRoot(t)
	h := newHost(t)
	open := func(t *testing.T, lang string) runtime.Snapshotter {
		t.Helper()
		m := load(t, h, modulePath(root, "running-count", lang))
		s := &plugin.Set{Modules: map[string]*plugin.Module{"count": m}, Context: context.Background()}
		op, err := s.Operator("count", "count", 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := op.Open(&runtime.OpenContext{Operator: "count", Parallelism: 1, MaxParallelism: 128, Kind: "map"}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { op.Close(nil) })
		sn, ok := op.(runtime.Snapshotter)
		if !ok {
			t.Fatalf("%s: the operator (%T) is no runtime.Snapshotter", lang, op)
		}
		return sn
	}
	counts := func(t *testing.T, sn runtime.Snapshotter, n int) []int64 {
		t.Helper()
		var recs []rec
		for i := 0; i < n; i++ {
			recs = append(recs, rec{nil, nil, obj{"id", i}})
		}
		b, c := batchOf(recs...)
		out := &collector{out: map[int]*abi.Writer{}}
		if err := sn.(runtime.Operator).Process(0, b, c, out); err != nil {
			t.Fatal(err)
		}
		var got []int64
		r := abi.NewReader(out.out[0].Buf, out.out[0].Count)
		for r.Next() {
			raw, ok, err := abi.MapField(r.Record().Value, "count")
			if !ok || err != nil {
				t.Fatalf("no count in an output record: %v", err)
			}
			v, err := abi.ReadInt(raw)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		return got
	}
	want := func(t *testing.T, got []int64, want ...int64) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("counts %v, want %v", got, want)
		}
	}
	snaps := map[string]checkpoint.SubtaskState{}
	for _, lang := range stateLangs {
		t.Run(lang+"/snapshot", func(t *testing.T) {
			a := open(t, lang)
			want(t, counts(t, a, 3), 1, 2, 3)
			st, err := a.SnapshotState(1)
			if err != nil {
				t.Fatal(err)
			}
			wantElem := []byte{0xc4, 8, 3, 0, 0, 0, 0, 0, 0, 0}
			if len(st.Split) != 1 || string(st.Split[0]) != string(wantElem) {
				t.Fatalf("snapshot %x, want one element %x", st.Split, wantElem)
			}
			want(t, counts(t, a, 1), 4) // the snapshot changed nothing
			snaps[lang] = st
		})
	}
	for _, lang := range stateLangs {
		for from, st := range snaps {
			t.Run(fmt.Sprintf("%s/restore-from-%s", lang, from), func(t *testing.T) {
				b := open(t, lang)
				if err := b.RestoreState(checkpoint.Restore{Split: st.Split}); err != nil {
					t.Fatal(err)
				}
				want(t, counts(t, b, 2), 4, 5)
			})
		}
		t.Run(lang+"/restore-merge", func(t *testing.T) {
			c := open(t, lang)
			seven := []byte{0xc4, 8, 7, 0, 0, 0, 0, 0, 0, 0}
			if err := c.RestoreState(checkpoint.Restore{Split: [][]byte{snaps["go"].Split[0], seven}}); err != nil {
				t.Fatal(err)
			}
			want(t, counts(t, c, 1), 11)
		})
	}
}

// A Go plugin that declares no operator state exports the calls all the
// same (the SDK's exports are fixed) and answers them unsupported: the
// host snapshots nothing for it and refuses to restore elements into it.
func TestGoPluginWithoutOperatorState(t *testing.T) {
	root := repoRoot(t)
	h := newHost(t)
	s := &plugin.Set{Modules: map[string]*plugin.Module{"valid": load(t, h, modulePath(root, "valid", "go"))}}
	op, err := s.Operator("valid", "valid", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(&runtime.OpenContext{Operator: "valid", Parallelism: 1, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	defer op.Close(nil)
	sn, ok := op.(runtime.Snapshotter)
	if !ok {
		t.Fatalf("the operator (%T) of a Go plugin is no runtime.Snapshotter: build the plugins again (make go-plugins)", op)
	}
	if _, err := sn.SnapshotState(1); !errors.Is(err, runtime.ErrNoOperatorState) {
		t.Fatalf("snapshot: %v, want runtime.ErrNoOperatorState", err)
	}
	err = sn.RestoreState(checkpoint.Restore{Split: [][]byte{{0xc4, 0}}})
	want := `element 1 of 1: the checkpoint holds operator state for the plugin, whose operator keeps none now: plugin "valid" (operator valid, subtask 1/1) export sluice_restore: plugin returned status -4 (unsupported): the operator declares no operator state (sdk.Operator.State)`
	if err == nil || err.Error() != want {
		t.Fatalf("restore: %v\nwant: %s", err, want)
	}
}
