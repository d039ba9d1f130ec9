package pebblestate_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/state/pebblestate"
	"github.com/sluicehq/sluice/partition"
	"github.com/vmihailenco/msgpack/v5"
)

// nativeCheckpoint takes checkpoint id of st (subtask sub of p) in its
// native format and publishes it under storage.
func nativeCheckpoint(t *testing.T, storage string, id checkpoint.ID, p int, stores []*pebblestate.Store) *checkpoint.Reader {
	t.Helper()
	w, err := checkpoint.CreateCheckpoint(storage, "job", id)
	if err != nil {
		t.Fatal(err)
	}
	var files []checkpoint.SubtaskFile
	for sub, st := range stores {
		ns, err := st.NativeCheckpoint(id)
		if err != nil {
			t.Fatal(err)
		}
		f, err := w.Write(checkpoint.SubtaskState{Operator: "agg", Subtask: sub, Parallelism: p, MaxParallelism: 128, Native: ns})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(ns.Dir); !os.IsNotExist(err) {
			t.Fatalf("the local checkpoint %s is still there after the copy: %v", ns.Dir, err)
		}
		files = append(files, f)
	}
	if err := w.Publish(time.Now(), files); err != nil {
		t.Fatal(err)
	}
	r, err := checkpoint.Open(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	return r
}

func key(i int) []byte { b, _ := msgpack.Marshal(fmt.Sprintf("k%06d", i)); return b }

// canonical is every entry of stores, by key group, in the canonical
// format.
func canonical(t *testing.T, stores ...*pebblestate.Store) map[int][]byte {
	out := map[int][]byte{}
	for _, st := range stores {
		first, groups, err := st.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range groups {
			if len(g) > 0 {
				out[first+i] = g
			}
		}
	}
	return out
}

// TestNativeCheckpointIncremental: a Pebble checkpoint goes into the
// storage as its files; the next one copies only the sstables written
// since and lists the others it shares; retain 1 removes the first
// checkpoint and only the shared files no checkpoint left uses; the kept
// one restores at parallelism 1 (the database as it is), 3 and 2 (clipped
// ranges) to exactly the state snapshotted.
func TestNativeCheckpointIncremental(t *testing.T) {
	storage := t.TempDir()
	st := pebbleWith(t, 128, 0, 127, 0)
	val := bytes.Repeat([]byte("v"), 100)
	for i := range 20000 {
		if err := st.Put(i%3, key(i), val); err != nil {
			t.Fatal(err)
		}
	}
	r1 := nativeCheckpoint(t, storage, 1, 1, []*pebblestate.Store{st})
	n1 := r1.Meta.Operators[0].Subtasks[0].Native
	var total int64
	for _, f := range n1.Files {
		total += f.Size
	}
	if n1.Copied != total || total == 0 {
		t.Fatalf("the first checkpoint copied %d bytes of %d", n1.Copied, total)
	}
	for i := range 50 {
		if err := st.Put(0, key(100000+i), val); err != nil {
			t.Fatal(err)
		}
	}
	r2 := nativeCheckpoint(t, storage, 2, 1, []*pebblestate.Store{st})
	n2 := r2.Meta.Operators[0].Subtasks[0].Native
	var total2, reused int64
	stored1 := map[string]bool{}
	for _, f := range n1.Files {
		stored1[f.Stored] = f.Shared
	}
	for _, f := range n2.Files {
		total2 += f.Size
		if f.Shared && stored1[f.Stored] {
			reused += f.Size
		}
	}
	if reused == 0 || n2.Copied > total2/2 || n2.Copied+reused != total2 {
		t.Fatalf("the second checkpoint copied %d bytes of %d, reusing %d", n2.Copied, total2, reused)
	}
	t.Logf("checkpoint 1 copied %d bytes; checkpoint 2 copied %d of %d", n1.Copied, n2.Copied, total2)

	// retain 1: chk-1 goes, and the shared files only it used
	jobDir := checkpoint.JobDir(storage, "job")
	if removed, err := checkpoint.Retain(jobDir, 1); err != nil || len(removed) != 1 {
		t.Fatalf("retain 1: %v %v", removed, err)
	}
	var want []string
	for _, f := range n2.Files {
		if f.Shared {
			want = append(want, f.Stored)
		}
	}
	ents, _ := os.ReadDir(checkpoint.SharedDir(jobDir))
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("shared files after retain 1: %v, checkpoint 2 uses %v", got, want)
	}
	r2, err := checkpoint.Open(r2.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Verify(); err != nil {
		t.Fatalf("checkpoint 2 after retain: %v", err)
	}

	wantState := canonical(t, st)
	for _, p := range []int{1, 3, 2} {
		var restored []*pebblestate.Store
		for sub := range p {
			start, end := partition.KeyGroupRange(128, p, sub)
			rs, err := r2.Restore("agg", sub, p, 128)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs.Native) == 0 {
				t.Fatalf("p %d subtask %d: no native state to restore", p, sub)
			}
			ns := pebbleWith(t, 128, start, end, 0)
			if err := ns.RestoreNative(rs.Native, rs.KeyGroups); err != nil {
				t.Fatal(err)
			}
			restored = append(restored, ns)
		}
		gotState := canonical(t, restored...)
		if len(gotState) != len(wantState) {
			t.Fatalf("p %d: %d key groups restored, %d snapshotted", p, len(gotState), len(wantState))
		}
		for kg, b := range wantState {
			if !bytes.Equal(gotState[kg], b) {
				t.Fatalf("p %d: key group %d differs after the restore", p, kg)
			}
		}
		// a checkpoint of a restored store shares the files it came
		// from (those Pebble has not compacted since)
		if p == 1 {
			r3 := nativeCheckpoint(t, storage, checkpoint.ID(3), 1, restored)
			n3 := r3.Meta.Operators[0].Subtasks[0].Native
			in2 := map[string]bool{}
			for _, f := range n2.Files {
				in2[f.Stored] = f.Shared
			}
			var fresh int64
			for _, f := range n3.Files {
				if !f.Shared || !in2[f.Stored] {
					fresh += f.Size
				}
			}
			if n3.Copied != fresh {
				t.Fatalf("a checkpoint after a restore copied %d bytes, %d of its files are not checkpoint 2's", n3.Copied, fresh)
			}
		}
		for _, s := range restored {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(r2.Path, "agg-0.refs")); err != nil {
		t.Fatal(err)
	}
}

// TestNativeSavepointRefused: a savepoint is canonical only.
func TestNativeSavepointRefused(t *testing.T) {
	st := pebbleWith(t, 128, 0, 127, 0)
	ns, err := st.NativeCheckpoint(1)
	if err != nil {
		t.Fatal(err)
	}
	w, err := checkpoint.CreateSavepoint(t.TempDir(), "job", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(checkpoint.SubtaskState{Operator: "agg", Parallelism: 1, MaxParallelism: 128, Native: ns}); err == nil {
		t.Fatal("a savepoint took native state")
	}
}

// TestNativeRestoredFilesShared: a database restored from a checkpoint
// keeps its sstables' stored names: the next checkpoint copies none of
// them again.
func TestNativeRestoredFilesShared(t *testing.T) {
	storage := t.TempDir()
	st := pebbleWith(t, 128, 0, 127, 0)
	for i := range 1000 {
		if err := st.Put(0, key(i), []byte("value")); err != nil {
			t.Fatal(err)
		}
	}
	r1 := nativeCheckpoint(t, storage, 1, 1, []*pebblestate.Store{st})
	rs, err := r1.Restore("agg", 0, 1, 128)
	if err != nil {
		t.Fatal(err)
	}
	back := pebbleWith(t, 128, 0, 127, 0)
	if err := back.RestoreNative(rs.Native, nil); err != nil {
		t.Fatal(err)
	}
	r2 := nativeCheckpoint(t, storage, 2, 1, []*pebblestate.Store{back})
	n1, n2 := r1.Meta.Operators[0].Subtasks[0].Native, r2.Meta.Operators[0].Subtasks[0].Native
	var shared1, shared2 []string
	var private int64
	for _, f := range n1.Files {
		if f.Shared {
			shared1 = append(shared1, f.Stored)
		}
	}
	for _, f := range n2.Files {
		if f.Shared {
			shared2 = append(shared2, f.Stored)
		} else {
			private += f.Size
		}
	}
	if len(shared1) == 0 || !slices.Equal(shared1, shared2) || n2.Copied != private {
		t.Fatalf("checkpoint 1 shares %v, checkpoint 2 after a restore %v and copied %d bytes (%d private)", shared1, shared2, n2.Copied, private)
	}
	if a, b := canonical(t, st), canonical(t, back); len(a) == 0 || !maps.EqualFunc(a, b, bytes.Equal) {
		t.Fatal("the restored database differs")
	}
}
