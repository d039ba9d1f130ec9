// Package statetest is the conformance kit of keyed-state backends
// (runtime.StateBackend): every backend runs Run in its tests, and a pair
// of backends runs Cross to show that a snapshot of one restores on the
// other. The checks: get, put and delete per slot and key group, counts,
// scans of one key group and slot, refusal of keys outside the subtask's
// key-group range and of bad slots, and snapshot and restore at every pair
// of parallelisms in {1, 2, 3, 5, 8} with max parallelism 128.
package statetest

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/partition"
)

// Factory opens an empty backend for key groups [start, end] of maxP. The
// test closes it.
type Factory func(t testing.TB, maxP, start, end int) runtime.StateBackend

// MaxParallelism and Parallelisms are the rescale matrix of Rescale.
const MaxParallelism = 128

var Parallelisms = []int{1, 2, 3, 5, 8}

// Key is the msgpack key of record i: a string, as most keys are.
func Key(i int) []byte { return abi.AppendStr(nil, fmt.Sprintf("key-%d", i)) }

// KeyGroupOf is the key group of a msgpack key at maxP.
func KeyGroupOf(t testing.TB, key []byte, maxP int) int {
	h, err := abi.KeyHash(key)
	if err != nil {
		t.Fatal(err)
	}
	return partition.KeyGroup(h, maxP)
}

// Run runs the whole kit against newBackend.
func Run(t *testing.T, newBackend Factory) {
	t.Run("GetPutDelete", func(t *testing.T) { GetPutDelete(t, newBackend) })
	t.Run("ScanPerKeyGroup", func(t *testing.T) { ScanPerKeyGroup(t, newBackend) })
	t.Run("Refusals", func(t *testing.T) { Refusals(t, newBackend) })
	t.Run("Rescale", func(t *testing.T) { Rescale(t, newBackend, newBackend) })
	t.Run("RestoreRefusals", func(t *testing.T) { RestoreRefusals(t, newBackend) })
}

// Cross runs the rescale matrix with snapshots taken on from and
// restored on to.
func Cross(t *testing.T, from, to Factory) { Rescale(t, from, to) }

func open(t testing.TB, f Factory, maxP, start, end int) runtime.StateBackend {
	b := f(t, maxP, start, end)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return b
}

func mustGet(t testing.TB, b runtime.StateBackend, slot int, key []byte) ([]byte, bool) {
	t.Helper()
	v, ok, err := b.Get(slot, key, nil)
	if err != nil {
		t.Fatalf("get slot %d key %q: %v", slot, key, err)
	}
	return v, ok
}

func mustCount(t testing.TB, b runtime.StateBackend, slot int) int {
	t.Helper()
	n, err := b.Count(slot)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// GetPutDelete: values per slot are independent, overwrite, delete and
// store again; an empty value is a value; dst is reused.
func GetPutDelete(t *testing.T, f Factory) {
	b := open(t, f, MaxParallelism, 0, MaxParallelism-1)
	k1, k2 := Key(1), Key(2)
	if _, ok := mustGet(t, b, 0, k1); ok {
		t.Fatal("a key never stored is found")
	}
	for _, w := range []struct {
		slot int
		key  []byte
		val  string
	}{{0, k1, "a"}, {1, k1, "b"}, {0, k2, ""}, {abi.MaxStateSlots - 1, k2, "last slot"}} {
		if err := b.Put(w.slot, w.key, []byte(w.val)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(slot int, key []byte, want string, wantOK bool) {
		t.Helper()
		v, ok := mustGet(t, b, slot, key)
		if ok != wantOK || string(v) != want {
			t.Fatalf("slot %d key %q: %q %v, want %q %v", slot, key, v, ok, want, wantOK)
		}
	}
	check(0, k1, "a", true)
	check(1, k1, "b", true)
	check(0, k2, "", true)
	check(1, k2, "", false)
	check(abi.MaxStateSlots-1, k2, "last slot", true)
	if n := mustCount(t, b, 0); n != 2 {
		t.Fatalf("count slot 0: %d", n)
	}
	big := bytes.Repeat([]byte("x"), 1<<16)
	if err := b.Put(0, k1, big); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 0, 8)
	v, ok, err := b.Get(0, k1, dst)
	if err != nil || !ok || !bytes.Equal(v, big) {
		t.Fatalf("overwrite with a large value: %d bytes %v %v", len(v), ok, err)
	}
	val := []byte("mine")
	if err := b.Put(0, k1, val); err != nil {
		t.Fatal(err)
	}
	val[0] = 'X' // the backend holds a copy
	check(0, k1, "mine", true)
	got, _ := mustGet(t, b, 0, k1)
	got[0] = 'Y' // and hands out one
	check(0, k1, "mine", true)
	if err := b.Delete(0, k1); err != nil {
		t.Fatal(err)
	}
	check(0, k1, "", false)
	check(1, k1, "b", true)
	if err := b.Delete(0, k1); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}
	if n := mustCount(t, b, 0); n != 1 {
		t.Fatalf("count slot 0 after delete: %d", n)
	}
	if err := b.Put(0, k1, []byte("again")); err != nil {
		t.Fatal(err)
	}
	check(0, k1, "again", true)
	// many keys, deleted and stored again
	for i := range 2000 {
		if err := b.Put(2, Key(i), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2000; i += 2 {
		if err := b.Delete(2, Key(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := mustCount(t, b, 2); n != 1000 {
		t.Fatalf("count slot 2: %d", n)
	}
	for i := range 2000 {
		v, ok := mustGet(t, b, 2, Key(i))
		if ok != (i%2 == 1) || (ok && string(v) != fmt.Sprint(i)) {
			t.Fatalf("slot 2 key %d: %q %v", i, v, ok)
		}
	}
}

// entries is a key group's content: slot -> key -> value.
type entries map[int]map[string]string

func scanAll(t testing.TB, b runtime.StateBackend, slots []int) map[int]entries {
	t.Helper()
	start, end := b.KeyGroups()
	out := map[int]entries{}
	for kg := start; kg <= end; kg++ {
		for _, slot := range slots {
			err := b.Scan(kg, slot, func(key, val []byte) bool {
				if g := KeyGroupOf(t, key, MaxParallelism); g != kg {
					t.Errorf("scan of key group %d slot %d yields key %q of key group %d", kg, slot, key, g)
				}
				if out[kg] == nil {
					out[kg] = entries{}
				}
				if out[kg][slot] == nil {
					out[kg][slot] = map[string]string{}
				}
				if _, dup := out[kg][slot][string(key)]; dup {
					t.Errorf("scan of key group %d slot %d yields %q twice", kg, slot, key)
				}
				out[kg][slot][string(key)] = string(val)
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// ScanPerKeyGroup: a scan yields exactly the live keys of one key group
// and one slot, and stops when fn returns false.
func ScanPerKeyGroup(t *testing.T, f Factory) {
	start, end := 32, 63 // subtask 1 of 4
	b := open(t, f, MaxParallelism, start, end)
	want := map[int]entries{}
	n := 0
	for i := 0; n < 600; i++ {
		k := Key(i)
		kg := KeyGroupOf(t, k, MaxParallelism)
		if kg < start || kg > end {
			continue
		}
		n++
		for _, slot := range []int{0, 3, 7} {
			if slot == 7 && i%3 != 0 {
				continue
			}
			v := fmt.Sprintf("%d@%d", i, slot)
			if err := b.Put(slot, k, []byte(v)); err != nil {
				t.Fatal(err)
			}
			if i%5 == 0 && slot == 3 {
				if err := b.Delete(slot, k); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if want[kg] == nil {
				want[kg] = entries{}
			}
			if want[kg][slot] == nil {
				want[kg][slot] = map[string]string{}
			}
			want[kg][slot][string(k)] = v
		}
	}
	got := scanAll(t, b, []int{0, 1, 3, 7})
	if !equalGroups(got, want) {
		t.Fatalf("scan: %s", diffGroups(got, want))
	}
	for _, slot := range []int{0, 3, 7} {
		total := 0
		for _, e := range want {
			total += len(e[slot])
		}
		if c := mustCount(t, b, slot); c != total {
			t.Fatalf("count slot %d: %d, want %d", slot, c, total)
		}
	}
	// early stop
	for kg := start; kg <= end; kg++ {
		if len(want[kg][0]) < 2 {
			continue
		}
		calls := 0
		if err := b.Scan(kg, 0, func(_, _ []byte) bool { calls++; return false }); err != nil {
			t.Fatal(err)
		}
		if calls != 1 {
			t.Fatalf("scan went on after fn returned false: %d calls", calls)
		}
		break
	}
	// a key group outside the range yields nothing
	for _, kg := range []int{start - 1, end + 1} {
		if err := b.Scan(kg, 0, func(_, _ []byte) bool { t.Fatalf("key group %d scanned", kg); return false }); err != nil {
			t.Fatalf("scan of key group %d outside the range: %v", kg, err)
		}
	}
}

// Refusals: keys of other subtasks, keys that are not msgpack and slots
// out of range are refused by every call.
func Refusals(t *testing.T, f Factory) {
	b := open(t, f, MaxParallelism, 32, 63)
	var foreign []byte
	for i := 0; foreign == nil; i++ {
		if kg := KeyGroupOf(t, Key(i), MaxParallelism); kg < 32 || kg > 63 {
			foreign = Key(i)
		}
	}
	wantRange := "not in this subtask's range [32, 63]"
	if err := b.Put(0, foreign, []byte("x")); err == nil || !strings.Contains(err.Error(), wantRange) {
		t.Fatalf("put of a foreign key: %v", err)
	}
	if _, _, err := b.Get(0, foreign, nil); err == nil || !strings.Contains(err.Error(), wantRange) {
		t.Fatalf("get of a foreign key: %v", err)
	}
	if err := b.Delete(0, foreign); err == nil || !strings.Contains(err.Error(), wantRange) {
		t.Fatalf("delete of a foreign key: %v", err)
	}
	if _, err := b.KeyGroup(foreign); err == nil {
		t.Fatal("KeyGroup of a foreign key")
	}
	if _, err := b.KeyGroup([]byte{0xc1}); err == nil {
		t.Fatal("KeyGroup of a key that is not msgpack")
	}
	var own []byte
	for i := 0; own == nil; i++ {
		if kg := KeyGroupOf(t, Key(i), MaxParallelism); kg >= 32 && kg <= 63 {
			own = Key(i)
		}
	}
	for _, slot := range []int{-1, runtime.MaxSlots} {
		if err := b.Put(slot, own, []byte("x")); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Fatalf("put to slot %d: %v", slot, err)
		}
		if _, _, err := b.Get(slot, own, nil); err == nil {
			t.Fatalf("get of slot %d", slot)
		}
		if err := b.Delete(slot, own); err == nil {
			t.Fatalf("delete of slot %d", slot)
		}
	}
	if err := b.Put(0, own, make([]byte, abi.MaxStateValue+1)); err == nil {
		t.Fatal("a value past abi.MaxStateValue is stored")
	}
	if n := mustCount(t, b, 0); n != 0 {
		t.Fatalf("refused writes stored %d keys", n)
	}
}

// RestoreRefusals: a key group outside the range and a snapshot that is
// not one are refused.
func RestoreRefusals(t *testing.T, f Factory) {
	b := open(t, f, MaxParallelism, 32, 63)
	if err := b.RestoreKeyGroups(map[int][]byte{64: nil}); err == nil || !strings.Contains(err.Error(), "key group 64") {
		t.Fatalf("restore of a key group outside the range: %v", err)
	}
	c := open(t, f, MaxParallelism, 32, 63)
	if err := c.RestoreKeyGroups(map[int][]byte{40: {0x01, 0x05, 'a'}}); err == nil {
		t.Fatal("restore of a truncated key group")
	}
}

// Rescale: state of n keys in three slots written at every parallelism p
// of Parallelisms on from, snapshotted, and restored on to at every
// parallelism q: each new subtask takes its key groups from the old
// subtasks whose ranges overlap it (Flink's getIntersection), and holds
// exactly the keys of its range afterwards.
func Rescale(t *testing.T, from, to Factory) {
	const n = 3000
	want := map[int]entries{} // key group -> slot -> key -> value
	put := func(kg, slot int, key, val string) {
		if want[kg] == nil {
			want[kg] = entries{}
		}
		if want[kg][slot] == nil {
			want[kg][slot] = map[string]string{}
		}
		want[kg][slot][key] = val
	}
	for i := range n {
		k := Key(i)
		kg := KeyGroupOf(t, k, MaxParallelism)
		put(kg, 0, string(k), fmt.Sprintf("v%d", i))
		if i%2 == 0 {
			put(kg, 1, string(k), fmt.Sprintf("w%d", i))
		}
		if i%7 == 0 {
			put(kg, 5, string(k), "")
		}
	}
	slots := []int{0, 1, 5}
	for _, p := range Parallelisms {
		// the old subtasks: write, delete some, snapshot
		snap := map[int][]byte{} // key group -> bytes
		for i := range p {
			start, end := partition.KeyGroupRange(MaxParallelism, p, i)
			b := open(t, from, MaxParallelism, start, end)
			for kg := start; kg <= end; kg++ {
				for _, slot := range slots {
					for _, k := range slices.Sorted(maps.Keys(want[kg][slot])) {
						if err := b.Put(slot, []byte(k), []byte(want[kg][slot][k])); err != nil {
							t.Fatal(err)
						}
						if err := b.Put(9, []byte(k), []byte("deleted")); err != nil {
							t.Fatal(err)
						}
						if err := b.Delete(9, []byte(k)); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			first, groups, err := b.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if first != start || len(groups) != end-start+1 {
				t.Fatalf("p=%d subtask %d: snapshot of key groups %d+%d, want [%d, %d]", p, i, first, len(groups), start, end)
			}
			for j, g := range groups {
				snap[first+j] = g
			}
		}
		for _, q := range Parallelisms {
			t.Run(fmt.Sprintf("%d-to-%d", p, q), func(t *testing.T) {
				total := 0
				for j := range q {
					start, end := partition.KeyGroupRange(MaxParallelism, q, j)
					mine := map[int][]byte{}
					for kg := start; kg <= end; kg++ {
						mine[kg] = snap[kg]
					}
					b := open(t, to, MaxParallelism, start, end)
					if err := b.RestoreKeyGroups(mine); err != nil {
						t.Fatal(err)
					}
					got := scanAll(t, b, append(slots, 9))
					sub := map[int]entries{}
					for kg := start; kg <= end; kg++ {
						if want[kg] != nil {
							sub[kg] = want[kg]
						}
					}
					if !equalGroups(got, sub) {
						t.Fatalf("subtask %d of %d: %s", j, q, diffGroups(got, sub))
					}
					for kg, e := range sub {
						for slot, kv := range e {
							for k, v := range kv {
								g, ok := mustGet(t, b, slot, []byte(k))
								if !ok || string(g) != v {
									t.Fatalf("subtask %d of %d: key group %d slot %d key %q: %q %v, want %q", j, q, kg, slot, k, g, ok, v)
								}
							}
						}
					}
					total += mustCount(t, b, 0)
					// the restored state takes writes: a snapshot of it
					// again holds the same key groups
					first, groups, err := b.Snapshot()
					if err != nil {
						t.Fatal(err)
					}
					for i, g := range groups {
						if len(g) == 0 && len(mine[first+i]) == 0 {
							continue
						}
						if !sameEntries(t, g, mine[first+i]) {
							t.Fatalf("subtask %d of %d: key group %d snapshots differently after a restore", j, q, first+i)
						}
					}
				}
				if total != n {
					t.Fatalf("%d keys in slot 0 after the restore, want %d", total, n)
				}
			})
		}
	}
}

// sameEntries reports whether two canonical key-group encodings hold the
// same entries (in any order within a slot).
func sameEntries(t testing.TB, a, b []byte) bool {
	return slices.Equal(Decode(t, a), Decode(t, b))
}

// Decode returns the entries of one key group's canonical bytes, sorted,
// each as "slot\x00key\x00value".
func Decode(t testing.TB, b []byte) []string {
	t.Helper()
	var out []string
	for len(b) > 0 {
		slot, rest, ok := uv(b)
		if !ok {
			t.Fatal("bad slot")
		}
		key, rest, ok := lp(rest)
		if !ok {
			t.Fatal("bad key")
		}
		val, rest, ok := lp(rest)
		if !ok {
			t.Fatal("bad value")
		}
		out = append(out, fmt.Sprintf("%d\x00%s\x00%s", slot, key, val))
		b = rest
	}
	slices.Sort(out)
	return out
}

func uv(b []byte) (uint64, []byte, bool) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, b[i+1:], true
		}
	}
	return 0, nil, false
}

func lp(b []byte) ([]byte, []byte, bool) {
	n, rest, ok := uv(b)
	if !ok || n > uint64(len(rest)) {
		return nil, nil, false
	}
	return rest[:n], rest[n:], true
}

func equalGroups(a, b map[int]entries) bool {
	return diffGroups(a, b) == ""
}

func diffGroups(got, want map[int]entries) string {
	for kg := range MaxParallelism {
		for slot := range abi.MaxStateSlots {
			g, w := got[kg][slot], want[kg][slot]
			if len(g) == 0 && len(w) == 0 {
				continue
			}
			if !maps.Equal(g, w) {
				return fmt.Sprintf("key group %d slot %d: %d keys, want %d", kg, slot, len(g), len(w))
			}
		}
	}
	return ""
}
