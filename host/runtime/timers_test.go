package runtime

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/partition"
)

type firing struct {
	key string
	ts  int64
}

func fireAll(t *testing.T, tm *Timers, kind int, upTo int64) []firing {
	t.Helper()
	var got []firing
	if err := tm.Advance(kind, upTo, func(key []byte, ts int64) error {
		s, _ := abi.ReadStr(key)
		got = append(got, firing{string(s), ts})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestTimersFireInOrderOnce: timers fire in timestamp order when the time
// passes them (ts <= time, as InternalTimerServiceImpl.advanceWatermark),
// one per (kind, key, ts) however often registered, not after a delete,
// and each kind on its own.
func TestTimersFireInOrderOnce(t *testing.T) {
	st := NewKeyedStore(128, 0, 127)
	tm, err := NewTimers(st, st)
	if err != nil {
		t.Fatal(err)
	}
	k := func(s string) []byte { return abi.AppendStr(nil, s) }
	for _, r := range []struct {
		kind int
		key  string
		ts   int64
	}{{0, "b", 20}, {0, "a", 10}, {0, "a", 10}, {0, "c", 10}, {0, "a", 30}, {1, "a", 15}, {0, "d", -5}} {
		if err := tm.Register(r.kind, k(r.key), r.ts); err != nil {
			t.Fatal(err)
		}
	}
	if err := tm.Delete(0, k("c"), 10); err != nil {
		t.Fatal(err)
	}
	if err := tm.Delete(0, k("c"), 99); err != nil { // not there: no error
		t.Fatal(err)
	}
	if err := tm.Register(2, k("a"), 1); err == nil {
		t.Fatal("kind 2 accepted")
	}
	if next, ok, _ := tm.Next(0); !ok || next != -5 {
		t.Fatalf("next %d %v", next, ok)
	}
	if got, want := fireAll(t, tm, 0, 9), []firing{{"d", -5}}; !slices.Equal(got, want) {
		t.Fatalf("up to 9: %v, want %v", got, want)
	}
	if got, want := fireAll(t, tm, 0, 20), []firing{{"a", 10}, {"b", 20}}; !slices.Equal(got, want) {
		t.Fatalf("up to 20: %v, want %v", got, want)
	}
	if got := fireAll(t, tm, 0, 20); len(got) != 0 {
		t.Fatalf("fired twice: %v", got)
	}
	if got, want := fireAll(t, tm, 1, 100), []firing{{"a", 15}}; !slices.Equal(got, want) {
		t.Fatalf("processing: %v, want %v", got, want)
	}
	// a timer registered while firing, already due, fires in the same advance
	err = tm.Advance(0, 40, func(key []byte, ts int64) error {
		if ts == 30 {
			return tm.Register(0, key, 35)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := tm.Next(0); ok {
		t.Fatal("a timer left after advancing past every one")
	}
	if n := st.Len(SlotEventTimers) + st.Len(SlotProcessingTimers); n != 0 {
		t.Fatalf("%d timer cells left", n)
	}
}

// TestTimersRescale: timers are keyed state in their key's key group, so
// a snapshot at parallelism 2 restored at 3 gives each new subtask the
// timers of its own keys, which fire there, each once.
func TestTimersRescale(t *testing.T) {
	const maxP = 128
	want := map[string]int64{}
	var groups = map[int][]byte{}
	for sub := range 2 {
		start, end := partition.KeyGroupRange(maxP, 2, sub)
		st := NewKeyedStore(maxP, start, end)
		tm, _ := NewTimers(st, st)
		for i := range 200 {
			key := abi.AppendStr(nil, fmt.Sprint("k", i))
			if _, err := st.KeyGroup(key); err != nil {
				continue
			}
			if err := tm.Register(abi.TimerEventTime, key, int64(1000+i)); err != nil {
				t.Fatal(err)
			}
			want[fmt.Sprint("k", i)] = int64(1000 + i)
		}
		first, gs := st.SnapshotKeyGroups()
		for i, g := range gs {
			groups[first+i] = g
		}
	}
	if len(want) != 200 {
		t.Fatalf("%d keys registered", len(want))
	}
	got := map[string]int64{}
	for sub := range 3 {
		start, end := partition.KeyGroupRange(maxP, 3, sub)
		st := NewKeyedStore(maxP, start, end)
		mine := map[int][]byte{}
		for kg := start; kg <= end; kg++ {
			mine[kg] = groups[kg]
		}
		if err := st.RestoreKeyGroups(mine); err != nil {
			t.Fatal(err)
		}
		tm, err := NewTimers(st, st)
		if err != nil {
			t.Fatal(err)
		}
		prev := int64(-1)
		for _, f := range fireAll(t, tm, abi.TimerEventTime, MaxWatermark) {
			if _, dup := got[f.key]; dup {
				t.Fatalf("%s fired twice", f.key)
			}
			if f.ts < prev {
				t.Fatalf("subtask %d fired %d after %d", sub, f.ts, prev)
			}
			prev = f.ts
			got[f.key] = f.ts
		}
	}
	for k, ts := range want {
		if got[k] != ts {
			t.Errorf("%s fired at %d, want %d", k, got[k], ts)
		}
	}
}
