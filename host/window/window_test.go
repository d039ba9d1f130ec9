package window

import (
	"math"
	"slices"
	"testing"
)

// TimeWindowTest.testGetWindowStartWithOffset, every assertion.
func TestStartWithOffsetFlinkTimeWindowTest(t *testing.T) {
	cases := []struct{ ts, offset, size, want int64 }{
		// [0,7),[7,14),[14,21)...
		{1, 0, 7, 0}, {6, 0, 7, 0}, {7, 0, 7, 7}, {8, 0, 7, 7},
		// [-4,3),[3,10),[10,17)...
		{1, 3, 7, -4}, {2, 3, 7, -4}, {3, 3, 7, 3}, {9, 3, 7, 3}, {10, 3, 7, 10},
		// [-2,5),[5,12),[12,19)...
		{1, -2, 7, -2}, {-2, -2, 7, -2}, {3, -2, 7, -2}, {4, -2, 7, -2}, {7, -2, 7, 5}, {12, -2, 7, 12},
		// for GMT+8:00
		{1470902048450, -8 * 3600_000, 86400_000, 1470844800000},
		// negative timestamps, below -size too (the remainder form of
		// current Flink: the older (ts - offset + size) % size was wrong
		// there)
		{-1, 0, 7, -7}, {-7, 0, 7, -7}, {-8, 0, 7, -14}, {-15, 0, 7, -21}, {-15, 3, 7, -18},
	}
	for _, c := range cases {
		if got := StartWithOffset(c.ts, c.offset, c.size); got != c.want {
			t.Errorf("StartWithOffset(%d, %d, %d) = %d, want %d", c.ts, c.offset, c.size, got, c.want)
		}
	}
}

func assign(t *testing.T, a Assigner, ts int64, want ...Window) {
	t.Helper()
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	got := a.Assign(ts, nil)
	g, w := slices.Clone(got), slices.Clone(want)
	// Flink's sliding tests use containsInAnyOrder
	less := func(x, y Window) int { return int(x.Start - y.Start) }
	slices.SortFunc(g, less)
	slices.SortFunc(w, less)
	if !slices.Equal(g, w) {
		t.Errorf("%+v: Assign(%d) = %v, want %v", a, ts, got, want)
	}
}

// TumblingEventTimeWindowsTest: testWindowAssignment,
// testWindowAssignmentWithGlobalOffset,
// testWindowAssignmentWithNegativeGlobalOffset, testTimeUnits.
func TestTumblingFlinkTumblingEventTimeWindowsTest(t *testing.T) {
	a := Assigner{Type: Tumbling, Size: 5000, EventTime: true}
	assign(t, a, 0, Window{0, 5000})
	assign(t, a, 4999, Window{0, 5000})
	assign(t, a, 5000, Window{5000, 10000})
	a.Offset = 100
	assign(t, a, 100, Window{100, 5100})
	assign(t, a, 5099, Window{100, 5100})
	assign(t, a, 5100, Window{5100, 10100})
	a.Offset = -100
	assign(t, a, 0, Window{-100, 4900})
	assign(t, a, 4899, Window{-100, 4900})
	assign(t, a, 4900, Window{4900, 9900})
	a.Offset = 1000
	assign(t, a, 1000, Window{1000, 6000})
	assign(t, a, 5999, Window{1000, 6000})
	assign(t, a, 6000, Window{6000, 11000})
	// negative timestamps
	a.Offset = 0
	assign(t, a, -1, Window{-5000, 0})
	assign(t, a, -5000, Window{-5000, 0})
	assign(t, a, -5001, Window{-10000, -5000})
}

// SlidingEventTimeWindowsTest: testWindowAssignment,
// testWindowAssignmentWithOffset, testWindowAssignmentWithNegativeOffset,
// testTimeUnits.
func TestSlidingFlinkSlidingEventTimeWindowsTest(t *testing.T) {
	a := Assigner{Type: Sliding, Size: 5000, Slide: 1000, EventTime: true}
	assign(t, a, 0, Window{-4000, 1000}, Window{-3000, 2000}, Window{-2000, 3000}, Window{-1000, 4000}, Window{0, 5000})
	assign(t, a, 4999, Window{0, 5000}, Window{1000, 6000}, Window{2000, 7000}, Window{3000, 8000}, Window{4000, 9000})
	assign(t, a, 5000, Window{1000, 6000}, Window{2000, 7000}, Window{3000, 8000}, Window{4000, 9000}, Window{5000, 10000})
	a.Offset = 100
	assign(t, a, 100, Window{-3900, 1100}, Window{-2900, 2100}, Window{-1900, 3100}, Window{-900, 4100}, Window{100, 5100})
	assign(t, a, 5099, Window{100, 5100}, Window{1100, 6100}, Window{2100, 7100}, Window{3100, 8100}, Window{4100, 9100})
	assign(t, a, 5100, Window{1100, 6100}, Window{2100, 7100}, Window{3100, 8100}, Window{4100, 9100}, Window{5100, 10100})
	a.Offset = -100
	assign(t, a, 0, Window{-4100, 900}, Window{-3100, 1900}, Window{-2100, 2900}, Window{-1100, 3900}, Window{-100, 4900})
	assign(t, a, 4899, Window{-100, 4900}, Window{900, 5900}, Window{1900, 6900}, Window{2900, 7900}, Window{3900, 8900})
	assign(t, a, 4900, Window{900, 5900}, Window{1900, 6900}, Window{2900, 7900}, Window{3900, 8900}, Window{4900, 9900})
	a = Assigner{Type: Sliding, Size: 5000, Slide: 1000, Offset: 500, EventTime: true}
	assign(t, a, 100, Window{-4500, 500}, Window{-3500, 1500}, Window{-2500, 2500}, Window{-1500, 3500}, Window{-500, 4500})
	assign(t, a, 5499, Window{500, 5500}, Window{1500, 6500}, Window{2500, 7500}, Window{3500, 8500}, Window{4500, 9500})
	assign(t, a, 5100, Window{500, 5500}, Window{1500, 6500}, Window{2500, 7500}, Window{3500, 8500}, Window{4500, 9500})
	// the loop order: latest start first
	if got := (Assigner{Type: Sliding, Size: 3, Slide: 1}).Assign(10, nil); !slices.Equal(got, []Window{{10, 13}, {9, 12}, {8, 11}}) {
		t.Errorf("sliding order = %v", got)
	}
	// a slide that does not divide the size: ceil(size/slide) or floor windows
	a = Assigner{Type: Sliding, Size: 5, Slide: 2}
	assign(t, a, 0, Window{-4, 1}, Window{-2, 3}, Window{0, 5})
	assign(t, a, 1, Window{-2, 3}, Window{0, 5})
	assign(t, a, -3, Window{-6, -1}, Window{-4, 1})
}

// SlidingEventTimeWindowsTest.testInvalidParameters,
// TumblingEventTimeWindowsTest.testInvalidParameters,
// EventTimeSessionWindowsTest.testInvalidParameters.
func TestInvalidParametersFlink(t *testing.T) {
	bad := []Assigner{
		{Type: Tumbling, Size: -1000}, {Type: Tumbling, Size: 10000, Offset: 20000}, {Type: Tumbling, Size: 10000, Offset: -11000},
		{Type: Sliding, Size: -2000, Slide: 1000}, {Type: Sliding, Size: 2000, Slide: -1000},
		{Type: Sliding, Size: -20000, Slide: 10000, Offset: -1000}, {Type: Sliding, Size: 20000, Slide: 10000, Offset: -11000},
		{Type: Sliding, Size: 20000, Slide: 10000, Offset: 11000},
		{Type: Session, Gap: -1000}, {Type: Session, Gap: 0}, {Type: GlobalT, Count: 0},
	}
	for _, a := range bad {
		if a.Check() == nil {
			t.Errorf("%+v: accepted", a)
		}
	}
}

// EventTimeSessionWindowsTest.testWindowAssignment, testTimeUnits.
func TestSessionAssignFlinkEventTimeSessionWindowsTest(t *testing.T) {
	a := Assigner{Type: Session, Gap: 5000, EventTime: true}
	assign(t, a, 0, Window{0, 5000})
	assign(t, a, 4999, Window{4999, 9999})
	assign(t, a, 5000, Window{5000, 10000})
	assign(t, a, -7, Window{-7, 4993})
}

func groupsEqual(t *testing.T, got []MergeGroup, want ...MergeGroup) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("merge groups = %v, want %v", got, want)
	}
	for i := range got {
		g, w := slices.Clone(got[i].Windows), slices.Clone(want[i].Windows)
		less := func(x, y Window) int { return int(x.Start - y.Start) }
		slices.SortFunc(g, less)
		slices.SortFunc(w, less)
		if got[i].Result != want[i].Result || !slices.Equal(g, w) {
			t.Errorf("merge group %d = %v, want %v (in any order)", i, got[i], want[i])
		}
	}
}

// EventTimeSessionWindowsTest: testMergeSinglePointWindow,
// testMergeSingleWindow, testMergeConsecutiveWindows,
// testMergeCoveringWindow.
func TestMergeWindowsFlinkEventTimeSessionWindowsTest(t *testing.T) {
	groupsEqual(t, MergeWindows([]Window{{0, 0}}))
	groupsEqual(t, MergeWindows([]Window{{0, 1}}))
	groupsEqual(t, MergeWindows([]Window{{0, 1}, {1, 2}, {2, 3}, {4, 5}, {5, 6}}),
		MergeGroup{[]Window{{0, 1}, {1, 2}, {2, 3}}, Window{0, 3}},
		MergeGroup{[]Window{{4, 5}, {5, 6}}, Window{4, 6}})
	groupsEqual(t, MergeWindows([]Window{{1, 1}, {0, 2}, {4, 7}, {5, 6}}),
		MergeGroup{[]Window{{1, 1}, {0, 2}}, Window{0, 2}},
		MergeGroup{[]Window{{5, 6}, {4, 7}}, Window{4, 7}})
}

func TestWindowBasics(t *testing.T) {
	w := Window{0, 5000}
	if w.MaxTimestamp() != 4999 {
		t.Errorf("max timestamp %d", w.MaxTimestamp())
	}
	if Global.MaxTimestamp() != math.MaxInt64 {
		t.Errorf("global max timestamp %d", Global.MaxTimestamp())
	}
	if !(Window{0, 3}).Intersects(Window{3, 6}) || (Window{0, 3}).Intersects(Window{4, 6}) {
		t.Error("intersects: bounds are inclusive")
	}
	// MathUtils.longToIntWithBitMixing(0) is 0; the mix is SplitMix64's
	if (Window{0, 0}).HashCode() != 0 {
		t.Errorf("hash of [0,0) = %d", (Window{0, 0}).HashCode())
	}
}

// hashSetOrder against a Java HashSet: with capacity 16 the bucket is the
// spread hash's low 4 bits.
func TestHashSetOrder(t *testing.T) {
	ws := []Window{{0, 4}, {5, 9}, {1, 5}, {2, 3}, {7, 8}}
	got := hashSetOrder(ws)
	bucket := func(w Window) uint32 { h := uint32(w.HashCode()); return (h ^ h>>16) & 15 }
	for i := 1; i < len(got); i++ {
		if bucket(got[i-1]) > bucket(got[i]) {
			t.Fatalf("order %v not by bucket", got)
		}
	}
	if len(got) != len(ws) {
		t.Fatalf("lost windows: %v", got)
	}
}

// Against the definition, over a grid of times, offsets and sizes: the
// start is offset + k*size for the k that puts ts in [start, start+size);
// a sliding assigner gives every window of that form holding ts, once.
func TestAssignAgainstDefinition(t *testing.T) {
	for size := int64(1); size <= 9; size++ {
		for offset := -size + 1; offset < size; offset++ {
			for ts := int64(-40); ts <= 40; ts++ {
				s := StartWithOffset(ts, offset, size)
				if s > ts || ts >= s+size || ((s-offset)%size+size)%size != 0 {
					t.Fatalf("StartWithOffset(%d, %d, %d) = %d", ts, offset, size, s)
				}
				for slide := int64(1); slide <= size; slide++ {
					if offset <= -slide || offset >= slide {
						continue
					}
					got := Assigner{Type: Sliding, Size: size, Slide: slide, Offset: offset}.Assign(ts, nil)
					var want []Window
					for start := ts - size - slide; start <= ts; start++ {
						if ((start-offset)%slide+slide)%slide == 0 && start <= ts && ts < start+size {
							want = append(want, Window{start, start + size})
						}
					}
					if !sameSet(got, want) || len(got) != len(want) {
						t.Fatalf("sliding %d/%d/%d at %d: %v, want %v", size, slide, offset, ts, got, want)
					}
				}
			}
		}
	}
}
