package watermark

import (
	"reflect"
	"testing"
)

// TestCombinedTwoInputs: the vectors of Flink's two-input operator tests
// (AbstractStreamOperator with IndexedCombinedWatermarkStatus: input 1's
// watermark waits for input 2 until input 2 goes idle, counts alone while
// it is, and is held back again once input 2 is active, at its own
// watermark, without re-alignment), and its statuses (idle only when both
// inputs are, active again when either is).
func TestCombinedTwoInputs(t *testing.T) {
	wm := func(w int64) Output { return Output{Watermark: w, HasWatermark: true} }
	c := NewCombined(2)
	steps := []struct {
		name string
		got  Output
		want Output
	}{
		{"input 1 at 1", c.InputWatermark(1, 0), Output{}}, // input 2 still at Min
		{"input 2 idle", c.InputStatus(true, 1), wm(1)},
		{"input 1 at 3", c.InputWatermark(3, 0), wm(3)},
		{"input 2 active", c.InputStatus(false, 1), Output{}},
		{"input 1 at 4", c.InputWatermark(4, 0), Output{}}, // input 2, at Min, holds it back
		{"input 2 at 10", c.InputWatermark(10, 1), wm(4)},
		{"input 1 idle", c.InputStatus(true, 0), wm(10)},
		{"input 2 idle", c.InputStatus(true, 1), Output{Idle: true}},
		{"a watermark while idle", c.InputWatermark(12, 0), wm(12)}, // it clears input 1's idleness
		{"input 2 active", c.InputStatus(false, 1), Output{}},       // input 2 at 10: no rise
		{"input 1 idle", c.InputStatus(true, 0), Output{}},
		{"input 2 idle again", c.InputStatus(true, 1), Output{Idle: true}},
		{"input 1 active", c.InputStatus(false, 0), Output{Active: true}},
	}
	for _, s := range steps {
		if !reflect.DeepEqual(s.got, s.want) {
			t.Fatalf("%s: %+v, want %+v", s.name, s.got, s.want)
		}
	}
	if c.Watermark() != 12 {
		t.Errorf("watermark %d, want 12", c.Watermark())
	}
}
