package runtime

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/window"
)

// winFn, when set, makes newWin run a sum on v as a plugin function of
// that kind (reduce or process) instead of the built-in: the Flink
// vectors of window_test.go then run through the plugin path with the
// same expected output.
var winFn pipeline.Kind

// fakeWindowFn is a plugin function in Go, doing what a plugin does
// through the host: a reduce summing v in its keyed state slot 0 (the
// accumulator an envelope, as the Go SDK keeps it), or a process-window
// summing v over the window's records after the header.
type fakeWindowFn struct {
	kind  pipeline.Kind
	ctx   *OpenContext
	w     abi.Writer
	calls int
}

func newFakeWindowFn(kind pipeline.Kind) *fakeWindowFn { return &fakeWindowFn{kind: kind} }

func (f *fakeWindowFn) Open(ctx *OpenContext) error { f.ctx = ctx; return nil }
func (f *fakeWindowFn) Close(Collector) error       { return nil }

func (f *fakeWindowFn) Process(_ int, b []byte, count int, out Collector) error {
	f.calls++
	rd := abi.NewReader(b, count)
	f.w.Reset()
	if f.kind == pipeline.KindProcess {
		if !rd.Next() {
			return fmt.Errorf("no header: %v", rd.Err())
		}
		h := rd.Current()
		if _, _, err := abi.ReadWindowHeader(h.Value); err != nil {
			return err
		}
		var sum int64
		n := 0
		for rd.Next() {
			raw, _, _ := abi.MapField(rd.Current().Value, "v")
			v, _ := abi.ReadInt(raw)
			sum += v
			n++
		}
		if n != count-1 {
			return fmt.Errorf("%d records after the header of a call of %d", n, count)
		}
		k, _ := abi.ReadStr(h.Key)
		f.w.Append(0, false, nil, enc("k", string(k), "v", sum))
		return out.Emit(0, f.w.Buf, f.w.Count)
	}
	for rd.Next() {
		r := rd.Current()
		acc, ok, err := f.ctx.State.Get(0, r.Key, nil)
		if err != nil {
			return err
		}
		res := r.Raw
		if ok {
			ard := abi.NewReader(acc, 1)
			ard.Next()
			a := ard.Current()
			av, _, _ := abi.MapField(a.Value, "v")
			rv, _, _ := abi.MapField(r.Value, "v")
			x, _ := abi.ReadInt(av)
			y, _ := abi.ReadInt(rv)
			k, _ := abi.ReadStr(a.Key)
			res = abi.AppendEnvelope(nil, r.Time, r.HasTime, r.Key, enc("k", string(k), "v", x+y))
		}
		if err := f.ctx.State.Put(0, r.Key, res); err != nil {
			return err
		}
		f.w.AppendRaw(res)
	}
	return out.Emit(0, f.w.Buf, f.w.Count)
}

// The Flink vectors of the built-in windows (WindowOperatorTest's
// tumbling, sliding, sessions, lateness, snapshot and restore; offsets
// and negative times; rescaled restore) with the sum as a reduce plugin
// and as a process-window plugin: the same windows, the same output.
func TestWindowPluginFunctionsFlinkVectors(t *testing.T) {
	tests := []struct {
		name string
		fn   func(*testing.T)
	}{
		{"tumbling", TestWindowTumblingFlinkWindowOperatorTest},
		{"sliding", TestWindowSlidingFlinkWindowOperatorTest},
		{"offsets", TestWindowOffsetsAndNegativeTimes},
		{"sessions", TestWindowSessionsMerge},
		{"sessions-flink", TestWindowSessionsFlinkWindowOperatorTest},
		{"lateness", TestWindowAllowedLatenessAndLateOutput},
		{"session-lateness", TestWindowSessionLateness},
		{"rescaled", TestWindowStateRestoresRescaled},
	}
	for _, kind := range []pipeline.Kind{pipeline.KindReduce, pipeline.KindProcess} {
		for _, c := range tests {
			t.Run(string(kind)+"/"+c.name, func(t *testing.T) {
				winFn = kind
				defer func() { winFn = "" }()
				c.fn(t)
			})
		}
	}
}

// A reduce plugin is called once per (key, window) of a batch, with that
// group's records; its state is the window's accumulator, a process
// window's contents the list of its records.
func TestWindowPluginFunctionState(t *testing.T) {
	winFn = pipeline.KindReduce
	h := newWin(t, pipeline.KindSum, pipeline.Window{Type: pipeline.WindowSliding, Size: 2 * time.Second, Slide: time.Second}, false, 0, 127)
	winFn = ""
	fn := h.op.fn.(*fakeWindowFn)
	h.in("a@100=1", "b@200=2", "a@300=3", "a@1500=4")
	// windows: a [-1000,1000) [0,2000) [1000,3000), b [-1000,1000) [0,2000)
	if fn.calls != 5 {
		t.Errorf("%d reduce calls for 5 (key, window) groups", fn.calls)
	}
	if h.store.Len(slotContents) != 5 {
		t.Errorf("%d accumulators, want 5", h.store.Len(slotContents))
	}
	h.wm(MaxWatermark)
	h.expect(sumOut("a", 4, -1000, 1000), sumOut("a", 8, 0, 2000), sumOut("a", 4, 1000, 3000),
		sumOut("b", 2, -1000, 1000), sumOut("b", 2, 0, 2000))

	winFn = pipeline.KindProcess
	h = newWin(t, pipeline.KindSum, tumbling3s, false, 0, 127)
	winFn = ""
	h.in("a@100=1", "a@300=3", "b@5=7")
	c := h.store.lookup(slotContents, h.op.cellKey(abi.AppendStr(nil, "a"), window.Window{Start: 0, End: 3000}))
	if c == nil || binary.BigEndian.Uint32(c.val) != 2 {
		t.Fatalf("contents of a's window: %v", c)
	}
	h.wm(2999)
	h.expect(sumOut("a", 4, 0, 3000), sumOut("b", 7, 0, 3000))
	if h.store.Len(slotContents) != 0 {
		t.Errorf("contents left after firing: %d", h.store.Len(slotContents))
	}
}
