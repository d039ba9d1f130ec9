package window

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
)

// MergeGroup is one callback of TimeWindow.mergeWindows: the windows to
// merge, in the iteration order of the Java HashSet Flink collects them
// in, and their cover.
type MergeGroup struct {
	Windows []Window
	Result  Window
}

// MergeWindows is TimeWindow.mergeWindows: windows sorted by start
// (stably), runs of intersecting windows covered, and a group for each
// run of more than one distinct window.
func MergeWindows(windows []Window) []MergeGroup {
	sorted := slices.Clone(windows)
	slices.SortStableFunc(sorted, func(a, b Window) int { return cmp.Compare(a.Start, b.Start) })
	var out []MergeGroup
	var cur *MergeGroup
	flush := func() {
		if cur != nil && len(cur.Windows) > 1 {
			cur.Windows = hashSetOrder(cur.Windows)
			out = append(out, *cur)
		}
	}
	for _, c := range sorted {
		switch {
		case cur == nil:
			cur = &MergeGroup{Windows: []Window{c}, Result: c}
		case cur.Result.Intersects(c):
			cur.Result = cur.Result.Cover(c)
			if !slices.Contains(cur.Windows, c) { // a HashSet holds a window once
				cur.Windows = append(cur.Windows, c)
			}
		default:
			flush()
			cur = &MergeGroup{Windows: []Window{c}, Result: c}
		}
	}
	flush()
	return out
}

// hashSetOrder is the iteration order of a java.util.HashSet into which
// ws were added in order (distinct): by bucket (spread hash & (capacity -
// 1)), then insertion order within a bucket. The table starts at 16 and
// doubles past a load of 0.75; a resize keeps each bucket's order.
// (Java treeifies a bucket of 8 or more colliding windows in a table of
// 64 or more; no session merge comes near that.)
func hashSetOrder(ws []Window) []Window {
	capacity := 16
	for len(ws) > capacity*3/4 {
		capacity *= 2
	}
	type item struct {
		w      Window
		bucket int
		at     int
	}
	items := make([]item, len(ws))
	for i, w := range ws {
		h := uint32(w.HashCode())
		items[i] = item{w, int((h ^ h>>16) & uint32(capacity-1)), i}
	}
	slices.SortFunc(items, func(a, b item) int {
		if c := cmp.Compare(a.bucket, b.bucket); c != 0 {
			return c
		}
		return cmp.Compare(a.at, b.at)
	})
	out := make([]Window, len(items))
	for i, it := range items {
		out[i] = it.w
	}
	return out
}

// MergingSet is Flink's MergingWindowSet for one key: each in-flight
// session window and the state window holding its contents. A merge
// keeps one of the merged windows' state windows (the first of the merged
// pre-existing windows in HashSet order, as Flink picks it) and folds the
// others into it.
type MergingSet struct {
	mapping map[Window]Window
}

// NewMergingSet returns an empty set.
func NewMergingSet() *MergingSet { return &MergingSet{mapping: map[Window]Window{}} }

// Merge is what an AddWindow merged: Flink's MergeFunction.merge
// arguments.
type Merge struct {
	Result Window // the merged window
	// Merged: the pre-existing windows merged into Result (the new window
	// not among them), in HashSet order; their triggers are cleared
	Merged []Window
	// StateWindow keeps the merged contents; MergedStateWindows, in order,
	// are folded into it (reduce(target, reduce(s1, s2, ...)), as
	// mergeNamespaces does) and dropped
	StateWindow        Window
	MergedStateWindows []Window
}

// AddWindow is MergingWindowSet.addWindow: it adds newW, merging it with
// the windows it intersects, and returns the window the element belongs
// to, and the merge done (nil if none needed the merge function).
func (s *MergingSet) AddWindow(newW Window) (Window, *Merge) {
	windows := make([]Window, 0, len(s.mapping)+1)
	for w := range s.mapping {
		windows = append(windows, w)
	}
	// the mapping's windows never intersect: their starts differ, so the
	// order of the map does not reach the stable sort
	slices.SortFunc(windows, func(a, b Window) int { return cmp.Compare(a.Start, b.Start) })
	windows = append(windows, newW)
	result, mergedNew := newW, false
	groups := MergeWindows(windows)
	var merge *Merge
	for _, g := range groups {
		merged := slices.Clone(g.Windows)
		if i := slices.Index(merged, newW); i >= 0 {
			merged = slices.Delete(merged, i, i+1)
			mergedNew, result = true, g.Result
		}
		stateWindow := s.mapping[merged[0]]
		var mergedStates []Window
		for _, m := range merged {
			if sw, ok := s.mapping[m]; ok {
				delete(s.mapping, m)
				mergedStates = append(mergedStates, sw)
			}
		}
		s.mapping[g.Result] = stateWindow
		if i := slices.Index(mergedStates, stateWindow); i >= 0 {
			mergedStates = slices.Delete(mergedStates, i, i+1)
		}
		if !(slices.Contains(merged, g.Result) && len(merged) == 1) {
			merge = &Merge{Result: g.Result, Merged: merged, StateWindow: stateWindow, MergedStateWindows: mergedStates}
		}
	}
	if len(groups) == 0 || (result == newW && !mergedNew) {
		s.mapping[result] = result
	}
	return result, merge
}

// StateWindow is getStateWindow: the state window of w, if w is in flight.
func (s *MergingSet) StateWindow(w Window) (Window, bool) {
	sw, ok := s.mapping[w]
	return sw, ok
}

// RetireWindow is retireWindow: w is done (fired and cleaned up, or late).
func (s *MergingSet) RetireWindow(w Window) error {
	if _, ok := s.mapping[w]; !ok {
		return fmt.Errorf("window %s is not in the merging window set", w)
	}
	delete(s.mapping, w)
	return nil
}

// Len is the number of windows in flight.
func (s *MergingSet) Len() int { return len(s.mapping) }

// Windows lists the windows in flight by start.
func (s *MergingSet) Windows() []Window {
	out := make([]Window, 0, len(s.mapping))
	for w := range s.mapping {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b Window) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

// Encode appends the set (window and state window pairs by start, 32
// bytes each, big-endian) to dst: how the runtime keeps it as keyed state.
func (s *MergingSet) Encode(dst []byte) []byte {
	for _, w := range s.Windows() {
		sw := s.mapping[w]
		dst = binary.BigEndian.AppendUint64(dst, uint64(w.Start))
		dst = binary.BigEndian.AppendUint64(dst, uint64(w.End))
		dst = binary.BigEndian.AppendUint64(dst, uint64(sw.Start))
		dst = binary.BigEndian.AppendUint64(dst, uint64(sw.End))
	}
	return dst
}

// DecodeMergingSet reads what Encode wrote.
func DecodeMergingSet(b []byte) (*MergingSet, error) {
	if len(b)%32 != 0 {
		return nil, fmt.Errorf("merging window set: %d bytes is not a whole number of 32-byte entries", len(b))
	}
	s := NewMergingSet()
	for ; len(b) > 0; b = b[32:] {
		u := func(i int) int64 { return int64(binary.BigEndian.Uint64(b[8*i:])) }
		s.mapping[Window{u(0), u(1)}] = Window{u(2), u(3)}
	}
	return s, nil
}
