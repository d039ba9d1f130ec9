package runtime

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// listWire and mapWire build the ABI's wire layouts independently of
// state_kinds.go, for the expectations of the tests.
func listWire(elems ...string) []byte {
	var b []byte
	for _, e := range elems {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e)))
		b = append(b, e...)
	}
	return b
}

func mapWire(m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // bytewise for Go strings
	var b []byte
	for _, k := range keys {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(k)))
		b = append(b, k...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m[k])))
		b = append(b, m[k]...)
	}
	return b
}

func mustKinds(t *testing.T, inner KeyedState, specs []SlotSpec, now func() int64) *StateKinds {
	t.Helper()
	k, err := NewStateKinds(inner, specs, now)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestListState(t *testing.T) {
	st := NewKeyedStore(128, 0, 127)
	k := mustKinds(t, st, nil, nil)
	key := strKey("acct-1")
	if v, ok, err := k.ListGet(2, key, nil); err != nil || ok || len(v) != 0 {
		t.Fatalf("empty list: %q %v %v", v, ok, err)
	}
	for _, e := range []string{"a", "", "ccc"} {
		if err := k.ListAppend(2, key, []byte(e)); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := k.ListGet(2, key, nil)
	if err != nil || !ok || !bytes.Equal(got, listWire("a", "", "ccc")) {
		t.Fatalf("list: %q %v %v", got, ok, err)
	}
	// another key's list is its own
	if _, ok, _ := k.ListGet(2, strKey("acct-2"), nil); ok {
		t.Fatal("acct-2 has a list")
	}
	if err := k.ListUpdate(2, key, listWire("x", "y")); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := k.ListGet(2, key, nil); !bytes.Equal(got, listWire("x", "y")) {
		t.Fatalf("after update: %q", got)
	}
	if err := k.ListUpdate(2, key, []byte{5, 0, 0, 0, 'a'}); err == nil || !strings.Contains(err.Error(), "says 5 bytes") {
		t.Fatalf("bad wire: %v", err)
	}
	if err := k.ListUpdate(2, key, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := k.ListGet(2, key, nil); ok || st.Len(2) != 0 {
		t.Fatalf("an empty update leaves a list (%d cells)", st.Len(2))
	}
	if err := k.ListAppend(2, key, []byte("z")); err != nil {
		t.Fatal(err)
	}
	if err := k.Clear(2, key); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := k.ListGet(2, key, nil); ok {
		t.Fatal("clear left the list")
	}
}

func TestMapState(t *testing.T) {
	st := NewKeyedStore(128, 0, 127)
	k := mustKinds(t, st, nil, nil)
	key := strKey("acct-1")
	want := map[string]string{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 400; i++ {
		uk := fmt.Sprintf("m%d", r.IntN(40))
		switch r.IntN(4) {
		case 0, 1:
			v := fmt.Sprint(i)
			if err := k.MapPut(1, key, []byte(uk), []byte(v)); err != nil {
				t.Fatal(err)
			}
			want[uk] = v
		case 2:
			if err := k.MapDelete(1, key, []byte(uk)); err != nil {
				t.Fatal(err)
			}
			delete(want, uk)
		case 3:
			v, ok, err := k.MapGet(1, key, []byte(uk), nil)
			w, has := want[uk]
			if err != nil || ok != has || string(v) != w {
				t.Fatalf("op %d get %s: %q %v %v, want %q %v", i, uk, v, ok, err, w, has)
			}
			c, err := k.MapContains(1, key, []byte(uk))
			if err != nil || c != has {
				t.Fatalf("contains %s: %v %v", uk, c, err)
			}
		}
		got, ok, err := k.MapEntries(1, key, nil)
		if err != nil || ok != (len(want) > 0) || !bytes.Equal(got, mapWire(want)) {
			t.Fatalf("op %d entries: %v %v\n got %q\nwant %q", i, ok, err, got, mapWire(want))
		}
	}
}

// TestStateKindMisuse: a slot holds one kind; using it as another is an
// error that names both kinds and the slot.
func TestStateKindMisuse(t *testing.T) {
	st := NewKeyedStore(128, 0, 127)
	k := mustKinds(t, st, []SlotSpec{{Slot: 4, Kind: KindMap}}, nil)
	key := strKey("a")
	if err := k.Claim("state_put", 0, KindValue); err != nil {
		t.Fatal(err)
	}
	err := k.ListAppend(0, key, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "state_list_append uses state slot 0 as list state, but the slot holds value state") {
		t.Fatalf("value then list: %v", err)
	}
	if err := k.ListAppend(4, key, []byte("x")); err == nil || !strings.Contains(err.Error(), "slot holds map state") {
		t.Fatalf("declared map used as list: %v", err)
	}
	// a list cell read back as a map (a store restored into an instance
	// that has not seen the slot used) is refused too
	if err := k.ListAppend(5, key, []byte("x")); err != nil {
		t.Fatal(err)
	}
	k2 := mustKinds(t, st, nil, nil)
	if _, _, err := k2.MapGet(5, key, []byte("u"), nil); err == nil || !strings.Contains(err.Error(), "not map state") {
		t.Fatalf("list cell read as a map: %v", err)
	}
	if _, err := NewStateKinds(st, []SlotSpec{{Slot: 1, Kind: KindList}, {Slot: 1, Kind: KindMap}}, nil); err == nil {
		t.Fatal("a slot declared as two kinds")
	}
	if _, err := NewStateKinds(st, []SlotSpec{{Slot: 1, TTL: time.Hour}}, nil); err == nil {
		t.Fatal("a ttl without a clock")
	}
}

// ttlClock is a TTL clock (milliseconds) a test moves.
type ttlClock struct{ ms int64 }

func (c *ttlClock) now() int64 { return c.ms }

// TestTTLOnCreateAndWrite follows Flink's TtlStateTestBase cases for
// OnCreateAndWrite with NeverReturnExpired (ttl 100): a value written at
// 0 is there at 99, gone at 100 (expired when ts + ttl <= now); a read
// does not extend it; a write does.
func TestTTLOnCreateAndWrite(t *testing.T) {
	for _, kind := range []StateKind{KindValue, KindList, KindMap} {
		t.Run(kind.String(), func(t *testing.T) {
			clk := &ttlClock{}
			st := NewKeyedStore(128, 0, 127)
			k := mustKinds(t, st, []SlotSpec{{Slot: 0, Kind: kind, TTL: 100 * time.Millisecond}}, clk.now)
			key := strKey("k")
			put := func(v string) {
				var err error
				switch kind {
				case KindValue:
					err = k.ValuePut(0, key, []byte(v))
				case KindList:
					err = k.ListUpdate(0, key, listWire(v))
				case KindMap:
					err = k.MapPut(0, key, []byte("u"), []byte(v))
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			get := func() (string, bool) {
				var v []byte
				var ok bool
				var err error
				switch kind {
				case KindValue:
					v, ok, err = k.ValueGet(0, key, nil)
				case KindList:
					v, ok, err = k.ListGet(0, key, nil)
					if ok {
						v = v[4:]
					}
				case KindMap:
					v, ok, err = k.MapGet(0, key, []byte("u"), nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				return string(v), ok
			}
			put("v1")
			clk.ms = 99
			if v, ok := get(); !ok || v != "v1" {
				t.Fatalf("at 99: %q %v", v, ok)
			}
			clk.ms = 100
			if _, ok := get(); ok {
				t.Fatal("returned at 100, expired")
			}
			if st.Len(0) != 0 {
				t.Fatal("the expired value was not cleaned up on read")
			}
			put("v2") // at 100: lives until 199
			clk.ms = 150
			put("v3") // written again: lives until 249
			clk.ms = 249
			if v, ok := get(); !ok || v != "v3" {
				t.Fatalf("at 249: %q %v", v, ok)
			}
			clk.ms = 250
			if _, ok := get(); ok {
				t.Fatal("returned at 250")
			}
		})
	}
}

// TestTTLOnReadAndWrite: a read starts the time again (Flink's
// OnReadAndWrite).
func TestTTLOnReadAndWrite(t *testing.T) {
	clk := &ttlClock{}
	st := NewKeyedStore(128, 0, 127)
	k := mustKinds(t, st, []SlotSpec{
		{Slot: 0, Kind: KindValue, TTL: 100 * time.Millisecond, Update: TTLOnReadAndWrite},
		{Slot: 1, Kind: KindMap, TTL: 100 * time.Millisecond, Update: TTLOnReadAndWrite},
		{Slot: 2, Kind: KindList, TTL: 100 * time.Millisecond, Update: TTLOnReadAndWrite},
	}, clk.now)
	key := strKey("k")
	if err := k.ValuePut(0, key, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := k.MapPut(1, key, []byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := k.MapPut(1, key, []byte("b"), []byte("2")); err != nil {
		t.Fatal(err)
	}
	if err := k.ListAppend(2, key, []byte("e")); err != nil {
		t.Fatal(err)
	}
	for _, at := range []int64{90, 180, 270} { // each read within 100 of the last
		clk.ms = at
		if _, ok, _ := k.ValueGet(0, key, nil); !ok {
			t.Fatalf("value at %d", at)
		}
		if _, ok, _ := k.MapGet(1, key, []byte("a"), nil); !ok {
			t.Fatalf("map a at %d", at)
		}
		if _, ok, _ := k.ListGet(2, key, nil); !ok {
			t.Fatalf("list at %d", at)
		}
	}
	// b was not read since 0: gone; a is there
	got, _, _ := k.MapEntries(1, key, nil)
	if !bytes.Equal(got, mapWire(map[string]string{"a": "1"})) {
		t.Fatalf("entries at 270: %q", got)
	}
	clk.ms = 370 // 100 after the last read
	if _, ok, _ := k.ValueGet(0, key, nil); ok {
		t.Fatal("value at 370")
	}
}

// TestTTLListElements: each element has its own time (Flink's
// TtlListState): the old ones expire, the new ones stay.
func TestTTLListElements(t *testing.T) {
	clk := &ttlClock{}
	st := NewKeyedStore(128, 0, 127)
	k := mustKinds(t, st, []SlotSpec{{Slot: 3, Kind: KindList, TTL: 10 * time.Millisecond}}, clk.now)
	key := strKey("k")
	for i := 0; i < 5; i++ {
		clk.ms = int64(i * 5)
		if err := k.ListAppend(3, key, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	clk.ms = 20 // elements at 0,5,10 expired (ts+10 <= 20); 15, 20 live
	got, _, _ := k.ListGet(3, key, nil)
	if !bytes.Equal(got, listWire("3", "4")) {
		t.Fatalf("at 20: %q", got)
	}
}

// TestStateKindsSnapshotRescale writes list and map state (one slot each
// with a TTL) at parallelism 2, snapshots, restores at 3, then at 1 and
// 5: every key's list and map is intact, and the snapshots left the
// expired entries out.
func TestStateKindsSnapshotRescale(t *testing.T) {
	const maxP = 128
	clk := &ttlClock{}
	specs := []SlotSpec{
		{Slot: 1, Kind: KindList},
		{Slot: 2, Kind: KindMap},
		{Slot: 3, Kind: KindMap, TTL: time.Second},
		{Slot: 4, Kind: KindList, TTL: time.Second},
	}
	mk := func(stores []*KeyedStore) []*StateKinds {
		ks := make([]*StateKinds, len(stores))
		for i, st := range stores {
			ks[i] = mustKinds(t, st, specs, clk.now)
			for _, sp := range specs {
				st.SetSnapshotFilter(sp.Slot, ks[i].SnapshotFilter(sp.Slot))
			}
		}
		return ks
	}
	stores := []*KeyedStore{NewKeyedStore(maxP, 0, 63), NewKeyedStore(maxP, 64, 127)}
	kinds := mk(stores)
	of := func(stores []*KeyedStore, kinds []*StateKinds, key []byte) *StateKinds {
		st := ownerOf(t, stores, maxP, key)
		return kinds[slices.Index(stores, st)]
	}
	lists := map[string][]string{}
	maps := map[string]map[string]string{}
	live := map[string]map[string]string{} // slot 3: written at 1000, live
	var keys [][]byte
	for i := 0; i < 300; i++ {
		key := strKey(fmt.Sprintf("acct-%d", i))
		keys = append(keys, key)
		k := of(stores, kinds, key)
		maps[string(key)] = map[string]string{}
		live[string(key)] = map[string]string{}
		for j := 0; j <= i%4; j++ {
			e := fmt.Sprintf("t%d-%d", i, j)
			if err := k.ListAppend(1, key, []byte(e)); err != nil {
				t.Fatal(err)
			}
			lists[string(key)] = append(lists[string(key)], e)
			uk, v := fmt.Sprintf("merchant-%d", (i+j)%3), fmt.Sprint(j)
			if err := k.MapPut(2, key, []byte(uk), []byte(v)); err != nil {
				t.Fatal(err)
			}
			maps[string(key)][uk] = v
		}
		clk.ms = 0
		if err := k.MapPut(3, key, []byte("old"), []byte("x")); err != nil { // expires at 1000
			t.Fatal(err)
		}
		if err := k.ListAppend(4, key, []byte("old")); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			clk.ms = 1000
			if err := k.MapPut(3, key, []byte("new"), []byte("y")); err != nil {
				t.Fatal(err)
			}
			live[string(key)]["new"] = "y"
		}
	}
	clk.ms = 1500 // "old" expired everywhere; "new" (1000) lives until 2000
	check := func(stores []*KeyedStore, kinds []*StateKinds) {
		t.Helper()
		for _, key := range keys {
			k := of(stores, kinds, key)
			got, ok, err := k.ListGet(1, key, nil)
			if err != nil || !ok || !bytes.Equal(got, listWire(lists[string(key)]...)) {
				t.Fatalf("list of %s: %q %v %v", key, got, ok, err)
			}
			got, _, err = k.MapEntries(2, key, nil)
			if err != nil || !bytes.Equal(got, mapWire(maps[string(key)])) {
				t.Fatalf("map of %s: %q %v", key, got, err)
			}
			got, _, err = k.MapEntries(3, key, nil)
			if err != nil || !bytes.Equal(got, mapWire(live[string(key)])) {
				t.Fatalf("ttl map of %s: %q %v", key, got, err)
			}
			if _, ok, _ := k.ListGet(4, key, nil); ok {
				t.Fatalf("ttl list of %s returned expired elements", key)
			}
		}
	}
	countSlot := func(stores []*KeyedStore, slot int) int {
		n := 0
		for _, st := range stores {
			n += st.Len(slot)
		}
		return n
	}
	// the snapshot is taken before any read cleaned up: it must leave the
	// expired entries out itself
	if countSlot(stores, 4) != len(keys) {
		t.Fatal("setup: slot 4 should still hold every key's expired list")
	}
	dir := t.TempDir()
	r := snapshotStores(t, dir, 1, "last-n", maxP, stores)
	for _, p := range []int{3, 1, 5} {
		restored := restoreStores(t, r, "last-n", maxP, p)
		if n := countSlot(restored, 4); n != 0 {
			t.Fatalf("p=%d: the snapshot kept %d expired lists of slot 4", p, n)
		}
		if n := countSlot(restored, 3); n != len(keys)/2 {
			t.Fatalf("p=%d: %d maps in slot 3, want %d (half the keys have a live entry)", p, n, len(keys)/2)
		}
		rk := mk(restored)
		check(restored, rk)
		// rescale again from the restored stores
		r2 := snapshotStores(t, t.TempDir(), 2, "last-n", maxP, restored)
		again := restoreStores(t, r2, "last-n", maxP, 2)
		check(again, mk(again))
	}
}

// TestTTLSnapshotFilterKindFromFirstUse: a slot whose TTL comes from the
// pipeline (state-ttl) and whose kind is not declared takes its kind on
// first use, after the snapshot filter was installed. The filter must read
// the kind then: a live map whose cell would parse as an expired value
// timestamp (a non-ASCII user key puts 0xC3 in byte 7) stays in the
// snapshot, and an expired list is left out.
func TestTTLSnapshotFilterKindFromFirstUse(t *testing.T) {
	clk := &ttlClock{}
	st := NewKeyedStore(128, 0, 127)
	k := mustKinds(t, st, []SlotSpec{{Slot: 0, TTL: time.Hour}, {Slot: 1, TTL: time.Second}}, clk.now)
	for _, slot := range []int{0, 1} {
		st.SetSnapshotFilter(slot, k.SnapshotFilter(slot))
	}
	clk.ms = 1000
	key := strKey("acct")
	if err := k.Claim("state_map_put", 0, KindMap); err != nil {
		t.Fatal(err)
	}
	if err := k.MapPut(0, key, []byte("abcdé"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := k.Claim("state_list_append", 1, KindList); err != nil {
		t.Fatal(err)
	}
	if err := k.ListAppend(1, key, []byte("old")); err != nil {
		t.Fatal(err)
	}
	clk.ms = 5000 // the list element (ttl 1 s) expired; the map entry (1 h) did not
	snap := NewKeyedStore(128, 0, 127)
	_, groups := st.SnapshotKeyGroups()
	restored := map[int][]byte{}
	for i, g := range groups {
		if len(g) > 0 {
			restored[i] = g
		}
	}
	if err := snap.RestoreKeyGroups(restored); err != nil {
		t.Fatal(err)
	}
	if n := snap.Len(0); n != 1 {
		t.Errorf("the live map's cell: %d in the snapshot, want 1", n)
	}
	if n := snap.Len(1); n != 0 {
		t.Errorf("the expired list's cell: %d in the snapshot, want 0", n)
	}
}
