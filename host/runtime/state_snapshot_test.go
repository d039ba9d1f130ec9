package runtime

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/partition"
)

// snapshotStores writes the keyed state of every subtask of operator op
// into checkpoint id under dir through checkpoint.Writer and opens it.
func snapshotStores(t *testing.T, dir string, id checkpoint.ID, op string, maxP int, stores []*KeyedStore) *checkpoint.Reader {
	t.Helper()
	w, err := checkpoint.CreateCheckpoint(dir, "job", id)
	if err != nil {
		t.Fatal(err)
	}
	var files []checkpoint.SubtaskFile
	for i, st := range stores {
		first, groups := st.SnapshotKeyGroups()
		f, err := w.Write(checkpoint.SubtaskState{Operator: op, Subtask: i, Parallelism: len(stores), MaxParallelism: maxP, FirstKeyGroup: first, KeyGroups: groups})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := w.Publish(time.Unix(0, 0), files); err != nil {
		t.Fatal(err)
	}
	r, err := checkpoint.Open(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// restoreStores makes the stores of p subtasks from r.
func restoreStores(t *testing.T, r *checkpoint.Reader, op string, maxP, p int) []*KeyedStore {
	t.Helper()
	stores := make([]*KeyedStore, p)
	for i := range stores {
		start, end := partition.KeyGroupRange(maxP, p, i)
		stores[i] = NewKeyedStore(maxP, start, end)
		rs, err := r.Restore(op, i, p, maxP)
		if err != nil {
			t.Fatal(err)
		}
		if err := stores[i].RestoreKeyGroups(rs.KeyGroups); err != nil {
			t.Fatal(err)
		}
	}
	return stores
}

func ownerOf(t *testing.T, stores []*KeyedStore, maxP int, key []byte) *KeyedStore {
	h, err := abi.KeyHash(key)
	if err != nil {
		t.Fatal(err)
	}
	return stores[partition.OperatorIndexForKeyGroup(maxP, len(stores), partition.KeyGroup(h, maxP))]
}

// TestKeyedStoreSnapshotRescale writes keyed state of an aggregation's kind
// (slot 0, cells made by insert) and of a plugin's (slots 1 and 3, Put and
// Delete) at parallelism 2, restores it at 3 and that at 1: every key's
// value is right in every slot, deleted keys stay deleted, and each key
// group lists its keys in the order they were first stored.
func TestKeyedStoreSnapshotRescale(t *testing.T) {
	const maxP = 128
	dir := t.TempDir()
	stores := []*KeyedStore{NewKeyedStore(maxP, 0, 63), NewKeyedStore(maxP, 64, 127)}
	want := map[[2]string]string{} // (slot, key) -> value
	var keys [][]byte
	for i := 0; i < 500; i++ {
		key := strKey(fmt.Sprintf("k%d", i))
		if i%7 == 0 {
			key = abi.AppendInt(nil, int64(i)) // keys of another type too
		}
		keys = append(keys, key)
		st := ownerOf(t, stores, maxP, key)
		kg, err := st.KeyGroup(key)
		if err != nil {
			t.Fatal(err)
		}
		agg := fmt.Sprintf("agg-%d", i)
		st.insert(kg, 0, key, []byte(agg))
		want[[2]string{"0", string(key)}] = agg
		if err := st.Put(1, key, []byte(fmt.Sprintf("p1-%d", i))); err != nil {
			t.Fatal(err)
		}
		want[[2]string{"1", string(key)}] = fmt.Sprintf("p1-%d", i)
		if i%3 == 0 {
			val := strings.Repeat("x", i)
			if err := st.Put(3, key, []byte(val)); err != nil {
				t.Fatal(err)
			}
			want[[2]string{"3", string(key)}] = val
		}
	}
	for i, key := range keys {
		if i%5 == 0 { // deleted: gone after the restore
			if err := ownerOf(t, stores, maxP, key).Delete(1, key); err != nil {
				t.Fatal(err)
			}
			delete(want, [2]string{"1", string(key)})
		}
	}
	check := func(stores []*KeyedStore) {
		t.Helper()
		for _, key := range keys {
			st := ownerOf(t, stores, maxP, key)
			for _, slot := range []int{0, 1, 2, 3} {
				v, ok, err := st.Get(slot, key, nil)
				if err != nil {
					t.Fatal(err)
				}
				w, has := want[[2]string{fmt.Sprint(slot), string(key)}]
				if ok != has || string(v) != w {
					t.Fatalf("slot %d key %s: got %q %v, want %q %v", slot, preview(key), v, ok, w, has)
				}
			}
		}
		n := 0
		for _, st := range stores {
			n += st.Len(0)
			// first-stored order within each key group: the order of keys
			for kg := st.start; kg <= st.end; kg++ {
				last := -1
				st.Range(kg, 1, func(key string, _ []byte) bool {
					i := indexOf(keys, key)
					if i < last {
						t.Fatalf("key group %d out of first-stored order", kg)
					}
					last = i
					return true
				})
			}
		}
		if n != len(keys) {
			t.Fatalf("%d keys in slot 0, want %d", n, len(keys))
		}
	}
	check(stores)
	r := snapshotStores(t, dir, 1, "sum", maxP, stores)
	three := restoreStores(t, r, "sum", maxP, 3)
	check(three)
	// the restored store works on: updates and new keys, then another rescale
	key := keys[1]
	if err := ownerOf(t, three, maxP, key).Put(1, key, []byte("changed")); err != nil {
		t.Fatal(err)
	}
	want[[2]string{"1", string(key)}] = "changed"
	r = snapshotStores(t, dir, 2, "sum", maxP, three)
	one := restoreStores(t, r, "sum", maxP, 1)
	check(one)
}

func TestKeyedStoreRestoreRefuses(t *testing.T) {
	st := NewKeyedStore(128, 0, 63)
	if err := st.RestoreKeyGroups(map[int][]byte{64: nil}); err == nil || !strings.Contains(err.Error(), "outside this subtask's range [0, 63]") {
		t.Fatalf("a key group of another subtask: %v", err)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated value", []byte{0, 1, 0xa1, 5, 'x'}, "value: 5 bytes, 1 left"},
		{"bad slot", []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 1, 0xa1, 0}, "slot"},
		{"duplicate", []byte{0, 1, 0xc0, 0, 0, 1, 0xc0, 0}, "there twice"},
	} {
		st := NewKeyedStore(128, 0, 127)
		err := st.RestoreKeyGroups(map[int][]byte{3: tc.b})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "key group 3") {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	st = NewKeyedStore(128, 0, 127)
	_ = st.Put(0, strKey("a"), []byte("1"))
	if err := st.RestoreKeyGroups(nil); err == nil {
		t.Fatal("restore into a store with state")
	}
}

// BenchmarkKeyedStoreSnapshot1M: the synchronous part of a checkpoint of
// a keyed sum holding 1 M keys in one subtask (128 key groups): encoding
// every cell (SnapshotKeyGroups), and filling a new store from it
// (RestoreKeyGroups). Figures: time per snapshot or restore and the
// snapshot's bytes.
func BenchmarkKeyedStoreSnapshot1M(b *testing.B) {
	const keys = 1 << 20
	st := NewKeyedStore(128, 0, 127)
	// a sum's cell: the header and {"k": key, "v": <int64, fixed width>}
	val := putHeader(nil, 0)
	val = appendFixed(append(abi.AppendStr(abi.AppendMapHeader(val, 2), "k"), 0xc0), num{i: 1})
	for i := 0; i < keys; i++ {
		key := abi.AppendStr(nil, fmt.Sprintf("acct-%07d", i))
		kg, err := st.KeyGroup(key)
		if err != nil {
			b.Fatal(err)
		}
		st.insert(kg, 0, key, val)
	}
	_, groups := st.SnapshotKeyGroups()
	size := 0
	byGroup := map[int][]byte{}
	for i, g := range groups {
		size += len(g)
		byGroup[i] = g
	}
	b.Run("snapshot", func(b *testing.B) {
		b.SetBytes(int64(size))
		for range b.N {
			st.SnapshotKeyGroups()
		}
		b.ReportMetric(float64(size), "bytes")
	})
	b.Run("restore", func(b *testing.B) {
		b.SetBytes(int64(size))
		for range b.N {
			if err := NewKeyedStore(128, 0, 127).RestoreKeyGroups(byGroup); err != nil {
				b.Fatal(err)
			}
		}
	})
}
