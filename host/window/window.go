// Package window assigns records to windows and merges session windows
// exactly as Apache Flink does (TimeWindow, TumblingEventTimeWindows,
// SlidingEventTimeWindows, EventTimeSessionWindows, GlobalWindows,
// MergingWindowSet). It is pure: no clock, no state backend, no I/O; the
// runtime's window operator (host/runtime/window.go) keeps the state and
// the timers.
package window

import (
	"fmt"
	"math"
)

// Window is Flink's TimeWindow: [Start, End), end exclusive. The global
// window is {math.MinInt64, math.MaxInt64} (Flink's GlobalWindow, whose
// maxTimestamp is Long.MAX_VALUE).
type Window struct{ Start, End int64 }

// Global is the one window of a global window assigner.
var Global = Window{math.MinInt64, math.MaxInt64}

// MaxTimestamp is the largest timestamp in the window, End - 1: an
// event-time window fires when the watermark reaches it. The global
// window's is Long.MAX_VALUE.
func (w Window) MaxTimestamp() int64 {
	if w == Global {
		return math.MaxInt64
	}
	return w.End - 1
}

// Intersects is TimeWindow.intersects: bounds inclusive, so [0,3) and
// [3,6) intersect and a session merges them.
func (w Window) Intersects(o Window) bool { return w.Start <= o.End && w.End >= o.Start }

// Cover is TimeWindow.cover: the smallest window holding both.
func (w Window) Cover(o Window) Window {
	return Window{min(w.Start, o.Start), max(w.End, o.End)}
}

func (w Window) String() string { return fmt.Sprintf("[%d, %d)", w.Start, w.End) }

// HashCode is TimeWindow.hashCode (MathUtils.longToIntWithBitMixing of
// start + end): it orders a Java HashSet of windows, which decides the
// state window a session merge keeps (MergingSet).
func (w Window) HashCode() int32 {
	in := uint64(w.Start + w.End)
	in = (in ^ (in >> 30)) * 0xbf58476d1ce4e5b9
	in = (in ^ (in >> 27)) * 0x94d049bb133111eb
	in ^= in >> 31
	return int32(uint32(in))
}

// StartWithOffset is TimeWindow.getWindowStartWithOffset: the start of
// the window of size that holds timestamp, windows starting at offset
// modulo size. Negative timestamps are right: the remainder is taken
// towards minus infinity.
func StartWithOffset(timestamp, offset, size int64) int64 {
	rem := (timestamp - offset) % size
	if rem < 0 {
		return timestamp - (rem + size)
	}
	return timestamp - rem
}

// Type is the kind of window assigner.
type Type string

const (
	Tumbling Type = "tumbling"
	Sliding  Type = "sliding"
	Session  Type = "session"
	GlobalT  Type = "global"
)

// Assigner is a window assigner with its default trigger: event time or
// processing time for tumbling, sliding and session windows (Flink's
// EventTimeTrigger, ProcessingTimeTrigger), a purging count trigger for
// global windows (Flink's countWindow(n): GlobalWindows with
// PurgingTrigger.of(CountTrigger.of(n))).
type Assigner struct {
	Type      Type
	Size      int64 // tumbling, sliding: milliseconds
	Slide     int64 // sliding
	Offset    int64 // tumbling, sliding
	Gap       int64 // session
	Count     int64 // global: records per window
	EventTime bool  // tumbling, sliding, session: event time, else processing time
}

// Check refuses the parameters Flink's factories refuse, with their rules.
func (a Assigner) Check() error {
	switch a.Type {
	case Tumbling:
		if a.Size <= 0 || abs(a.Offset) >= a.Size {
			return fmt.Errorf("tumbling window: size must be > 0 and |offset| < size (Flink: abs(offset) < size), got size %d ms, offset %d ms", a.Size, a.Offset)
		}
	case Sliding:
		if a.Size <= 0 || a.Slide <= 0 || abs(a.Offset) >= a.Slide {
			return fmt.Errorf("sliding window: size and slide must be > 0 and |offset| < slide (Flink: abs(offset) < slide and size > 0), got size %d ms, slide %d ms, offset %d ms", a.Size, a.Slide, a.Offset)
		}
	case Session:
		if a.Gap <= 0 {
			return fmt.Errorf("session window: gap must be > 0 (Flink: 0 < size), got %d ms", a.Gap)
		}
	case GlobalT:
		if a.Count <= 0 {
			return fmt.Errorf("global window: count must be > 0, got %d", a.Count)
		}
	default:
		return fmt.Errorf("unknown window type %q", a.Type)
	}
	return nil
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// Merging reports whether windows of a merge (sessions).
func (a Assigner) Merging() bool { return a.Type == Session }

// IsEventTime is WindowAssigner.isEventTime: global windows are not.
func (a Assigner) IsEventTime() bool { return a.EventTime && a.Type != GlobalT }

// Assign appends to dst the windows of an element with timestamp ts (the
// record's event time, or the current processing time for a
// processing-time assigner), as assignWindows does: one for tumbling and
// session, size/slide for sliding (latest start first, Flink's loop),
// the global window for global.
func (a Assigner) Assign(ts int64, dst []Window) []Window {
	switch a.Type {
	case Tumbling:
		start := StartWithOffset(ts, a.Offset%a.Size, a.Size)
		return append(dst, Window{start, start + a.Size})
	case Sliding:
		last := StartWithOffset(ts, a.Offset, a.Slide)
		for start := last; start > ts-a.Size; start -= a.Slide {
			dst = append(dst, Window{start, start + a.Size})
		}
		return dst
	case Session:
		return append(dst, Window{ts, ts + a.Gap})
	}
	return append(dst, Global)
}
