package runtime

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/pipeline"
)

// winOut collects what a window operator emits, one line per record:
// "port time key value" (port 0 main, 1 late).
type winOut struct{ lines []string }

func (c *winOut) Emit(port int, b []byte, count int) error {
	rd := abi.NewReader(b, count)
	for rd.Next() {
		r := rd.Current()
		k, _ := codec.MsgpackToJSON(nil, r.Key)
		if r.Key == nil {
			k = []byte("-")
		}
		v, err := codec.MsgpackToJSON(nil, r.Value)
		if err != nil {
			return err
		}
		c.lines = append(c.lines, fmt.Sprintf("%d %d %s %s", port, r.Time, k, v))
	}
	return rd.Err()
}

func (c *winOut) take() []string {
	l := c.lines
	c.lines = nil
	return l
}

type winHarness struct {
	t     *testing.T
	op    *windowOp
	out   *winOut
	store *KeyedStore
	now   int64
}

// newWin opens a window operator of kind on field v with window w, at
// max parallelism 128 owning key groups [start, end]; lateRead: an
// operator reads <id>.late.
func newWin(t *testing.T, kind pipeline.Kind, w pipeline.Window, lateRead bool, start, end int) *winHarness {
	t.Helper()
	if w.StartField == "" {
		w.StartField, w.EndField = pipeline.DefaultStartField, pipeline.DefaultEndField
	}
	if w.Time == "" {
		w.Time = pipeline.TimeEvent
	}
	spec := &pipeline.Operator{ID: "win", Kind: kind, Field: "v", Window: &w}
	var fn Operator
	if winFn != "" && kind == pipeline.KindSum { // the sum as a plugin function (window_fn_test.go)
		spec.Kind, spec.Plugin = winFn, "fake-sum"
		fn = newFakeWindowFn(winFn)
	}
	op, err := newWindowOp(spec, []string{"k"}, 1000, fn)
	if err != nil {
		t.Fatal(err)
	}
	h := &winHarness{t: t, op: op, out: &winOut{}, store: NewKeyedStore(128, start, end)}
	op.clock = func() int64 { return h.now }
	ctx := &OpenContext{State: h.store, Port: func(tag string) int {
		if tag == pipeline.LateTag && lateRead {
			return 1
		}
		return -1
	}}
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// in feeds records "key@time" with v = 1, or "key@time=v".
func (h *winHarness) in(recs ...string) {
	h.t.Helper()
	var w abi.Writer
	for _, r := range recs {
		k, rest, _ := strings.Cut(r, "@")
		ts, v := rest, "1"
		if a, b, ok := strings.Cut(rest, "="); ok {
			ts, v = a, b
		}
		var tv, vv int64
		fmt.Sscan(ts, &tv)
		fmt.Sscan(v, &vv)
		w.Append(tv, true, abi.AppendStr(nil, k), enc("k", k, "v", vv))
	}
	if err := h.op.Process(0, w.Buf, w.Count, h.out); err != nil {
		h.t.Fatal(err)
	}
}

func (h *winHarness) wm(t int64) {
	h.t.Helper()
	if err := h.op.ProcessWatermark(t, h.out); err != nil {
		h.t.Fatal(err)
	}
}

// expect checks the records emitted since the last call, in any order
// (Flink's tests compare windows firing at one time sorted).
func (h *winHarness) expect(want ...string) {
	h.t.Helper()
	got := h.out.take()
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		h.t.Fatalf("emitted\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// out formats an expected main-output record of a sum on v.
func sumOut(key string, v, start, end int64) string {
	return fmt.Sprintf(`0 %d "%s" {"k":"%s","v":%d,"window_start":%d,"window_end":%d}`, end-1, key, key, v, start, end)
}

var tumbling3s = pipeline.Window{Type: pipeline.WindowTumbling, Size: 3 * time.Second}

// The input and watermarks of Flink's WindowOperatorTest
// .testTumblingEventTimeWindows (size 3 s, sum), with its snapshot and
// restore after 2999: each window fires once, when the watermark reaches
// its max timestamp, stamped with it.
func TestWindowTumblingFlinkWindowOperatorTest(t *testing.T) {
	h := newWin(t, pipeline.KindSum, tumbling3s, false, 0, 127)
	h.in("key2@3999", "key2@3000", "key1@20", "key1@0", "key1@999", "key2@1998", "key2@1999", "key2@1000")
	h.wm(999)
	h.wm(1999)
	h.expect()
	h.wm(2999)
	h.expect(sumOut("key1", 3, 0, 3000), sumOut("key2", 3, 0, 3000))
	// do a snapshot, close and restore again
	h = h.restore(pipeline.KindSum, tumbling3s)
	h.wm(3999)
	h.wm(4999)
	h.expect()
	h.wm(5999)
	h.expect(sumOut("key2", 2, 3000, 6000))
	h.wm(6999)
	h.wm(7999)
	h.expect()
	if h.store.Len(slotContents) != 0 || h.store.Len(slotTimers) != 0 {
		t.Errorf("state left after every window fired: %d contents, %d timers", h.store.Len(slotContents), h.store.Len(slotTimers))
	}
}

// WindowOperatorTest.testSlidingEventTimeWindows (size 3 s, slide 1 s,
// sum), every record and watermark, the snapshot and restore after 2999
// included.
func TestWindowSlidingFlinkWindowOperatorTest(t *testing.T) {
	h := newWin(t, pipeline.KindSum, pipeline.Window{Type: pipeline.WindowSliding, Size: 3 * time.Second, Slide: time.Second}, false, 0, 127)
	h.in("key2@3999", "key2@3000", "key1@20", "key1@0", "key1@999", "key2@1998", "key2@1999", "key2@1000")
	h.wm(999)
	h.expect(sumOut("key1", 3, -2000, 1000))
	h.wm(1999)
	h.expect(sumOut("key1", 3, -1000, 2000), sumOut("key2", 3, -1000, 2000))
	h.wm(2999)
	h.expect(sumOut("key1", 3, 0, 3000), sumOut("key2", 3, 0, 3000))
	// do a snapshot, close and restore again
	h = h.restore(pipeline.KindSum, pipeline.Window{Type: pipeline.WindowSliding, Size: 3 * time.Second, Slide: time.Second})
	h.wm(3999)
	h.expect(sumOut("key2", 5, 1000, 4000))
	h.wm(4999)
	h.expect(sumOut("key2", 2, 2000, 5000))
	h.wm(5999)
	h.expect(sumOut("key2", 2, 3000, 6000))
	h.wm(6999)
	h.expect()
}

// Offsets and negative timestamps: TumblingEventTimeWindowsTest's
// negative offset (-100 ms on 5 s) and times before 1970.
func TestWindowOffsetsAndNegativeTimes(t *testing.T) {
	h := newWin(t, pipeline.KindSum, pipeline.Window{Type: pipeline.WindowTumbling, Size: 5 * time.Second, Offset: -100 * time.Millisecond}, false, 0, 127)
	h.in("a@0", "a@4899", "a@4900", "a@-1", "a@-5100", "a@-5101")
	h.wm(-5102)
	h.expect()
	h.wm(-101)
	h.expect(sumOut("a", 1, -10100, -5100), sumOut("a", 1, -5100, -100))
	h.wm(4898)
	h.expect()
	h.wm(4899)
	h.expect(sumOut("a", 3, -100, 4900))
	h.wm(MaxWatermark)
	h.expect(sumOut("a", 1, 4900, 9900))

	// sliding with an offset, before 1970: SlidingEventTimeWindowsTest's
	// 5 s / 1 s / -100 ms, moved 10 s back
	h = newWin(t, pipeline.KindCount, pipeline.Window{Type: pipeline.WindowSliding, Size: 5 * time.Second, Slide: time.Second, Offset: -100 * time.Millisecond}, false, 0, 127)
	h.in("a@-10000")
	h.wm(MaxWatermark)
	var want []string
	for _, start := range []int64{-14100, -13100, -12100, -11100, -10100} {
		want = append(want, fmt.Sprintf(`0 %d "a" {"k":"a","count":1,"window_start":%d,"window_end":%d}`, start+4999, start, start+5000))
	}
	h.expect(want...)
}

// Sessions (gap 3 s) merge as Flink's MergingWindowSet merges them: a
// record bridging two sessions merges them into one, whose sum is
// every record's; adjacent windows ([0,3000) and [3000,6000)) merge.
func TestWindowSessionsMerge(t *testing.T) {
	h := newWin(t, pipeline.KindSum, pipeline.Window{Type: pipeline.WindowSession, Gap: 3 * time.Second}, false, 0, 127)
	h.in("key2@0", "key2@1000", "key2@2500", "key1@10", "key1@1000")
	h.in("key2@5501", "key2@6000", "key2@6000", "key2@6050")
	h.wm(3998)
	h.expect()
	h.wm(3999)
	h.expect(sumOut("key1", 2, 10, 4000))
	h.wm(12000)
	h.expect(sumOut("key2", 3, 0, 5500), sumOut("key2", 4, 5501, 9050))

	h = newWin(t, pipeline.KindSum, pipeline.Window{Type: pipeline.WindowSession, Gap: 3 * time.Second}, false, 0, 127)
	h.in("a@0=1", "a@5000=10", "b@0=1", "b@3000=2")
	h.in("a@2500=100") // [2500,5500) bridges [0,3000) and [5000,8000)
	h.wm(2999)
	h.expect() // b's [0,3000) merged with [3000,6000): adjacent windows intersect
	h.wm(MaxWatermark)
	h.expect(sumOut("a", 111, 0, 8000), sumOut("b", 3, 0, 6000))
	if h.store.Len(slotContents)+h.store.Len(slotTimers)+h.store.Len(slotMerging) != 0 {
		t.Errorf("state left: %d contents, %d timers, %d merging sets", h.store.Len(slotContents), h.store.Len(slotTimers), h.store.Len(slotMerging))
	}
}

// Allowed lateness, after WindowOperatorTest.testLateness (tumbling 2 s,
// lateness 500 ms) with the default EventTimeTrigger, which fires and
// keeps the window (Flink's test purges): a record within the lateness
// fires the window again at once with all its contents; one past it goes
// to the late side output, or is dropped and counted when nothing reads
// it.
func TestWindowAllowedLatenessAndLateOutput(t *testing.T) {
	for _, read := range []bool{true, false} {
		w := pipeline.Window{Type: pipeline.WindowTumbling, Size: 2 * time.Second, AllowedLateness: 500 * time.Millisecond}
		h := newWin(t, pipeline.KindSum, w, read, 0, 127)
		h.in("key2@500")
		h.wm(1500)
		h.in("key2@1300")
		h.wm(2300)
		h.expect(sumOut("key2", 2, 0, 2000))
		// window.maxTimestamp() + allowedLateness > currentWatermark: not late
		h.in("key2@1997")
		h.expect(sumOut("key2", 3, 0, 2000))
		h.wm(6000)
		h.expect() // the cleanup timer (2499) fires nothing
		// window.maxTimestamp() + allowedLateness <= currentWatermark: late
		h.in("key2@1998")
		h.wm(7000)
		if read {
			h.expect(`1 1998 "key2" {"k":"key2","v":1}`)
		} else {
			h.expect()
		}
		if got, want := h.op.dropped.Load(), map[bool]int64{true: 0, false: 1}[read]; got != want {
			t.Errorf("late side output read %v: numLateRecordsDropped %d, want %d", read, got, want)
		}
	}
}

// A global window with a count trigger fires and purges every n records
// of a key (Flink's countWindow(n)); a partial window never fires.
func TestWindowGlobalCount(t *testing.T) {
	h := newWin(t, pipeline.KindMax, pipeline.Window{Type: pipeline.WindowGlobal, Count: 3}, false, 0, 127)
	h.in("a@1=5", "a@2=9", "b@3=1", "a@4=7", "a@5=1", "a@6=2", "a@7=3", "a@8=4")
	out := `0 9223372036854775807 "a" {"k":"a","v":%d,"window_start":-9223372036854775808,"window_end":9223372036854775807}`
	h.expect(fmt.Sprintf(out, 9), fmt.Sprintf(out, 3))
	if err := h.op.Close(h.out); err != nil {
		t.Fatal(err)
	}
	h.expect()
}

// Processing-time windows on the injected clock: assigned by the clock,
// fired when it passes their max timestamp, the rest at the end of input.
func TestWindowProcessingTime(t *testing.T) {
	h := newWin(t, pipeline.KindCount, pipeline.Window{Type: pipeline.WindowTumbling, Size: time.Second, Time: pipeline.TimeProcessing}, false, 0, 127)
	h.now = 10_500
	h.in("a@0", "a@99999999")
	h.expect()
	// the clock reaches the max timestamp: the window fires before the
	// batch; the record after it lands in the same window anew, whose
	// timer is due at once (Flink fires a timer in the past at once)
	h.now = 10_999
	h.in("a@5")
	h.expect(`0 10999 "a" {"k":"a","count":2,"window_start":10000,"window_end":11000}`,
		`0 10999 "a" {"k":"a","count":1,"window_start":10000,"window_end":11000}`)
	h.now = 11_000
	h.in("a@5")
	h.expect()
	h.wm(MaxWatermark) // event time does not fire processing-time windows
	h.expect()
	if err := h.op.Close(h.out); err != nil {
		t.Fatal(err)
	}
	h.expect(`0 11999 "a" {"k":"a","count":1,"window_start":11000,"window_end":12000}`)
}

// Window contents, timers and merging sets are keyed state: a snapshot
// taken mid-window and restored into two subtasks of a rescaled job (key
// groups split) fires the same windows as the uninterrupted run.
func TestWindowStateRestoresRescaled(t *testing.T) {
	w := pipeline.Window{Type: pipeline.WindowSession, Gap: 3 * time.Second, AllowedLateness: time.Second}
	first := []string{"a@0", "b@10", "c@20", "a@2000", "d@9000", "e@1"}
	second := []string{"a@4000", "b@2500", "c@30000", "e@3002"}
	whole := newWin(t, pipeline.KindSum, w, false, 0, 127)
	whole.in(first...)
	whole.wm(3005)
	whole.in(second...)
	whole.wm(MaxWatermark)
	want := whole.out.take()

	h := newWin(t, pipeline.KindSum, w, false, 0, 127)
	h.in(first...)
	h.wm(3005)
	got := h.out.take()
	start, groups := h.store.SnapshotKeyGroups()
	for _, r := range [][2]int{{0, 63}, {64, 127}} {
		part := map[int][]byte{}
		for i, g := range groups {
			if kg := start + i; kg >= r[0] && kg <= r[1] && len(g) > 0 {
				part[kg] = g
			}
		}
		st := NewKeyedStore(128, r[0], r[1])
		if err := st.RestoreKeyGroups(part); err != nil {
			t.Fatal(err)
		}
		n := newWin(t, pipeline.KindSum, w, false, r[0], r[1])
		n.store = st
		n.op.store = nil
		if err := n.op.Open(&OpenContext{State: st, Port: func(string) int { return -1 }}); err != nil {
			t.Fatal(err)
		}
		n.wm(3005)
		var mine []string
		for _, rec := range second {
			k, _, _ := strings.Cut(rec, "@")
			if kg, err := st.KeyGroup(abi.AppendStr(nil, k)); err == nil && kg >= r[0] {
				mine = append(mine, rec)
			}
		}
		if len(mine) > 0 {
			n.in(mine...)
		}
		n.wm(MaxWatermark)
		got = append(got, n.out.take()...)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("restored and rescaled:\n  %s\nuninterrupted:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if len(want) < 5 {
		t.Fatalf("too few windows to tell: %v", want)
	}
}

// The end of input without a MaxWatermark (a bounded job before the
// engine delivers watermarks) fires every event-time window once.
func TestWindowCloseFiresEverything(t *testing.T) {
	h := newWin(t, pipeline.KindMinBy, tumbling3s, false, 0, 127)
	h.in("a@1=5", "a@2=3", "a@3100=8", "b@-1=4")
	if err := h.op.Close(h.out); err != nil {
		t.Fatal(err)
	}
	h.expect(sumOut("a", 3, 0, 3000), sumOut("a", 8, 3000, 6000), sumOut("b", 4, -3000, 0))
	if math.MaxInt64 != MaxWatermark {
		t.Fatal("MaxWatermark")
	}
}

// A record an event-time window cannot take (no event time, no field)
// goes to the on-error with its position; under fail the job fails.
func TestWindowBadRecordsGoToOnError(t *testing.T) {
	h := newWin(t, pipeline.KindSum, tumbling3s, false, 0, 127)
	var failures []*RecordFailure
	h.op.reject = func(f *RecordFailure) error { failures = append(failures, f); return nil }
	var w abi.Writer
	w.Append(0, false, abi.AppendStr(nil, "a"), enc("k", "a", "v", 1))
	w.Append(5, true, abi.AppendStr(nil, "a"), enc("k", "a"))
	w.Append(7, true, abi.AppendStr(nil, "a"), enc("k", "a", "v", 2))
	if err := h.op.Process(0, w.Buf, w.Count, h.out); err != nil {
		t.Fatal(err)
	}
	if len(failures) != 2 || failures[0].Position != 1 || failures[1].Position != 2 ||
		!strings.Contains(failures[0].Err.Error(), "record has no event time") || !strings.Contains(failures[1].Err.Error(), `no field "v"`) {
		t.Fatalf("failures %+v", failures)
	}
	h.wm(MaxWatermark)
	h.expect(`0 2999 "a" {"k":"a","v":2,"window_start":0,"window_end":3000}`)

	h = newWin(t, pipeline.KindSum, tumbling3s, false, 0, 127)
	w.Reset()
	w.Append(0, false, abi.AppendStr(nil, "a"), enc("k", "a", "v", 1))
	err := h.op.Process(0, w.Buf, w.Count, h.out)
	if err == nil || !strings.Contains(err.Error(), "window sum: input record 1: record has no event time") {
		t.Fatalf("under fail: %v", err)
	}
}

// Allowed lateness on sessions: a record within the lateness joins its
// session; one that extends it past the watermark waits for the new
// end, one inside it fires it again at once.
func TestWindowSessionLateness(t *testing.T) {
	h := newWin(t, pipeline.KindCount, pipeline.Window{Type: pipeline.WindowSession, Gap: time.Second, AllowedLateness: time.Second}, true, 0, 127)
	h.in("a@0", "a@500")
	h.wm(1499)
	h.expect(`0 1499 "a" {"k":"a","count":2,"window_start":0,"window_end":1500}`)
	// [700,1700) extends the fired session to [0,1700), whose end the
	// watermark has not reached: it fires when it does
	h.in("a@700")
	h.expect()
	h.wm(1699)
	h.expect(`0 1699 "a" {"k":"a","count":3,"window_start":0,"window_end":1700}`)
	h.in("a@200") // [200,1200) lies inside [0,1700), already fired: it fires again at once
	h.expect(`0 1699 "a" {"k":"a","count":4,"window_start":0,"window_end":1700}`)
	h.wm(2699) // the cleanup time 1699 + 1000
	h.expect()
	h.in("a@100") // its session [100,1100) is past cleanup: late
	h.expect(`1 100 "a" {"k":"a","v":1}`)
}

// restore reopens h's operator on a copy of its state, as a restart from
// a snapshot does.
func (h *winHarness) restore(kind pipeline.Kind, w pipeline.Window) *winHarness {
	h.t.Helper()
	start, groups := h.store.SnapshotKeyGroups()
	m := map[int][]byte{}
	for i, g := range groups {
		if len(g) > 0 {
			m[start+i] = g
		}
	}
	n := newWin(h.t, kind, w, false, 0, 127)
	st := NewKeyedStore(128, 0, 127)
	if err := st.RestoreKeyGroups(m); err != nil {
		h.t.Fatal(err)
	}
	n.store, n.op.timers = st, nil
	if err := n.op.Open(&OpenContext{State: st, Port: func(string) int { return -1 }}); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// WindowOperatorTest.testSessionWindows (gap 3 s, the sum of the values,
// a snapshot and restore in the middle), every record and watermark.
func TestWindowSessionsFlinkWindowOperatorTest(t *testing.T) {
	w := pipeline.Window{Type: pipeline.WindowSession, Gap: 3 * time.Second}
	h := newWin(t, pipeline.KindSum, w, false, 0, 127)
	h.in("key2@0=1", "key2@1000=2", "key2@2500=3", "key1@10=1", "key1@1000=2")
	h = h.restore(pipeline.KindSum, w)
	h.in("key1@2500=3", "key2@5501=4", "key2@6000=5", "key2@6000=5", "key2@6050=6")
	h.wm(12000)
	h.expect(sumOut("key1", 6, 10, 5500), sumOut("key2", 6, 0, 5500), sumOut("key2", 20, 5501, 9050))
	h.in("key2@15000=10", "key2@15000=20")
	h.wm(17999)
	h.expect(sumOut("key2", 30, 15000, 18000))
}
