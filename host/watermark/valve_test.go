package watermark

import (
	"fmt"
	"slices"
	"testing"
)

// step is one input to the valve and what it must emit, nothing else:
// "W<n>" a watermark, "IDLE", "ACTIVE".
type step struct {
	in   string // "wm", "idle", "active"
	ch   int
	wm   int64
	want []string
}

func w(ch int, wm int64, want ...string) step { return step{"wm", ch, wm, want} }
func idle(ch int, want ...string) step        { return step{"idle", ch, 0, want} }
func active(ch int, want ...string) step      { return step{"active", ch, 0, want} }

func render(o Output) []string {
	var out []string
	if o.HasWatermark {
		out = append(out, fmt.Sprintf("W%d", o.Watermark))
	}
	if o.Idle {
		out = append(out, "IDLE")
	}
	if o.Active {
		out = append(out, "ACTIVE")
	}
	return out
}

func run(t *testing.T, v *Valve, steps []step) {
	t.Helper()
	for i, s := range steps {
		var o Output
		switch s.in {
		case "wm":
			o = v.InputWatermark(s.wm, s.ch)
		case "idle":
			o = v.InputStatus(true, s.ch)
		case "active":
			o = v.InputStatus(false, s.ch)
		}
		if got := render(o); !slices.Equal(got, s.want) {
			t.Fatalf("step %d (%s ch %d %d): emitted %v, want %v", i+1, s.in, s.ch, s.wm, got, s.want)
		}
	}
}

// The vectors of Flink's StatusWatermarkValveTest, test by test.
func TestValveFlinkVectors(t *testing.T) {
	cases := []struct {
		name  string
		n     int
		steps []step
		check func(t *testing.T, v *Valve)
	}{
		{"SingleInputIncreasingWatermarks", 1, []step{w(0, 0, "W0"), w(0, 25, "W25")}, nil},
		{"SingleInputDecreasingWatermarksYieldsNoOutput", 1, []step{w(0, 25, "W25"), w(0, 18), w(0, 42, "W42")}, nil},
		{"SingleInputWatermarkStatusToggling", 1, []step{active(0), idle(0, "IDLE"), idle(0), active(0, "ACTIVE")}, nil},
		{"SingleInputWatermarksIntactDuringIdleness", 1, []step{w(0, 25, "W25"), idle(0, "IDLE"), w(0, 50)}, func(t *testing.T, v *Valve) {
			if v.ChannelWatermark(0) != 25 {
				t.Fatalf("channel 0 watermark %d during idleness, want 25", v.ChannelWatermark(0))
			}
			run(t, v, []step{active(0, "ACTIVE"), w(0, 50, "W50")})
		}},
		{"MultipleInputYieldsWatermarkOnlyWhenAllChannelsReceivesWatermarks", 3, []step{w(0, 0), w(1, 0), w(2, 0, "W0")}, nil},
		{"MultipleInputIncreasingWatermarks", 3, []step{w(0, 0), w(1, 0), w(2, 0, "W0"),
			w(0, 12), w(2, 8), w(2, 10), w(1, 15, "W10"), w(2, 17, "W12"), w(0, 20, "W15")}, nil},
		{"MultipleInputDecreasingWatermarksYieldsNoOutput", 3, []step{w(0, 25), w(1, 10), w(2, 17, "W10"),
			w(0, 12), w(1, 8), w(2, 15)}, nil},
		{"MultipleInputWatermarkStatusToggling", 2, []step{active(0), active(1), idle(1), idle(0, "IDLE"),
			idle(0), idle(1), active(1, "ACTIVE"), active(0)}, nil},
		{"MultipleInputWatermarkAdvancingWithPartiallyIdleChannels", 3, []step{w(0, 15), w(1, 10), idle(2, "W10"),
			w(1, 18, "W15"), w(0, 20, "W18")}, nil},
		{"MultipleInputWatermarkAdvancingAsChannelsIndividuallyBecomeIdle", 3, []step{w(0, 25), w(1, 10), w(2, 17, "W10"),
			idle(1, "W17"), idle(2, "W25")}, nil},
		{"MultipleInputFlushMaxWatermarkAndWatermarkStatusOnceAllInputsBecomeIdle", 3, []step{w(0, 10), w(1, 5), w(2, 3, "W3"),
			idle(0), idle(1), idle(2, "W10", "IDLE")}, nil},
		{"MultipleInputWatermarkRealignmentAfterResumeActive", 3, []step{w(0, 10), w(1, 7), w(2, 3, "W3"), idle(2, "W7"), active(2)}, func(t *testing.T, v *Valve) {
			if v.Aligned(2) {
				t.Fatal("channel 2 aligned right after it became active again behind the output")
			}
			run(t, v, []step{w(2, 5)})
			if v.ChannelWatermark(2) != 5 {
				t.Fatalf("channel 2 watermark %d, want 5", v.ChannelWatermark(2))
			}
			run(t, v, []step{w(2, 9)})
			if !v.Aligned(2) {
				t.Fatal("channel 2 not re-aligned after catching up")
			}
			run(t, v, []step{w(1, 12, "W9")})
		}},
		{"NoOutputWhenAllActiveChannelsAreUnaligned", 3, []step{w(0, 10), w(1, 7), idle(2, "W7"), active(2), idle(0), idle(1)}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := NewValve(c.n)
			run(t, v, c.steps)
			if c.check != nil {
				c.check(t, v)
			}
		})
	}
}

// A reference valve written from the rules, not the code: random inputs
// over 1..8 channels; the output never goes backwards and is, whenever it
// changes, the minimum over the aligned channels (or the flushed maximum).
func TestValveNeverBackwards(t *testing.T) {
	seed := uint64(1)
	next := func(n uint64) uint64 { seed = seed*6364136223846793005 + 1442695040888963407; return (seed >> 33) % n }
	for round := 0; round < 2000; round++ {
		n := int(next(8)) + 1
		v := NewValve(n)
		last := Min
		for i := 0; i < 50; i++ {
			c := int(next(uint64(n)))
			var o Output
			switch next(4) {
			case 0:
				o = v.InputStatus(true, c)
			case 1:
				o = v.InputStatus(false, c)
			default:
				o = v.InputWatermark(int64(next(100)), c)
			}
			if o.HasWatermark {
				if o.Watermark <= last {
					t.Fatalf("round %d: watermark %d after %d", round, o.Watermark, last)
				}
				last = o.Watermark
			}
			if v.Watermark() != last {
				t.Fatalf("round %d: Watermark() %d, last emitted %d", round, v.Watermark(), last)
			}
		}
	}
}
