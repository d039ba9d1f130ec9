package plugin

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

func lastNRecord(tb testing.TB, ts int64, acct, merchant string, amount int64) []byte {
	v := abi.AppendMapHeader(nil, 3)
	v = abi.AppendInt(abi.AppendStr(v, "amount"), amount)
	v = abi.AppendStr(abi.AppendStr(v, "account"), acct)
	v = abi.AppendStr(abi.AppendStr(v, "merchant"), merchant)
	return abi.AppendEnvelope(nil, ts, true, abi.AppendStr(nil, acct), v)
}

// lastNOut runs one record through op and returns the output's "last"
// (as ints) and "merchant_count".
func lastNOut(t *testing.T, op *Operator, rec []byte) ([]int64, int64) {
	t.Helper()
	var s sink
	if err := op.Process(0, rec, 1, &s); err != nil {
		t.Fatal(err)
	}
	if s.records() != 1 {
		t.Fatalf("%d records out", s.records())
	}
	rd := abi.NewReader(s.got[0].buf, 1)
	rd.Next()
	v := rd.Record().Value
	raw, _, _ := abi.MapField(v, "last")
	n, body, err := abi.Len(raw)
	if err != nil {
		t.Fatal(err)
	}
	var last []int64
	off := body
	for i := 0; i < n; i++ {
		end, _ := abi.Skip(raw, off)
		x, _ := abi.ReadInt(raw[off:end])
		last = append(last, x)
		off = end
	}
	mc, _, _ := abi.MapField(v, "merchant_count")
	c, _ := abi.ReadInt(mc)
	return last, c
}

// TestStateTTLPlugin runs plugins/last-n with TTLs from the operator's
// state-ttl on the deterministic clock (the largest event time seen):
// expired list elements and map entries are never returned, the map slot's
// on-read-and-write keeps a merchant alive while it is read, and a
// snapshot leaves expired state out.
func TestStateTTLPlugin(t *testing.T) {
	h := newHost(t, nil)
	m := loadGo(t, h, "last-n")
	store := runtime.NewKeyedStore(128, 0, 127)
	op := m.NewOperator(t.Context(), "lastn", nil)
	oc := runtime.OpenContext{Operator: "lastn", Parallelism: 1, MaxParallelism: 128, KeyGroupStart: 0, KeyGroupEnd: 127, State: store,
		Config: map[string]any{"n": int64(10), StateTTLKey: []any{
			map[string]any{"slot": int64(0), "ttl": "100ms"},
			map[string]any{"slot": int64(1), "ttl": int64(100), "update": "on-read-and-write"},
		}}}
	if err := op.Open(&oc); err != nil {
		t.Fatal(err)
	}
	defer op.Close(nil)
	steps := []struct {
		ts     int64
		amount int64
		last   []int64
		count  int64
	}{
		{0, 1, []int64{1}, 1},
		{50, 2, []int64{1, 2}, 2},  // the merchant's entry read at 50: lives to 150
		{120, 3, []int64{2, 3}, 3}, // 1 (at 0) expired: 0+100 <= 120
		{260, 4, []int64{4}, 1},    // 2 and 3 expired; the entry (120) too
	}
	for _, s := range steps {
		last, c := lastNOut(t, op, lastNRecord(t, s.ts, "a", "m", s.amount))
		if !slicesEqual(last, s.last) || c != s.count {
			t.Fatalf("at %d: last %v count %d, want %v %d", s.ts, last, c, s.last, s.count)
		}
	}
	// b at 400: a's state (written at 260) is expired but not yet read
	lastNOut(t, op, lastNRecord(t, 400, "b", "m", 9))
	if store.Len(0) != 2 || store.Len(1) != 2 {
		t.Fatalf("before the snapshot: %d lists, %d maps, want 2 each", store.Len(0), store.Len(1))
	}
	first, groups := store.SnapshotKeyGroups()
	restored := runtime.NewKeyedStore(128, 0, 127)
	byKG := map[int][]byte{}
	for i, g := range groups {
		byKG[first+i] = g
	}
	if err := restored.RestoreKeyGroups(byKG); err != nil {
		t.Fatal(err)
	}
	if restored.Len(0) != 1 || restored.Len(1) != 1 {
		t.Fatalf("the snapshot kept %d lists and %d maps, want b's alone", restored.Len(0), restored.Len(1))
	}
}

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestStateKindMisusePlugin: a slot holding value state (here put there by
// the host) used by the plugin as a list fails the call with an error that
// names the plugin, the operator, the call and the slot.
func TestStateKindMisusePlugin(t *testing.T) {
	h := newHost(t, nil)
	m := loadGo(t, h, "last-n")
	store := runtime.NewKeyedStore(128, 0, 127)
	key := abi.AppendStr(nil, "a")
	if err := store.Put(0, key, []byte{0x01}); err != nil {
		t.Fatal(err)
	}
	op := open(t, m, runtime.OpenContext{Operator: "lastn", KeyGroupStart: 0, KeyGroupEnd: 127, State: store})
	err := op.Process(0, lastNRecord(t, 0, "a", "m", 1), 1, &sink{})
	if err == nil {
		t.Fatal("a value cell used as a list was accepted")
	}
	for _, want := range []string{`plugin "last-n"`, "operator lastn", "state_list_append slot 0", "not list state"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	// the v1 value calls are refused on a slot the plugin declared a list
	op2 := open(t, m, runtime.OpenContext{Operator: "lastn", KeyGroupStart: 0, KeyGroupEnd: 127, State: runtime.NewKeyedStore(128, 0, 127)})
	if k := op2.r.env.kinds; k == nil || k.Claim(abi.ImportStatePut, 0, runtime.KindValue) == nil {
		t.Fatal("slot 0, declared a list by describe, accepted as value state")
	}
}

// TestStateKindsUndo: list and map writes of a failed call go through the
// call's journal like value writes, so undo puts a key's list and map back
// as the call found them (the on-error narrowing re-runs good records).
func TestStateKindsUndo(t *testing.T) {
	store := runtime.NewKeyedStore(128, 0, 127)
	j := &journal{inner: store}
	k, err := runtime.NewStateKinds(j, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := abi.AppendStr(nil, "a")
	j.begin()
	if err := k.ListAppend(0, key, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := k.MapPut(1, key, []byte("m"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	j.reset() // that call stood
	before0, _, _ := store.Get(0, key, nil)
	before1, _, _ := store.Get(1, key, nil)
	j.begin()
	for i := 0; i < 3; i++ {
		if err := k.ListAppend(0, key, []byte("undone")); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.MapPut(1, key, []byte("m"), []byte("2")); err != nil {
		t.Fatal(err)
	}
	if err := k.MapPut(1, key, []byte("n"), []byte("3")); err != nil {
		t.Fatal(err)
	}
	if err := k.ListAppend(2, abi.AppendStr(nil, "new"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := j.undo(); err != nil {
		t.Fatal(err)
	}
	after0, _, _ := store.Get(0, key, nil)
	after1, _, _ := store.Get(1, key, nil)
	if string(after0) != string(before0) || string(after1) != string(before1) || store.Len(2) != 0 {
		t.Fatalf("undo left %q %q (want %q %q) and %d lists in slot 2", after0, after1, before0, before1, store.Len(2))
	}
	got, _, _ := k.ListGet(0, key, nil)
	want := append(binary.LittleEndian.AppendUint32(nil, 4), "kept"...)
	if string(got) != string(want) {
		t.Fatalf("list after undo: %q", got)
	}
}
