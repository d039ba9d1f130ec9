package window

import (
	"slices"
	"testing"
)

// mergeCheck is one addWindow of Flink's MergingWindowSetTest: the window
// returned, whether the merge function ran, its target, state window,
// sources (in any order) and merged state windows.
type mergeCheck struct {
	add, result  Window
	merged       bool
	target       Window
	stateWindow  Window
	sources      []Window
	mergedStates []Window
}

func (c mergeCheck) run(t *testing.T, s *MergingSet) {
	t.Helper()
	got, m := s.AddWindow(c.add)
	if got != c.result {
		t.Fatalf("addWindow(%v) = %v, want %v", c.add, got, c.result)
	}
	if (m != nil) != c.merged {
		t.Fatalf("addWindow(%v): merged %v, want %v", c.add, m != nil, c.merged)
	}
	if m == nil || c.sources == nil {
		return
	}
	if m.Result != c.target || m.StateWindow != c.stateWindow || !sameSet(m.Merged, c.sources) || !sameSet(m.MergedStateWindows, c.mergedStates) {
		t.Fatalf("addWindow(%v): merge %+v, want target %v state %v sources %v merged states %v", c.add, m, c.target, c.stateWindow, c.sources, c.mergedStates)
	}
}

func sameSet(a, b []Window) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	less := func(x, y Window) int { return int(x.Start - y.Start) }
	slices.SortFunc(a, less)
	slices.SortFunc(b, less)
	return slices.Equal(a, b)
}

func stateIs(t *testing.T, s *MergingSet, w, want Window) {
	t.Helper()
	if got, ok := s.StateWindow(w); !ok || got != want {
		t.Fatalf("getStateWindow(%v) = %v %v, want %v", w, got, ok, want)
	}
}

// MergingWindowSetTest.testIncrementalMerging, every step.
func TestMergingSetFlinkIncrementalMerging(t *testing.T) {
	s := NewMergingSet()
	mergeCheck{add: Window{0, 4}, result: Window{0, 4}}.run(t, s)
	stateIs(t, s, Window{0, 4}, Window{0, 4})
	mergeCheck{add: Window{0, 4}, result: Window{0, 4}}.run(t, s)
	mergeCheck{add: Window{3, 5}, result: Window{0, 5}, merged: true, target: Window{0, 5}, stateWindow: Window{0, 4}, sources: []Window{{0, 4}}, mergedStates: []Window{}}.run(t, s)
	mergeCheck{add: Window{4, 6}, result: Window{0, 6}, merged: true, target: Window{0, 6}, stateWindow: Window{0, 4}, sources: []Window{{0, 5}}, mergedStates: []Window{}}.run(t, s)
	stateIs(t, s, Window{0, 6}, Window{0, 4})
	// windows that fall into the already merged region
	for _, w := range []Window{{1, 4}, {0, 4}, {3, 5}, {4, 6}} {
		mergeCheck{add: w, result: Window{0, 6}}.run(t, s)
	}
	stateIs(t, s, Window{0, 6}, Window{0, 4})
	// windows that don't merge with the first bunch
	mergeCheck{add: Window{11, 14}, result: Window{11, 14}}.run(t, s)
	stateIs(t, s, Window{0, 6}, Window{0, 4})
	stateIs(t, s, Window{11, 14}, Window{11, 14})
	// windows that merge with the second bunch
	mergeCheck{add: Window{10, 13}, result: Window{10, 14}, merged: true, target: Window{10, 14}, stateWindow: Window{11, 14}, sources: []Window{{11, 14}}, mergedStates: []Window{}}.run(t, s)
	mergeCheck{add: Window{12, 15}, result: Window{10, 15}, merged: true, target: Window{10, 15}, stateWindow: Window{11, 14}, sources: []Window{{10, 14}}, mergedStates: []Window{}}.run(t, s)
	mergeCheck{add: Window{11, 14}, result: Window{10, 15}}.run(t, s)
	stateIs(t, s, Window{0, 6}, Window{0, 4})
	stateIs(t, s, Window{10, 15}, Window{11, 14})
	// retire the first batch of windows
	if err := s.RetireWindow(Window{0, 6}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.StateWindow(Window{0, 6}); ok {
		t.Fatal("retired window still has a state window")
	}
	stateIs(t, s, Window{10, 15}, Window{11, 14})
	if s.RetireWindow(Window{0, 6}) == nil {
		t.Fatal("retiring twice accepted")
	}
	// the set as keyed state
	r, err := DecodeMergingSet(s.Encode(nil))
	if err != nil || !slices.Equal(r.Windows(), s.Windows()) {
		t.Fatalf("decode: %v %v", r, err)
	}
	stateIs(t, r, Window{10, 15}, Window{11, 14})
}

// MergingWindowSetTest.testLateMerging: Flink allows either state window
// where HashSet order decides; here it is the one that order gives.
func TestMergingSetFlinkLateMerging(t *testing.T) {
	s := NewMergingSet()
	for _, w := range []Window{{0, 3}, {5, 8}, {10, 13}} {
		mergeCheck{add: w, result: w}.run(t, s)
		stateIs(t, s, w, w)
	}
	// a window that merges the later two windows
	first := hashSetOrder([]Window{{5, 8}, {8, 10}, {10, 13}})
	first = slices.DeleteFunc(first, func(w Window) bool { return w == (Window{8, 10}) })
	other := first[1]
	mergeCheck{add: Window{8, 10}, result: Window{5, 13}, merged: true, target: Window{5, 13}, stateWindow: first[0],
		sources: []Window{{5, 8}, {10, 13}}, mergedStates: []Window{other}}.run(t, s)
	stateIs(t, s, Window{0, 3}, Window{0, 3})
	for _, w := range []Window{{5, 8}, {8, 10}, {10, 13}} {
		mergeCheck{add: w, result: Window{5, 13}}.run(t, s)
	}
	stateIs(t, s, Window{5, 13}, first[0])
	// a window that merges all of them together
	_, m := s.AddWindow(Window{3, 5})
	if m == nil || m.Result != (Window{0, 13}) || !sameSet(m.Merged, []Window{{0, 3}, {5, 13}}) || len(m.MergedStateWindows) != 1 ||
		slices.Contains(m.MergedStateWindows, m.StateWindow) || !slices.Contains([]Window{{0, 3}, {5, 8}, {10, 13}}, m.StateWindow) {
		t.Fatalf("merge all: %+v", m)
	}
	stateIs(t, s, Window{0, 13}, m.StateWindow)
}

// MergingWindowSetTest.testMergeLargeWindowCoveringSingleWindow and
// testAddingIdenticalWindows.
func TestMergingSetFlinkCoveringAndIdentical(t *testing.T) {
	s := NewMergingSet()
	mergeCheck{add: Window{1, 2}, result: Window{1, 2}}.run(t, s)
	stateIs(t, s, Window{1, 2}, Window{1, 2})
	mergeCheck{add: Window{0, 3}, result: Window{0, 3}, merged: true}.run(t, s)
	stateIs(t, s, Window{0, 3}, Window{1, 2})

	s = NewMergingSet()
	mergeCheck{add: Window{1, 2}, result: Window{1, 2}}.run(t, s)
	mergeCheck{add: Window{1, 2}, result: Window{1, 2}}.run(t, s)
	stateIs(t, s, Window{1, 2}, Window{1, 2})
}
