package pebblestate_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/host/runtime/statetest"
	"github.com/sluicehq/sluice/host/state/pebblestate"
)

func pebbleBackend(t testing.TB, maxP, start, end int) runtime.StateBackend {
	return pebbleWith(t, maxP, start, end, 0)
}

func pebbleWith(t testing.TB, maxP, start, end int, quota int64) *pebblestate.Store {
	st, err := pebblestate.Open(pebblestate.Options{Dir: filepath.Join(t.TempDir(), "db"), Operator: "agg", Subtask: 1, DiskQuota: quota}, maxP, start, end)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func heapBackend(_ testing.TB, maxP, start, end int) runtime.StateBackend {
	return runtime.NewKeyedStore(maxP, start, end)
}

// The Pebble store passes the state-backend conformance kit.
func TestConformance(t *testing.T) { statetest.Run(t, pebbleBackend) }

// A snapshot taken on Pebble restores on the heap, and one taken on the
// heap restores on Pebble, at every pair of parallelisms.
func TestCrossBackendHeapToPebble(t *testing.T) { statetest.Cross(t, heapBackend, pebbleBackend) }
func TestCrossBackendPebbleToHeap(t *testing.T) { statetest.Cross(t, pebbleBackend, heapBackend) }

// A call's writes are one batch: reads in the call see them, an abort
// drops them all, a commit applies them all; a snapshot taken during the
// call holds none of them.
func TestCallBatch(t *testing.T) {
	st := pebbleWith(t, 128, 0, 127, 0)
	defer st.Close()
	k1, k2 := statetest.Key(1), statetest.Key(2)
	if err := st.Put(0, k1, []byte("before")); err != nil {
		t.Fatal(err)
	}
	st.BeginCall()
	if err := st.Put(0, k1, []byte("during")); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(0, k2, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := st.Get(0, k1, nil); !ok || string(v) != "during" {
		t.Fatalf("read in the call: %q %v", v, ok)
	}
	if n, _ := st.Count(0); n != 2 {
		t.Fatalf("count in the call: %d", n)
	}
	_, groups, err := st.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, g := range groups {
		all = append(all, statetest.Decode(t, g)...)
	}
	if len(all) != 1 || !strings.HasSuffix(all[0], "before") {
		t.Fatalf("snapshot during a call: %q", all)
	}
	st.AbortCall()
	if v, ok, _ := st.Get(0, k1, nil); !ok || string(v) != "before" {
		t.Fatalf("after abort: %q %v", v, ok)
	}
	if _, ok, _ := st.Get(0, k2, nil); ok {
		t.Fatal("an aborted call's new key stays")
	}
	st.BeginCall()
	if err := st.Delete(0, k1); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(0, k2, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := st.CommitCall(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.Get(0, k1, nil); ok {
		t.Fatal("a committed delete is lost")
	}
	if v, ok, _ := st.Get(0, k2, nil); !ok || string(v) != "kept" {
		t.Fatalf("after commit: %q %v", v, ok)
	}
}

// A write past the disk quota is refused, naming the operator and the
// setting; state within it is kept.
func TestDiskQuota(t *testing.T) {
	st := pebbleWith(t, 128, 0, 127, 4<<20)
	defer st.Close()
	val := bytes.Repeat([]byte("v"), 4096)
	var err error
	i := 0
	for ; i < 10000 && err == nil; i++ {
		err = st.Put(0, statetest.Key(i), val)
	}
	if err == nil || !strings.Contains(err.Error(), `operator "agg" subtask 2`) || !strings.Contains(err.Error(), "disk quota of 4194304 bytes (state: disk-quota)") {
		t.Fatalf("after %d puts of 4 KiB: %v", i, err)
	}
	if i < 500 {
		t.Fatalf("refused after only %d puts of 4 KiB within 4 MiB", i)
	}
	if v, ok, err := st.Get(0, statetest.Key(0), nil); err != nil || !ok || !bytes.Equal(v, val) {
		t.Fatalf("state within the quota: %v %v", ok, err)
	}
	// a call past the quota is refused at commit, as a whole
	st.BeginCall()
	for j := range 2000 {
		if err := st.Put(1, statetest.Key(j), val); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.CommitCall(); err == nil || !strings.Contains(err.Error(), "disk quota") {
		t.Fatalf("a call past the quota: %v", err)
	}
	if n, _ := st.Count(1); n != 0 {
		t.Fatalf("a refused call stored %d keys", n)
	}
}

// Differential test: the same seeded random sequence of gets, puts,
// deletes, calls (committed or aborted), counts, scans and
// snapshot-restores on the heap and on Pebble gives the same answers. It
// runs 200k operations (a few seconds) in every run, -short included.
func TestDifferentialHeapPebble(t *testing.T) {
	const ops = 200_000
	const maxP, start, end = 128, 16, 79
	heap := runtime.NewKeyedStore(maxP, start, end)
	peb := pebbleWith(t, maxP, start, end, 0)
	defer func() { peb.Close() }()
	// keys of the range, and a few of other subtasks
	var keys, foreign [][]byte
	for i := 0; len(keys) < 5000 || len(foreign) < 5; i++ {
		k := statetest.Key(i)
		if kg := statetest.KeyGroupOf(t, k, maxP); kg >= start && kg <= end {
			keys = append(keys, k)
		} else if len(foreign) < 5 {
			foreign = append(foreign, k)
		}
	}
	rng := rand.New(rand.NewPCG(31, 2026))
	inCall := false
	// the heap has no batches: a call is undone as the plugin journal
	// does, by putting back what it changed
	type undo struct {
		slot int
		key  []byte
		old  []byte
		had  bool
	}
	var journal []undo
	for op := range ops {
		slot := rng.IntN(4)
		key := keys[rng.IntN(len(keys))]
		if rng.IntN(1000) == 0 {
			key = foreign[rng.IntN(len(foreign))]
		}
		where := func() string { return fmt.Sprintf("op %d slot %d key %q", op, slot, key) }
		switch r := rng.IntN(10000); {
		case r < 4000:
			hv, hok, herr := heap.Get(slot, key, nil)
			pv, pok, perr := peb.Get(slot, key, nil)
			if (herr == nil) != (perr == nil) || hok != pok || !bytes.Equal(hv, pv) {
				t.Fatalf("%s: get: heap %q %v %v, pebble %q %v %v", where(), hv, hok, herr, pv, pok, perr)
			}
		case r < 7500:
			val := make([]byte, rng.IntN(64))
			for i := range val {
				val[i] = byte(rng.Uint32())
			}
			if inCall {
				if old, had, err := heap.Get(slot, key, nil); err == nil {
					journal = append(journal, undo{slot, key, old, had})
				}
			}
			herr, perr := heap.Put(slot, key, val), peb.Put(slot, key, val)
			if (herr == nil) != (perr == nil) {
				t.Fatalf("%s: put: heap %v, pebble %v", where(), herr, perr)
			}
		case r < 9000:
			if inCall {
				if old, had, err := heap.Get(slot, key, nil); err == nil {
					journal = append(journal, undo{slot, key, old, had})
				}
			}
			herr, perr := heap.Delete(slot, key), peb.Delete(slot, key)
			if (herr == nil) != (perr == nil) {
				t.Fatalf("%s: delete: heap %v, pebble %v", where(), herr, perr)
			}
		case r < 9950:
			switch {
			case !inCall:
				peb.BeginCall()
				inCall, journal = true, journal[:0]
			case rng.IntN(3) == 0: // the call fails
				peb.AbortCall()
				for i := len(journal) - 1; i >= 0; i-- {
					u := journal[i]
					if err := heap.Restore(u.slot, u.key, u.old, u.had); err != nil {
						t.Fatal(err)
					}
				}
				inCall = false
			default:
				if err := peb.CommitCall(); err != nil {
					t.Fatal(err)
				}
				inCall = false
			}
		case r < 9999:
			hn, _ := heap.Count(slot)
			pn, err := peb.Count(slot)
			if err != nil || hn != pn {
				t.Fatalf("op %d: count slot %d: heap %d, pebble %d %v", op, slot, hn, pn, err)
			}
			kg := start + rng.IntN(end-start+1)
			hs, ps := scan(t, heap, kg, slot), scan(t, peb, kg, slot)
			if strings.Join(hs, "|") != strings.Join(ps, "|") {
				t.Fatalf("op %d: scan key group %d slot %d: heap %d entries, pebble %d", op, kg, slot, len(hs), len(ps))
			}
		default:
			if inCall {
				continue
			}
			// snapshot both, compare, and restore each on a new store of
			// the other backend
			hf, hg, _ := heap.Snapshot()
			pf, pg, err := peb.Snapshot()
			if err != nil || hf != pf || len(hg) != len(pg) {
				t.Fatalf("op %d: snapshots: %v", op, err)
			}
			hm, pm := map[int][]byte{}, map[int][]byte{}
			for i := range hg {
				if strings.Join(statetest.Decode(t, hg[i]), "|") != strings.Join(statetest.Decode(t, pg[i]), "|") {
					t.Fatalf("op %d: key group %d snapshots differently", op, hf+i)
				}
				hm[hf+i], pm[pf+i] = hg[i], pg[i]
			}
			heap = runtime.NewKeyedStore(maxP, start, end)
			if err := heap.RestoreKeyGroups(pm); err != nil {
				t.Fatal(err)
			}
			np := pebbleWith(t, maxP, start, end, 0)
			if err := np.RestoreKeyGroups(hm); err != nil {
				t.Fatal(err)
			}
			peb.Close()
			peb = np
		}
	}
}

func scan(t *testing.T, b runtime.StateBackend, kg, slot int) []string {
	var out []string
	if err := b.Scan(kg, slot, func(k, v []byte) bool { out = append(out, fmt.Sprintf("%x=%x", k, v)); return true }); err != nil {
		t.Fatal(err)
	}
	// the heap scans in first-stored order, Pebble in key order
	slices.Sort(out)
	return out
}

// The engine's factory opens each subtask's database in a folder of its
// own under the state dir and removes it at Close.
func TestBackendsFolders(t *testing.T) {
	root := t.TempDir()
	b := pebblestate.Backends{Root: root}
	req := runtime.BackendRequest{Job: "j", Operator: "count", Subtask: 2, MaxParallelism: 128, Start: 0, End: 63, State: plan.State{Backend: "pebble"}}
	s1, err := b.Open(req)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b.Open(req)
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(root, "j"))
	if len(ents) != 2 || !strings.HasPrefix(ents[0].Name(), "count-2-") {
		t.Fatalf("folders: %v", ents)
	}
	s1.Close()
	s2.Close()
	if ents, _ := os.ReadDir(filepath.Join(root, "j")); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
	if _, err := b.Open(runtime.BackendRequest{Operator: "x", State: plan.State{Backend: "rocks"}}); err == nil {
		t.Fatal("an unknown backend opens")
	}
}

// TTL state stays out of snapshots on Pebble as on the heap: both backends
// are runtime.SnapshotFilterers, the plugin adapter installs
// StateKinds.SnapshotFilter on them, and an expired list leaves the
// checkpoint while a live map stays.
func TestTTLSnapshotFilter(t *testing.T) {
	for name, open := range map[string]func(testing.TB, int, int, int) runtime.StateBackend{"heap": heapBackend, "pebble": pebbleBackend} {
		t.Run(name, func(t *testing.T) {
			st := open(t, 128, 0, 127)
			defer st.Close()
			var now int64 = 1000
			kinds, err := runtime.NewStateKinds(st, []runtime.SlotSpec{
				{Slot: 0, Kind: runtime.KindMap, TTL: time.Hour},
				{Slot: 1, Kind: runtime.KindList, TTL: time.Second},
			}, func() int64 { return now })
			if err != nil {
				t.Fatal(err)
			}
			f, ok := st.(runtime.SnapshotFilterer)
			if !ok {
				t.Fatalf("%T is not a runtime.SnapshotFilterer: its snapshots would keep expired TTL state", st)
			}
			for _, slot := range []int{0, 1} {
				f.SetSnapshotFilter(slot, kinds.SnapshotFilter(slot))
			}
			key := statetest.Key(7)
			if err := kinds.MapPut(0, key, []byte("m"), []byte("v")); err != nil {
				t.Fatal(err)
			}
			if err := kinds.ListAppend(1, key, []byte("old")); err != nil {
				t.Fatal(err)
			}
			now = 5000 // the list element (1 s) expired, the map entry (1 h) did not
			first, groups, err := st.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			restored := map[int][]byte{}
			for i, g := range groups {
				if len(g) > 0 {
					restored[first+i] = g
				}
			}
			heap := runtime.NewKeyedStore(128, 0, 127)
			if err := heap.RestoreKeyGroups(restored); err != nil {
				t.Fatal(err)
			}
			if n := heap.Len(0); n != 1 {
				t.Errorf("live map cells in the snapshot: %d, want 1", n)
			}
			if n := heap.Len(1); n != 0 {
				t.Errorf("expired list cells in the snapshot: %d, want 0", n)
			}
		})
	}
}
