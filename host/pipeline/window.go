package pipeline

import (
	"math"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"
)

// Window is an operator's window: or window-all: (Flink's
// keyBy(...).window(assigner) and windowAll(assigner)), the assigner with
// its default trigger. The operator's kind is the window function: a
// built-in aggregation or a reduce plugin, computed incrementally per
// window, or a process-window plugin (process:), given the window's
// records when it fires.
type Window struct {
	Pos  Pos
	All  bool   // window-all: non-keyed, parallelism 1
	Type string // tumbling, sliding, session, global
	// Size, Slide, Offset (tumbling, sliding), Gap (session): Flink's
	// TumblingEventTimeWindows.of(size, offset), SlidingEventTimeWindows.of
	// (size, slide, offset), EventTimeSessionWindows.withGap(gap). Offset
	// may be negative.
	Size, Slide, Offset, Gap time.Duration
	// Count: a global window fires and purges every Count records of a key
	// (Flink's countWindow(n)).
	Count int64
	// Time is event (the records' event time, windows fire on the
	// watermark) or processing (the host's clock).
	Time string
	// AllowedLateness keeps an event-time window this long past its end:
	// each late record within it fires the window again.
	AllowedLateness time.Duration
	// StartField, EndField name the output record's fields holding the
	// window's start and end (epoch milliseconds, end exclusive).
	StartField, EndField string
	KeyPos               map[string]Pos
}

// Window types and times.
const (
	WindowTumbling = "tumbling"
	WindowSliding  = "sliding"
	WindowSession  = "session"
	WindowGlobal   = "global"
	TimeEvent      = "event"
	TimeProcessing = "processing"
	// LateTag is the side output of a windowed operator that carries
	// the records too late for any of their windows (Flink's
	// sideOutputLateData): input: op.late.
	LateTag = "late"
	// DefaultStartField and DefaultEndField name the window bounds of an
	// output record when start-field and end-field are not given (the
	// column names of Flink SQL's window table functions).
	DefaultStartField = "window_start"
	DefaultEndField   = "window_end"
)

// windowKeys are the keys of a window: per type.
var windowKeys = map[string][]string{
	WindowTumbling: {"size", "offset"},
	WindowSliding:  {"size", "slide", "offset"},
	WindowSession:  {"gap"},
	WindowGlobal:   {"count"},
}

var windowCommon = []string{"type", "time", "allowed-lateness", "start-field", "end-field"}

// IsEventTime reports whether the window fires on watermarks.
func (w *Window) IsEventTime() bool { return w.Time == TimeEvent && w.Type != WindowGlobal }

// window decodes window: or window-all:.
func (d *decoder) window(n *yaml.Node, all bool, where string) *Window {
	what := "window"
	if all {
		what = "window-all"
	}
	ps, ok := d.mapping(n, what+" of "+where)
	if !ok {
		return nil
	}
	w := &Window{Pos: nodePos(deref(n)), All: all, Time: TimeEvent, StartField: DefaultStartField, EndField: DefaultEndField, KeyPos: map[string]Pos{}}
	for _, kv := range ps {
		if kv.Key.Value == "type" {
			w.Type, _ = d.oneOf(kv.Val, what+" type", WindowTumbling, WindowSliding, WindowSession, WindowGlobal)
		}
	}
	if !hasKey(ps, "type") {
		d.errorf(n, "%s of %s needs a type: tumbling, sliding, session or global", what, where)
	}
	// a negative offset is Flink's (TumblingEventTimeWindows.of(size, -offset))
	const anyDuration = time.Duration(math.MinInt64)
	for _, kv := range ps {
		k, v := kv.Key.Value, kv.Val
		w.KeyPos[k] = nodePos(kv.Key)
		allowed := append(slices.Clone(windowCommon), windowKeys[w.Type]...)
		if w.Type != "" && !slices.Contains(allowed, k) {
			if slices.Contains([]string{"size", "slide", "offset", "gap", "count"}, k) {
				d.errorf(kv.Key, "%s of %s: a %s window takes no %s (it takes %v)", what, where, w.Type, k, windowKeys[w.Type])
			} else {
				d.unknownKey(kv.Key, what+" of "+where, allowed)
			}
			continue
		}
		if _, isType := windowKeys[k]; isType && w.Type == "" {
			d.errorf(kv.Key, "%s of %s: write the window's type as type: %s (with its %v)", what, where, k, windowKeys[k])
			continue
		}
		switch k {
		case "type":
		case "size":
			w.Size, _ = d.duration(v, what+" size", time.Millisecond)
		case "slide":
			w.Slide, _ = d.duration(v, what+" slide", time.Millisecond)
		case "gap":
			w.Gap, _ = d.duration(v, what+" gap", time.Millisecond)
		case "offset":
			w.Offset, _ = d.duration(v, what+" offset", anyDuration)
		case "count":
			c, _ := d.integer(v, what+" count", 1, math.MaxInt32)
			w.Count = int64(c)
		case "time":
			w.Time, _ = d.oneOf(v, what+" time", TimeEvent, TimeProcessing)
		case "allowed-lateness":
			w.AllowedLateness, _ = d.duration(v, what+" allowed-lateness", 0)
		case "start-field":
			w.StartField, _ = d.str(v, what+" start-field")
		case "end-field":
			w.EndField, _ = d.str(v, what+" end-field")
		default:
			d.unknownKey(kv.Key, what+" of "+where, allowed)
		}
	}
	for _, req := range windowKeys[w.Type] {
		if req != "offset" && !hasKey(ps, req) {
			d.errorf(n, "%s of %s: a %s window needs %s", what, where, w.Type, req)
		}
	}
	switch {
	case w.Type == WindowTumbling && w.Size > 0 && (w.Offset >= w.Size || -w.Offset >= w.Size):
		d.errs.errorf(d.file, w.KeyPos["offset"], "%s of %s: offset %v must be within the size %v either way (Flink: abs(offset) < size)", what, where, w.Offset, w.Size)
	case w.Type == WindowSliding && w.Slide > 0 && (w.Offset >= w.Slide || -w.Offset >= w.Slide):
		d.errs.errorf(d.file, w.KeyPos["offset"], "%s of %s: offset %v must be within the slide %v either way (Flink: abs(offset) < slide)", what, where, w.Offset, w.Slide)
	}
	for _, k := range []string{"size", "slide", "gap", "offset", "allowed-lateness"} {
		var v time.Duration
		switch k {
		case "size":
			v = w.Size
		case "slide":
			v = w.Slide
		case "gap":
			v = w.Gap
		case "offset":
			v = w.Offset
		case "allowed-lateness":
			v = w.AllowedLateness
		}
		if v%time.Millisecond != 0 {
			d.errs.errorf(d.file, w.KeyPos[k], "%s of %s: %s %v is not a whole number of milliseconds (event time is in milliseconds)", what, where, k, v)
		}
	}
	if w.Type == WindowGlobal {
		if _, ok := w.KeyPos["time"]; ok {
			d.errs.errorf(d.file, w.KeyPos["time"], "%s of %s: a global window fires on its count, not on time", what, where)
		}
	}
	if _, ok := w.KeyPos["allowed-lateness"]; ok && !w.IsEventTime() && w.AllowedLateness > 0 {
		d.errs.errorf(d.file, w.KeyPos["allowed-lateness"], "%s of %s: allowed-lateness is for event-time windows (Flink ignores it for others)", what, where)
	}
	if w.StartField != "" && w.StartField == w.EndField {
		d.errs.errorf(d.file, w.KeyPos["end-field"], "%s of %s: start-field and end-field are both %q", what, where, w.StartField)
	}
	return w
}

// windows checks each windowed operator against the rest of the
// pipeline: its kind, its keying, and that event time has timestamps and
// watermarks upstream.
func (d *decoder) windows(p *Pipeline, byID map[string]*Operator) {
	for _, op := range p.Operators {
		w := op.Window
		if w == nil {
			continue
		}
		key := "window"
		if w.All {
			key = "window-all"
		}
		at := op.KeyPos[key]
		switch {
		case op.Kind.IsAggregation() || op.Kind == KindCount:
		case op.Kind == KindReduce || op.Kind == KindProcess: // a plugin: Flink's window(...).reduce(f) and .process(f)
		case op.Kind != "":
			d.errs.errorf(d.file, at, "%s is a %s: a window's function is a built-in aggregation (sum, min, max, min-by, max-by, count), a reduce plugin or a process-window plugin (process:)", name(op), op.Kind)
		}
		switch {
		case !w.All && op.KeyBy == nil:
			d.errs.errorf(d.file, at, "%s: window needs a keyed stream: add key-by, or write window-all for a non-keyed window (it runs at parallelism 1)", name(op))
		case w.All && op.KeyBy != nil:
			d.errs.errorf(d.file, at, "%s: window-all is the non-keyed window: drop key-by, or write window", name(op))
		case w.All && op.Parallelism > 1:
			d.errs.errorf(d.file, op.KeyPos["parallelism"], "%s: window-all runs at parallelism 1 (Flink's windowAll), not %d", name(op), op.Parallelism)
		}
		if op.KeyBy != nil {
			for i, f := range op.KeyBy.Fields {
				if op.Kind == KindCount && (f == w.StartField || f == w.EndField) {
					d.errs.errorf(d.file, op.KeyBy.FieldPos[i], "%s: key-by field %q is also a window bound's field: its records would hold it twice", name(op), f)
				}
			}
		}
		if op.Kind == KindCount && (w.StartField == CountField || w.EndField == CountField) {
			d.errs.errorf(d.file, at, "%s: a window bound's field is named %q, the field count writes", name(op), CountField)
		}
		if w.IsEventTime() && p.Mode != Batch {
			srcs := upstreamSources(op, byID)
			with := 0
			for _, s := range srcs {
				if p.WatermarksOf(s).Written() {
					with++
				}
			}
			if len(srcs) > 0 && with == 0 {
				d.errs.errorf(d.file, at, "%s: an event-time window needs timestamps and watermarks upstream, and no source it reads has watermarks: configured; add watermarks: to the source, or write time: processing", name(op))
			}
		}
	}
}

// upstreamSources lists the sources op reads, directly or not.
func upstreamSources(op *Operator, byID map[string]*Operator) []*Operator {
	seen := map[string]bool{}
	var out []*Operator
	var walk func(o *Operator)
	walk = func(o *Operator) {
		for _, in := range o.Inputs {
			up, ok := byID[in.Operator]
			if !ok || seen[up.ID] {
				continue
			}
			seen[up.ID] = true
			if up.Kind == KindSource {
				out = append(out, up)
				continue
			}
			walk(up)
		}
	}
	walk(op)
	return out
}
