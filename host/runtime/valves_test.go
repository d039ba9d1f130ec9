package runtime

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/host/watermark"
)

// TestInputValvesPerInput: a two-input operator's gate keeps one valve per
// input, as Flink's StreamTwoInputProcessor does (channels 0 and 1 are
// input 1's, channel 2 input 2's), and the operator's watermark is
// min(input 1, input 2) over the inputs that are not idle. With one valve
// over all three channels the last step would flush the maximum over every
// channel (50, input 2's) before IDLE; per input, input 1's valve flushes
// its own maximum (20) and input 2's 50 never reaches the operator. A
// union (every channel input 1) keeps one valve.
func TestInputValvesPerInput(t *testing.T) {
	wm := func(w int64) watermark.Output { return watermark.Output{Watermark: w, HasWatermark: true} }
	iv := newInputValves([]int{0, 0, 1})
	var got []watermark.Output
	feed := func(outs []watermark.Output) {
		for _, o := range outs {
			if o != (watermark.Output{}) {
				got = append(got, o)
			}
		}
	}
	feed(iv.watermark(50, 2)) // input 2 at 50; input 1 at Min
	feed(iv.watermark(10, 0))
	feed(iv.watermark(20, 1)) // input 1 at 10
	feed(iv.status(true, 2))  // input 2 idle: input 1 alone
	feed(iv.status(true, 0))  // input 1 at 20
	feed(iv.status(true, 1))  // input 1 idle: both idle
	want := []watermark.Output{wm(10), wm(20), {Idle: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the operator got %+v, want %+v", got, want)
	}

	merged := watermark.NewValve(3) // what one valve over the gate gives
	var one []watermark.Output
	for _, o := range []watermark.Output{merged.InputWatermark(50, 2), merged.InputWatermark(10, 0), merged.InputWatermark(20, 1),
		merged.InputStatus(true, 2), merged.InputStatus(true, 0), merged.InputStatus(true, 1)} {
		if o != (watermark.Output{}) {
			one = append(one, o)
		}
	}
	if w := []watermark.Output{wm(10), wm(20), {Watermark: 50, HasWatermark: true, Idle: true}}; !reflect.DeepEqual(one, w) {
		t.Fatalf("one valve over the gate gives %+v, want %+v: the vector must tell them apart", one, w)
	}

	u := newInputValves([]int{0, 0})
	if len(u.valves) != 1 || u.combined != nil {
		t.Fatalf("a union has %d valves (combined %v), want one", len(u.valves), u.combined != nil)
	}
	got = nil
	feed(u.watermark(5, 0))
	feed(u.watermark(7, 1))
	if !reflect.DeepEqual(got, []watermark.Output{wm(5)}) {
		t.Fatalf("the union got %+v", got)
	}
}
