package window

import (
	"slices"
	"testing"
)

// Modelled on MergingWindowSetTest.testIncrementalMerging: its sequence
// of adds, the window each lands in and the state window kept.
func TestMergingSetFlinkIncrementalMerging(t *testing.T) {
	s := NewMergingSet()
	// add initial window
	if w, m := s.AddWindow(Window{0, 4}); w != (Window{0, 4}) || m != nil {
		t.Fatalf("add [0,4) = %v %v", w, m)
	}
	if sw, _ := s.StateWindow(Window{0, 4}); sw != (Window{0, 4}) {
		t.Fatalf("state window %v", sw)
	}
	// add some more windows
	if w, m := s.AddWindow(Window{0, 4}); w != (Window{0, 4}) || m != nil {
		t.Fatalf("add [0,4) again = %v %v", w, m)
	}
	if w, m := s.AddWindow(Window{3, 5}); w != (Window{0, 5}) || m == nil || !slices.Equal(m.Merged, []Window{{0, 4}}) || m.StateWindow != (Window{0, 4}) || len(m.MergedStateWindows) != 0 {
		t.Fatalf("add [3,5) = %v %+v", w, m)
	}
	if sw, _ := s.StateWindow(Window{0, 5}); sw != (Window{0, 4}) {
		t.Fatalf("state window of [0,5) = %v", sw)
	}
	if w, m := s.AddWindow(Window{4, 6}); w != (Window{0, 6}) || m == nil || !slices.Equal(m.Merged, []Window{{0, 5}}) {
		t.Fatalf("add [4,6) = %v %+v", w, m)
	}
	if sw, _ := s.StateWindow(Window{0, 6}); sw != (Window{0, 4}) {
		t.Fatalf("state window of [0,6) = %v", sw)
	}
	// add some windows that falls into the already merged region
	if w, m := s.AddWindow(Window{1, 4}); w != (Window{0, 6}) || m != nil {
		t.Fatalf("add [1,4) = %v %+v", w, m)
	}
	if w, m := s.AddWindow(Window{0, 4}); w != (Window{0, 6}) || m != nil {
		t.Fatalf("add [0,4) into [0,6) = %v %+v", w, m)
	}
	if w, _ := s.AddWindow(Window{3, 5}); w != (Window{0, 6}) {
		t.Fatalf("add [3,5) into [0,6) = %v", w)
	}
	// add some more windows that don't merge with the first bunch
	if w, m := s.AddWindow(Window{11, 14}); w != (Window{11, 14}) || m != nil {
		t.Fatalf("add [11,14) = %v %+v", w, m)
	}
	if sw, _ := s.StateWindow(Window{11, 14}); sw != (Window{11, 14}) {
		t.Fatalf("state window of [11,14) = %v", sw)
	}
	if w, m := s.AddWindow(Window{10, 13}); w != (Window{10, 14}) || m == nil {
		t.Fatalf("add [10,13) = %v %+v", w, m)
	}
	if w, _ := s.AddWindow(Window{10, 12}); w != (Window{10, 14}) {
		t.Fatalf("add [10,12) = %v", w)
	}
	// add a window that merges the two regions
	w, m := s.AddWindow(Window{5, 10})
	if w != (Window{0, 14}) || m == nil || len(m.Merged) != 2 || len(m.MergedStateWindows) != 1 {
		t.Fatalf("add [5,10) = %v %+v", w, m)
	}
	// the state window kept is the first merged window in HashSet order
	first := hashSetOrder([]Window{{0, 6}, {5, 10}, {10, 14}})
	first = slices.DeleteFunc(first, func(x Window) bool { return x == (Window{5, 10}) })
	wantState := map[Window]Window{{0, 6}: {0, 4}, {10, 14}: {11, 14}}[first[0]]
	if m.StateWindow != wantState || !slices.Equal(m.Merged, first) {
		t.Fatalf("merge kept state %v of %v, want %v of %v", m.StateWindow, m.Merged, wantState, first)
	}
	if s.Len() != 1 {
		t.Fatalf("windows %v", s.Windows())
	}
	// round trip
	b := s.Encode(nil)
	r, err := DecodeMergingSet(b)
	if err != nil || !slices.Equal(r.Windows(), s.Windows()) {
		t.Fatalf("decode: %v %v", r, err)
	}
	if err := s.RetireWindow(Window{0, 14}); err != nil || s.Len() != 0 {
		t.Fatalf("retire: %v", err)
	}
	if s.RetireWindow(Window{0, 14}) == nil {
		t.Fatal("retire twice accepted")
	}
}

// Modelled on MergingWindowSetTest.testLateMerging: two windows merged
// across their gap by a late one.
func TestMergingSetFlinkLateMerging(t *testing.T) {
	s := NewMergingSet()
	s.AddWindow(Window{0, 3})
	s.AddWindow(Window{6, 9})
	w, m := s.AddWindow(Window{2, 7})
	if w != (Window{0, 9}) || m == nil || len(m.Merged) != 2 || len(m.MergedStateWindows) != 1 {
		t.Fatalf("add [2,7) = %v %+v", w, m)
	}
	if !slices.Contains([]Window{{0, 3}, {6, 9}}, m.StateWindow) || m.StateWindow == m.MergedStateWindows[0] {
		t.Fatalf("state windows %+v", m)
	}
}
