package runtime

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/partition"
)

// writeIncremental writes checkpoint id of the stores through
// checkpoint.Writer, each incrementally when it can (SnapshotCheckpoint),
// publishes it and tells the stores it completed.
func writeIncremental(t *testing.T, storage string, id checkpoint.ID, op string, maxP int, stores []*KeyedStore) *checkpoint.Reader {
	t.Helper()
	w, err := checkpoint.CreateCheckpoint(storage, "job", id)
	if err != nil {
		t.Fatal(err)
	}
	var files []checkpoint.SubtaskFile
	for i, st := range stores {
		first, groups, changes, base := st.SnapshotCheckpoint(id)
		f, err := w.Write(checkpoint.SubtaskState{Operator: op, Subtask: i, Parallelism: len(stores), MaxParallelism: maxP,
			FirstKeyGroup: first, KeyGroups: groups, Changes: changes, Base: base})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := w.Publish(time.Unix(0, 0), files); err != nil {
		t.Fatal(err)
	}
	for _, st := range stores {
		st.CheckpointComplete(id)
	}
	r, err := checkpoint.Open(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// restoreChains makes the stores of p subtasks from r, merging chains as
// the engine's restoreOp does.
func restoreChains(t *testing.T, r *checkpoint.Reader, op string, maxP, p int) []*KeyedStore {
	t.Helper()
	stores := make([]*KeyedStore, p)
	for i := range stores {
		start, end := partition.KeyGroupRange(maxP, p, i)
		stores[i] = NewKeyedStore(maxP, start, end)
		rs, err := r.Restore(op, i, p, maxP)
		if err != nil {
			t.Fatal(err)
		}
		if rs.KeyGroups == nil {
			rs.KeyGroups = map[int][]byte{}
		}
		for kg, ds := range rs.Deltas {
			if rs.KeyGroups[kg], err = MergeKeyGroupChain(rs.KeyGroups[kg], ds); err != nil {
				t.Fatal(err)
			}
		}
		if err := stores[i].RestoreKeyGroups(rs.KeyGroups); err != nil {
			t.Fatal(err)
		}
	}
	return stores
}

// TestIncrementalCheckpoints: two subtasks' stores (max parallelism 128)
// over 1000 keys in three slots take twelve checkpoints, each after puts,
// overwrites and deletes of about 10 % of the keys (an aggregation's
// in-place cells among them), with retain 1 applied after each. Every
// checkpoint restores at parallelisms 1, 2 and 3 to exactly the model;
// the incremental ones write a fraction of the full one's bytes; no chain
// grows past its bound; and the restored key groups hold what the live
// ones do. (Their order may differ where a key absent from a base was
// stored again: it goes last, as after a restore from a full snapshot.)
func TestIncrementalCheckpoints(t *testing.T) {
	const maxP, nKeys = 128, 1000
	storage := t.TempDir()
	stores := []*KeyedStore{NewKeyedStore(maxP, 0, 63), NewKeyedStore(maxP, 64, 127)}
	for _, st := range stores {
		st.SetTracking(true)
	}
	rng := rand.New(rand.NewPCG(7, 31))
	model := map[[2]string]string{}
	keys := make([][]byte, nKeys)
	for i := range keys {
		keys[i] = strKey(fmt.Sprintf("k%d", i))
	}
	write := func(i int, id checkpoint.ID) {
		key := keys[i]
		st := ownerOf(t, stores, maxP, key)
		switch op := rng.IntN(10); {
		case op < 6:
			slot := 1 + rng.IntN(2)
			v := fmt.Sprintf("v%d-%d-%d", slot, i, id)
			if err := st.Put(slot, key, []byte(v)); err != nil {
				t.Fatal(err)
			}
			model[[2]string{fmt.Sprint(slot), string(key)}] = v
		case op < 8:
			slot := 1 + rng.IntN(2)
			if err := st.Delete(slot, key); err != nil {
				t.Fatal(err)
			}
			delete(model, [2]string{fmt.Sprint(slot), string(key)})
		default: // an aggregation's cell, changed in place
			v := fmt.Sprintf("agg%05d", id)
			if c := st.lookup(0, key); c != nil {
				st.touch(c)
				copy(c.val, v)
			} else {
				kg, _ := st.KeyGroup(key)
				st.insert(kg, 0, key, []byte(v))
			}
			model[[2]string{"0", string(key)}] = v
		}
	}
	var sizes []int64
	for id := checkpoint.ID(1); id <= 12; id++ {
		if id == 1 {
			for i := range keys {
				write(i, id)
				write(i, id)
			}
		} else {
			for range nKeys / 10 {
				write(rng.IntN(nKeys), id)
			}
		}
		r := writeIncremental(t, storage, id, "op", maxP, stores)
		om, _ := r.Operator("op")
		sizes = append(sizes, om.Size())
		for _, s := range om.Subtasks {
			if id == 1 && s.Chains != nil {
				t.Fatal("the first checkpoint is not full")
			}
			if id > 1 && s.Chains == nil {
				t.Fatalf("checkpoint %d is not incremental", id)
			}
			for k, ch := range s.Chains {
				if len(ch) > maxDeltas+1 {
					t.Fatalf("checkpoint %d key group %d: a chain of %d links", id, s.FirstKeyGroup+k, len(ch))
				}
			}
		}
		if _, err := checkpoint.Retain(checkpoint.JobDir(storage, "job"), 1); err != nil {
			t.Fatal(err)
		}
		r, skipped, err := checkpoint.Latest(checkpoint.JobDir(storage, "job"))
		if err != nil || len(skipped) > 0 || r.Meta.ID != id {
			t.Fatalf("after checkpoint %d: Latest %v %v %v", id, r, skipped, err)
		}
		for _, p := range []int{1, 2, 3} {
			restored := restoreChains(t, r, "op", maxP, p)
			n := 0
			for _, key := range keys {
				st := ownerOf(t, restored, maxP, key)
				for slot := range 3 {
					v, ok, err := st.Get(slot, key, nil)
					if err != nil {
						t.Fatal(err)
					}
					want, wok := model[[2]string{fmt.Sprint(slot), string(key)}]
					if ok != wok || string(v) != want {
						t.Fatalf("checkpoint %d at p %d: slot %d key %s: %q %v, want %q %v", id, p, slot, key, v, ok, want, wok)
					}
					if ok {
						n++
					}
				}
			}
			if n != len(model) {
				t.Fatalf("%d values, want %d", n, len(model))
			}
			if p == 2 { // the same key groups, holding what the live ones do
				for i := range restored {
					_, got := restored[i].SnapshotKeyGroups()
					_, want := stores[i].SnapshotKeyGroups()
					for k := range got {
						if g, w := entrySet(t, got[k]), entrySet(t, want[k]); g != w {
							t.Fatalf("checkpoint %d subtask %d key group %d: restored %s, live %s", id, i, k, g, w)
						}
					}
				}
			}
		}
	}
	for i, n := range sizes[1:] {
		if n*3 > sizes[0] {
			t.Fatalf("checkpoint %d wrote %d bytes, the full one %d: sizes %v", i+2, n, sizes[0], sizes)
		}
	}
	t.Logf("bytes written per checkpoint: %v", sizes)
}

// A checkpoint that did not complete (aborted, or not yet confirmed) is
// no base: the next snapshot is full; a savepoint is full and leaves the
// tracking alone.
func TestIncrementalNeedsACompletedBase(t *testing.T) {
	st := NewKeyedStore(128, 0, 127)
	st.SetTracking(true)
	put := func(k string) {
		if err := st.Put(1, strKey(k), []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	put("a")
	if _, _, ch, base := st.SnapshotCheckpoint(1); ch != nil || base != 0 {
		t.Fatal("the first snapshot is incremental")
	}
	put("b")
	if _, _, ch, base := st.SnapshotCheckpoint(2); ch != nil || base != 0 {
		t.Fatal("incremental on checkpoint 1, which never completed")
	}
	st.CheckpointComplete(2)
	put("c")
	_, _, ch, base := st.SnapshotCheckpoint(3)
	if ch == nil || base != 2 {
		t.Fatalf("not incremental on the completed checkpoint 2: base %d", base)
	}
	st.CheckpointAborted(3)
	if _, _, ch, base := st.SnapshotCheckpoint(4); ch != nil || base != 0 {
		t.Fatal("incremental on the aborted checkpoint 3")
	}
	st.CheckpointComplete(4)
	put("d")
	st.SnapshotKeyGroups() // a savepoint's
	_, groups, ch, base := st.SnapshotCheckpoint(5)
	if base != 4 {
		t.Fatalf("base %d", base)
	}
	kg, _ := st.KeyGroup(strKey("d"))
	changed := 0
	for i, c := range ch {
		if c != checkpoint.ChangeSame {
			changed++
			if i != kg || len(groups[i]) == 0 {
				t.Fatalf("key group %d changed, only %d should have", i, kg)
			}
		}
	}
	if changed != 1 {
		t.Fatalf("%d key groups changed", changed)
	}
	off := NewKeyedStore(128, 0, 127)
	if off.Put(1, strKey("x"), nil) != nil || len(off.inc.cells) != 0 {
		t.Fatal("tracking while off")
	}
}

func TestMergeKeyGroupChain(t *testing.T) {
	base := AppendKeyGroupEntry(AppendKeyGroupEntry(AppendKeyGroupEntry(nil, 0, []byte("a"), []byte("1")), 1, []byte("b"), []byte("2")), 1, []byte("c"), []byte("3"))
	st := NewKeyedStore(128, 0, 127)
	d1 := st.appendDelta(nil, &cell{key: "a", val: []byte("1b"), slot: 0})
	d1 = st.appendDelta(d1, &cell{key: "b", dead: true, slot: 1})
	d1 = st.appendDelta(d1, &cell{key: "z", val: []byte("0"), slot: 0})
	d2 := st.appendDelta(nil, &cell{key: "b", val: []byte("2c"), slot: 1})
	got, err := MergeKeyGroupChain(base, [][]byte{d1, d2})
	if err != nil {
		t.Fatal(err)
	}
	want := AppendKeyGroupEntry(AppendKeyGroupEntry(AppendKeyGroupEntry(AppendKeyGroupEntry(nil,
		0, []byte("a"), []byte("1b")), 0, []byte("z"), []byte("0")), 1, []byte("b"), []byte("2c")), 1, []byte("c"), []byte("3"))
	if !bytes.Equal(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	if _, err := MergeKeyGroupChain(base, [][]byte{{0x02, 0x05, 'x'}}); err == nil {
		t.Fatal("a truncated delta merged")
	}
}

// entrySet is a key group's entries, sorted, as text.
func entrySet(t *testing.T, b []byte) string {
	var es []string
	if err := ScanKeyGroupEntries(b, func(_, slot int, key, val []byte) error {
		es = append(es, fmt.Sprintf("%d/%q=%q", slot, key, val))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(es)
	return strings.Join(es, " ")
}

// A changed value the snapshot filter drops (TTL: expired) goes into the
// delta as a tombstone, and the merged chain holds it no more.
func TestIncrementalFilteredIsTombstone(t *testing.T) {
	st := NewKeyedStore(128, 0, 127)
	st.SetTracking(true)
	st.SetSnapshotFilter(1, func(v []byte) ([]byte, bool) { return v, string(v) != "expired" })
	a, b := strKey("a"), strKey("b")
	for _, k := range [][]byte{a, b} {
		if err := st.Put(1, k, []byte("live")); err != nil {
			t.Fatal(err)
		}
	}
	_, full, _, _ := st.SnapshotCheckpoint(1)
	st.CheckpointComplete(1)
	if err := st.Put(1, a, []byte("expired")); err != nil {
		t.Fatal(err)
	}
	_, groups, ch, base := st.SnapshotCheckpoint(2)
	kg, _ := st.KeyGroup(a)
	if base != 1 || ch[kg] != checkpoint.ChangeDelta {
		t.Fatalf("base %d, change %d", base, ch[kg])
	}
	merged, err := MergeKeyGroupChain(full[kg], [][]byte{groups[kg]})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(merged), "expired") || strings.Contains(entrySet(t, merged), `"\xa1a"`) {
		t.Fatalf("the expired value survived: %s", entrySet(t, merged))
	}
}

// A cell carries its key group, slot and dirty flag in what was padding.
func TestCellSize(t *testing.T) {
	if n := unsafe.Sizeof(cell{}); n != 48 {
		t.Fatalf("a cell is %d bytes, want 48", n)
	}
}
