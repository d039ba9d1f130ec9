package runtime

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/partition"
)

func strKey(s string) []byte { return abi.AppendStr(nil, s) }

func TestKeyedStoreByKeyGroup(t *testing.T) {
	// subtask 1 of 4 over 128 key groups owns [32, 63]
	st := NewKeyedStore(128, 32, 63)
	owned, foreign := [][]byte{}, []byte(nil)
	for i := 0; len(owned) < 50 || foreign == nil; i++ {
		k := strKey(fmt.Sprintf("key-%d", i))
		h, _ := abi.KeyHash(k)
		if kg := partition.KeyGroup(h, 128); kg >= 32 && kg <= 63 {
			owned = append(owned, k)
		} else if foreign == nil {
			foreign = k
		}
	}
	for i, k := range owned {
		if err := st.Put(0, k, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		if err := st.Put(1, k, []byte{byte(100 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Put(0, foreign, []byte{1}); err == nil || !strings.Contains(err.Error(), "not in this subtask's range [32, 63]") {
		t.Fatalf("put of a key of another subtask: %v", err)
	}
	if _, _, err := st.Get(0, abi.AppendNil(nil), nil); err == nil {
		t.Fatal("a nil key is an error")
	}
	for i, k := range owned {
		v, ok, err := st.Get(1, k, make([]byte, 0, 1))
		if err != nil || !ok || v[0] != byte(100+i) {
			t.Fatalf("get slot 1 %s: %v %v %v", preview(k), v, ok, err)
		}
	}
	if st.Len(0) != len(owned) || st.Len(1) != len(owned) || st.Len(2) != 0 {
		t.Fatalf("len %d %d %d", st.Len(0), st.Len(1), st.Len(2))
	}
	// deleting, then storing again, keeps the first-stored order; Range
	// visits each key of a key group once
	if err := st.Delete(0, owned[0]); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.Get(0, owned[0], nil); ok {
		t.Fatal("deleted key still there")
	}
	_ = st.Put(0, owned[0], []byte{7})
	seen := map[string]int{}
	for kg := 32; kg <= 63; kg++ {
		var order []string
		st.Range(kg, 0, func(key string, val []byte) bool {
			order = append(order, key)
			seen[key]++
			h, _ := abi.KeyHash([]byte(key))
			if partition.KeyGroup(h, 128) != kg {
				t.Fatalf("key %s listed in key group %d", preview([]byte(key)), kg)
			}
			return true
		})
		// first-stored order: the order of owned
		last := -1
		for _, k := range order {
			i := indexOf(owned, k)
			if i < last {
				t.Fatalf("key group %d out of first-stored order: %v", kg, order)
			}
			last = i
		}
	}
	if len(seen) != len(owned) {
		t.Fatalf("Range saw %d keys, want %d", len(seen), len(owned))
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s visited %d times", k, n)
		}
	}
}

func indexOf(keys [][]byte, k string) int {
	for i, x := range keys {
		if string(x) == k {
			return i
		}
	}
	return -1
}

// Deleting and storing keys again and again must not grow the store.
func TestKeyedStoreChurnStaysBounded(t *testing.T) {
	st := NewKeyedStore(1, 0, 0)
	k := strKey("k")
	for i := 0; i < 10000; i++ {
		_ = st.Put(0, k, []byte{1})
		_ = st.Delete(0, k)
	}
	if n := len(st.groups[0][0].order); n > 100 {
		t.Fatalf("order grew to %d entries for one key", n)
	}
}

func TestHotKeysFindsTheHotKey(t *testing.T) {
	h := newHotKeys(1)
	hot := strKey("acct-corp")
	for i := 0; i < 100000; i++ {
		if i%10 < 8 {
			h.observe(hot)
		} else {
			h.observe(strKey(fmt.Sprintf("acct-%04d", i%997)))
		}
	}
	got := mergeHotKeys([]*hotKeys{h, newHotKeys(2)}, 0.5, 64)
	if len(got) != 1 || string(got[0].key) != string(hot) || got[0].share < 0.7 || got[0].share > 0.85 {
		t.Fatalf("hot keys %+v", got)
	}
	// a uniform stream has none, even when its keys repeat with the
	// sampling gap's period
	u := newHotKeys(3)
	for i := 0; i < 100000; i++ {
		u.observe(strKey(fmt.Sprintf("k%d", i%hotKeyGap)))
	}
	if got := mergeHotKeys([]*hotKeys{u}, 0.5, 64); len(got) != 0 {
		t.Fatalf("uniform stream: %+v", got)
	}
	if got := mergeHotKeys([]*hotKeys{newHotKeys(4)}, 0.5, 64); got != nil {
		t.Fatalf("no sample: %+v", got)
	}
}

func TestPreview(t *testing.T) {
	v := enc("s", "a\"b", "i", -5, "f", 1.5, "b", true, "n", nil, "a", []any{1, "x"})
	if got, want := preview(v), `{"s":"a\"b","i":-5,"f":1.5,"b":true,"n":null,"a":[1,"x"]}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	long := enc("s", strings.Repeat("é", 200))
	if got := preview(long); len(got) > previewLimit+3 || !strings.HasSuffix(got, "...") {
		t.Fatalf("long value: %d bytes %q", len(got), got)
	}
	if got := preview([]byte{0x82, 0xa1}); !strings.Contains(got, "malformed") {
		t.Fatalf("malformed: %q", got)
	}
	// a uint64 past int64's range and whole floats as the print sink
	// writes them (they showed as <malformed msgpack> and as 100)
	big := append(abi.AppendStr([]byte{0x83}, "n"), 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	big = abi.AppendFloat(abi.AppendStr(big, "e"), 100)
	big = abi.AppendFloat(abi.AppendStr(big, "m"), math.Copysign(0, -1))
	if got, want := preview(big), `{"n":18446744073709551615,"e":100.0,"m":-0.0}`; got != want {
		t.Fatalf("got %s", got)
	}
}

// TestKeyedStoreBoundsSlotsAndValues: slots are 0 to MaxSlots-1 (a
// plugin's 0 to abi.MaxStateSlots-1, then the host's timers) and values at most abi.MaxStateValue long; the others are refused
// before anything is allocated (one state_put of slot 40,000,000 made the
// host allocate 2.9 GB of slot lists).
func TestKeyedStoreBoundsSlotsAndValues(t *testing.T) {
	s := NewKeyedStore(128, 0, 127)
	key := abi.AppendStr(nil, "k")
	if err := s.Put(MaxSlots-1, key, []byte{1}); err != nil {
		t.Fatalf("the last slot: %v", err)
	}
	for _, slot := range []int{-1, MaxSlots, 40_000_000} {
		if err := s.Put(slot, key, []byte{1}); err == nil || !strings.Contains(err.Error(), "out of range: slots are 0 to 1023") {
			t.Errorf("Put slot %d: %v", slot, err)
		}
		if _, _, err := s.Get(slot, key, nil); err == nil {
			t.Errorf("Get slot %d: no error", slot)
		}
		if err := s.Delete(slot, key); err == nil {
			t.Errorf("Delete slot %d: no error", slot)
		}
	}
	if len(s.index) != MaxSlots {
		t.Errorf("%d slot indexes after the refused puts, want %d", len(s.index), MaxSlots)
	}
	if err := s.Put(0, key, make([]byte, abi.MaxStateValue+1)); err == nil || !strings.Contains(err.Error(), "longer than the limit") {
		t.Errorf("a value past the limit: %v", err)
	}
}

// TestKeyedStoreLimit: Put counts keys and values (with cellBytes a
// cell) against SetLimit and refuses past it, naming the setting; an
// overwrite counts its difference, a delete frees its value and, once
// compacted, its key; Restore (a failed call's undo) passes the limit.
func TestKeyedStoreLimit(t *testing.T) {
	s := NewKeyedStore(128, 0, 127)
	s.SetLimit(1000)
	k := func(i int) []byte { return abi.AppendStr(nil, fmt.Sprintf("k%03d", i)) } // 5 bytes
	if err := s.Put(0, k(1), make([]byte, 800)); err != nil {
		t.Fatal(err)
	}
	if s.used != 5+800+cellBytes {
		t.Fatalf("used %d", s.used)
	}
	err := s.Put(0, k(2), make([]byte, 200))
	if err == nil || err.Error() != "keyed state would hold 1138 bytes, past the limit of 1000 bytes for an operator's subtask (the state-memory setting, in MiB)" {
		t.Fatalf("past the limit: %v", err)
	}
	if err := s.Put(0, k(1), make([]byte, 100)); err != nil || s.used != 5+100+cellBytes { // shrink
		t.Fatalf("overwrite: %v, used %d", err, s.used)
	}
	if err := s.Put(0, k(2), make([]byte, 200)); err != nil {
		t.Fatalf("after the shrink: %v", err)
	}
	if err := s.Delete(0, k(1)); err != nil || s.used != 5+cellBytes+5+200+cellBytes {
		t.Fatalf("delete: %v, used %d", err, s.used)
	}
	if err := s.Restore(0, k(1), make([]byte, 900), true); err != nil {
		t.Fatalf("restore past the limit: %v", err)
	}
	if err := s.Put(0, k(3), []byte{1}); err == nil {
		t.Fatal("a put over the limit after a restore passed")
	}
	if s.limit != 1000 {
		t.Fatalf("restore left the limit at %d", s.limit)
	}
	// a value shrunk in place gives its buffer back: the count is of what
	// is held (a small value kept in a large one's buffer passed the cap)
	s3 := NewKeyedStore(128, 0, 127)
	s3.SetLimit(100 << 10)
	for i := 0; i < 20; i++ {
		if err := s3.Put(0, k(i), make([]byte, 40<<10)); err != nil {
			t.Fatalf("key %d, 40 KiB: %v", i, err)
		}
		if err := s3.Put(0, k(i), []byte{1}); err != nil {
			t.Fatal(err)
		}
		if c := s3.lookup(0, k(i)); cap(c.val) > 64 {
			t.Fatalf("key %d kept a buffer of %d bytes for 1", i, cap(c.val))
		}
	}
	if s3.used != 20*(5+1+cellBytes) {
		t.Fatalf("used %d after shrinking", s3.used)
	}
	// one key group: deleting keys compacts its list, their keys go too
	s4 := NewKeyedStore(1, 0, 0)
	for i := 0; i < 40; i++ {
		if err := s4.Put(2, k(i), []byte{1, 2}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 40; i++ {
		if err := s4.Delete(2, k(i)); err != nil {
			t.Fatal(err)
		}
	}
	if s4.used > 17*(5+cellBytes) {
		t.Fatalf("after deleting and compacting: used %d", s4.used)
	}
	// a deleted key's value is freed; its cell stays listed (counted) until
	// its list compacts
	s2 := NewKeyedStore(128, 0, 127)
	for i := 0; i < 100; i++ {
		if err := s2.Put(1, k(i), []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100; i++ {
		if err := s2.Delete(1, k(i)); err != nil {
			t.Fatal(err)
		}
	}
	if s2.used > 100*(5+cellBytes) {
		t.Fatalf("after deleting every key: used %d", s2.used)
	}
}

// The arena's next block holds what is asked even when that is more than
// twice its last block: a restore of a 1.3 KiB cell after small ones (a
// window's records) asked a 1 KiB block for it and panicked.
func TestArenaBlockHoldsTheRequest(t *testing.T) {
	var a arena
	for _, n := range []int{10, 300, 1347, 5000, 8192, 20, 8000} {
		if b := a.alloc(n); len(b) != n || cap(b) != n {
			t.Fatalf("alloc(%d): len %d cap %d", n, len(b), cap(b))
		}
	}
}
