package plugin

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

// poisonBatch builds records [nil, key, {"n": i, "c": word}] for the words
// (testdata/poison.wat misbehaves on a command word; "" is a good record).
func poisonBatch(words ...string) ([]byte, int) {
	var w abi.Writer
	for i, word := range words {
		v := abi.AppendMapHeader(nil, 2)
		v = abi.AppendInt(abi.AppendStr(v, "n"), int64(i+1))
		v = abi.AppendStr(abi.AppendStr(v, "c"), word)
		w.Append(0, false, abi.AppendStr(nil, "k"+string(rune('a'+i))), v)
	}
	return w.Buf, w.Count
}

// rejects collects what an operator's on-error was given.
type rejects struct {
	got    []*runtime.RecordFailure
	policy runtime.ErrorPolicy
}

func (r *rejects) reject(f *runtime.RecordFailure) error {
	r.got = append(r.got, f)
	if r.policy == runtime.PolicyFail {
		return f.Err
	}
	return nil
}

// ns reads the "n" of every record the sink got, in order.
func ns(tb testing.TB, s *sink) []int64 {
	tb.Helper()
	var out []int64
	for _, e := range s.got {
		rd := abi.NewReader(e.buf, e.count)
		for rd.Next() {
			raw, _, _ := abi.MapField(rd.Record().Value, "n")
			n, err := abi.ReadInt(raw)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, n)
		}
		if rd.Err() != nil {
			tb.Fatal(rd.Err())
		}
	}
	return out
}

func openPolicy(tb testing.TB, h *Host, policy runtime.ErrorPolicy) (*Operator, *rejects) {
	tb.Helper()
	r := &rejects{policy: policy}
	op := open(tb, load(tb, h, "poison"), runtime.OpenContext{OnError: policy, Reject: r.reject})
	return op, r
}

// TestIsolateSkipKeepsNeighbours: a trap and a user error in a batch of 8
// cost only their own records: the 6 good ones come out exactly once and
// in order, and the on-error gets the two bad ones with their positions.
func TestIsolateSkipKeepsNeighbours(t *testing.T) {
	h := newHost(t, func(c *Config) { c.RestartDelay = 0 })
	op, r := openPolicy(t, h, runtime.PolicySkip)
	b, n := poisonBatch("", "", "trap", "", "", "fail", "", "")
	out := &sink{}
	if err := op.Process(0, b, n, out); err != nil {
		t.Fatal(err)
	}
	if got := ns(t, out); !slices.Equal(got, []int64{1, 2, 4, 5, 7, 8}) {
		t.Errorf("output %v, want 1 2 4 5 7 8", got)
	}
	if len(r.got) != 2 {
		t.Fatalf("%d records rejected, want 2", len(r.got))
	}
	trap, fail := r.got[0], r.got[1]
	if trap.Position != 3 || !trap.Restart || !strings.Contains(trap.Cause, "sluice_process: wasm trap: unreachable") ||
		!strings.Contains(trap.Err.Error(), `plugin "poison" (operator op1, subtask 1/1) export sluice_process at input record 3 (key "kc"): wasm trap`) {
		t.Errorf("trap: position %d restart %v cause %q err %v", trap.Position, trap.Restart, trap.Cause, trap.Err)
	}
	if fail.Position != 6 || fail.Restart || !strings.Contains(fail.Cause, "user error): bad record") {
		t.Errorf("fail: position %d restart %v cause %q", fail.Position, fail.Restart, fail.Cause)
	}
	// positions count across batches
	b, n = poisonBatch("fail")
	if err := op.Process(0, b, n, out); err != nil || r.got[2].Position != 9 {
		t.Errorf("second batch: %v, position %d, want 9", err, r.got[2].Position)
	}
}

// TestIsolateFailNamesRecordAndEmitsWhatCameBefore: under fail the error
// names the first bad record and its key, and the records before it come
// out (once, in order), as a Flink task would have emitted them; nothing
// after it does.
func TestIsolateFailNamesRecordAndEmitsWhatCameBefore(t *testing.T) {
	h := newHost(t, nil)
	op, _ := openPolicy(t, h, runtime.PolicyFail)
	b, n := poisonBatch("", "", "", "", "fail", "", "trap", "")
	out := &sink{}
	err := op.Process(0, b, n, out)
	wantErr(t, err, `plugin "poison" (operator op1, subtask 1/1) export sluice_process at input record 5 (key "ke"): plugin returned status -3 (user error): bad record; the record: {"n":5,"c":"fail"}`)
	if got := ns(t, out); !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Errorf("output %v, want the four records before the bad one", got)
	}
	out = &sink{}
	// The SDKs name the record of their call ("record 0: " once narrowed
	// down to it): the host's position replaces it.
	b, n = poisonBatch("", "", "rec0", "")
	err = op.Process(0, b, n, out)
	wantErr(t, err, `plugin "poison" (operator op1, subtask 1/1) export sluice_process at input record 11 (key "kc"): plugin returned status -3 (user error): bad record; the record: {"n":3,"c":"rec0"}`) // after the 8 of the first batch
}

// TestRestartLimit: records that keep poisoning the instance fail the job
// once they pass RestartAttempts within RestartWindow.
func TestRestartLimit(t *testing.T) {
	h := newHost(t, func(c *Config) { c.RestartAttempts, c.RestartDelay, c.RestartWindow = 2, time.Millisecond, time.Hour })
	op, r := openPolicy(t, h, runtime.PolicySkip)
	b, n := poisonBatch("trap", "", "trap", "", "trap", "")
	out := &sink{}
	err := op.Process(0, b, n, out)
	pe := wantErr(t, err, `plugin "poison" (operator op1, subtask 1/1) export sluice_process at input record 5 (key "ke"): crashed 3 times in 1h0m0s: restart limit reached (restart-attempts 2); last crash: wasm trap: unreachable`)
	if !errors.Is(pe, ErrRestartLimit) || !errors.Is(pe, ErrTrap) {
		t.Errorf("errors.Is: restart limit %v, trap %v", errors.Is(pe, ErrRestartLimit), errors.Is(pe, ErrTrap))
	}
	if len(r.got) != 2 || !slices.Equal(ns(t, out), []int64{2, 4}) {
		t.Errorf("rejected %d, output %v", len(r.got), ns(t, out))
	}
}

// TestJournalUndoesFailedCall: a call that wrote keyed state then failed
// leaves the state as it found it when the operator may run its records
// again.
func TestJournalUndoesFailedCall(t *testing.T) {
	h := newHost(t, nil)
	st := NewMemoryState()
	if err := st.Put(0, []byte("\xa1k"), []byte("old")); err != nil {
		t.Fatal(err)
	}
	r := &rejects{policy: runtime.PolicySkip}
	op := open(t, load(t, h, "script"), runtime.OpenContext{State: st, OnError: runtime.PolicySkip, Reject: r.reject})
	s := &script{}
	key, val, other := s.data([]byte("\xa1k")), s.data([]byte("new")), s.data([]byte("\xa1x"))
	s.do(opStatePut, 0, 0, key, 2, val, 3).do(opStatePut, 0, 0, other, 2, val, 3).do(opStateDel, 0, 0, key, 2).do(opTrap, 0)
	if _, err := s.run(op); err == nil {
		t.Fatal("the trap did not fail the call")
	}
	got, ok, _ := st.Get(0, []byte("\xa1k"), nil)
	if !ok || string(got) != "old" || st.Len() != 1 {
		t.Errorf("state after the failed call: %q %v, %d values; want \"old\" and 1 value", got, ok, st.Len())
	}
}

// TestJournalLogsAKeyOnce: a call writing one key again and again logs the
// value it found once (it logged every write: a guest overwriting an 8 MiB
// value in a loop grew the log until the kernel killed the host), and undo
// still restores that value, or the key's absence.
func TestJournalLogsAKeyOnce(t *testing.T) {
	st := NewMemoryState()
	if err := st.Put(0, []byte("k"), []byte("old")); err != nil {
		t.Fatal(err)
	}
	j := &journal{inner: st}
	j.begin()
	for i := 0; i < 1000; i++ {
		if err := j.Put(0, []byte("k"), []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
		if err := j.Put(0, []byte("fresh"), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := j.Delete(0, []byte("k")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := j.Put(1, []byte("k"), []byte("other slot")); err != nil {
		t.Fatal(err)
	}
	if len(j.log) != 3 {
		t.Fatalf("%d log entries, want 3 (k and fresh in slot 0, k in slot 1)", len(j.log))
	}
	if err := j.undo(); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := st.Get(0, []byte("k"), nil); !ok || string(got) != "old" || st.Len() != 1 {
		t.Errorf("after undo: %q %v, %d values", got, ok, st.Len())
	}
	// a new call logs afresh
	j.begin()
	if err := j.Put(0, []byte("k"), []byte("2")); err != nil || len(j.log) != 1 {
		t.Fatalf("the next call: %v, %d entries", err, len(j.log))
	}
}

// TestIsolateRunawayCostsOneTimeout: a batch stopped at its call-timeout is
// narrowed one record a call, not by halves (each half holding the runaway
// would wait a whole timeout again: 1 + log2(16) = 5 of them here): with 16
// records and one runaway, two timeouts in all (the batch's and the
// record's), the 15 good records out once and in order, one restart. The
// host's clock is a fake that moves 10 ms at each reading, so the count of
// readings says how many timeouts were waited, whatever the machine's load.
func TestIsolateRunawayCostsOneTimeout(t *testing.T) {
	h := newHost(t, func(c *Config) { c.CallTimeout, c.RestartDelay = time.Second, 0 })
	words := make([]string, 16)
	words[9] = "spin"
	b, n := poisonBatch(words...)
	want := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16}
	for _, policy := range []runtime.ErrorPolicy{runtime.PolicySkip, runtime.PolicyFail} {
		op, r := openPolicy(t, h, policy)
		var clock time.Time
		readings := 0
		fuelBoundOf(t, op).f.now = func() time.Time { readings++; clock = clock.Add(10 * time.Millisecond); return clock }
		out := &sink{}
		err := op.Process(0, b, n, out)
		// a timeout is ~100 readings (1 s at 10 ms), a call that ends at once 2
		if readings > 300 {
			t.Errorf("%s: %d clock readings: more than two timeouts were waited", policy, readings)
		}
		if policy == runtime.PolicyFail {
			wantErr(t, err, `plugin "poison" (operator op1, subtask 1/1) export sluice_process at input record 10 (key "kj"): deadline exceeded: the call ran past its call-timeout of 1s; the record: {"n":10,"c":"spin"}`)
			if got := ns(t, out); !slices.Equal(got, want[:9]) {
				t.Errorf("fail: output %v, want records 1 to 9", got)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := ns(t, out); !slices.Equal(got, want) {
			t.Errorf("skip: output %v, want %v", got, want)
		}
		if len(r.got) != 1 || r.got[0].Position != 10 || !r.got[0].Restart || !errors.Is(r.got[0].Err, ErrDeadline) {
			t.Fatalf("skip: rejected %+v, want record 10 once, by its deadline", r.got)
		}
	}
}

// TestIsolateFailSplitsABatchTooBigForOneCall: under fail, a batch whose
// output is over max-output-bytes as one call but not in halves is done in
// smaller calls: every record's output comes out once, in order, and the
// job goes on (it used to fail naming no record, after all of it had gone
// downstream).
func TestIsolateFailSplitsABatchTooBigForOneCall(t *testing.T) {
	b, n := poisonBatch(make([]string, 16)...)
	h := newHost(t, func(c *Config) { c.MaxOutputBytes = len(b) * 3 / 4 })
	op, r := openPolicy(t, h, runtime.PolicyFail)
	out := &sink{}
	if err := op.Process(0, b, n, out); err != nil {
		t.Fatal(err)
	}
	want := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	if got := ns(t, out); !slices.Equal(got, want) || len(r.got) != 0 {
		t.Errorf("output %v, %d rejected; want every record once and none rejected", got, len(r.got))
	}
}

// TestRefusalNamedWhenTheCallRunsOn: a guest that goes on past a refused
// host call until its call-timeout is told of the refusal too (it was
// told only of the timeout, hiding what to fix): here a state_put over
// the state-memory limit.
func TestRefusalNamedWhenTheCallRunsOn(t *testing.T) {
	h := newHost(t, func(c *Config) { c.CallTimeout = 50 * time.Millisecond })
	st := runtime.NewKeyedStore(128, 0, 127)
	st.SetLimit(100)
	op := open(t, load(t, h, "script"), runtime.OpenContext{State: st, KeyGroupStart: 0, KeyGroupEnd: 127})
	s := &script{}
	key, val := s.data([]byte("\xa1k")), s.data(make([]byte, 200))
	s.do(opStatePut, 0, 0, key, 2, val, 200).do(opSpin, 0)
	_, err := s.run(op)
	if !errors.Is(err, ErrDeadline) || !errors.Is(err, ErrState) ||
		!strings.Contains(err.Error(), "the call ran past its call-timeout of 50ms, after the host had refused one of its calls, which the guest went on past: keyed state: state_put slot 0: keyed state would hold 266 bytes, past the limit of 100 bytes") {
		t.Fatalf("%v", err)
	}
}

// TestHostStatusWithoutARefusal: a guest returning the host-refused status
// (-7) when the host refused none of its calls is told so (the status's
// name alone blamed the host).
func TestHostStatusWithoutARefusal(t *testing.T) {
	h := newHost(t, nil)
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	s := &script{}
	s.do(opError, int32(abi.StatusHost), 0, 0)
	_, err := s.run(op)
	wantErr(t, err, prefix+"plugin returned status -7 (host refused a call), but the host refused none of the call's host calls: the plugin returned it of its own accord")
}
