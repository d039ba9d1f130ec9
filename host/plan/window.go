package plan

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/host/pipeline"
)

// WindowText describes an operator's window as host plan prints it:
// "tumbling 10s offset 0s, event time, allowed lateness 0s, fields
// window_start/window_end"; "" for an operator without one.
func WindowText(op *pipeline.Operator) string {
	w := op.Window
	if w == nil {
		return ""
	}
	var b strings.Builder
	if w.All {
		b.WriteString("window-all ")
	}
	switch w.Type {
	case pipeline.WindowTumbling:
		fmt.Fprintf(&b, "tumbling %v offset %v", w.Size, w.Offset)
	case pipeline.WindowSliding:
		fmt.Fprintf(&b, "sliding %v slide %v offset %v", w.Size, w.Slide, w.Offset)
	case pipeline.WindowSession:
		fmt.Fprintf(&b, "session gap %v", w.Gap)
	case pipeline.WindowGlobal:
		fmt.Fprintf(&b, "global, fires every %d records", w.Count)
	}
	if w.Type != pipeline.WindowGlobal {
		fmt.Fprintf(&b, ", %s time", w.Time)
	}
	if w.IsEventTime() {
		fmt.Fprintf(&b, ", allowed lateness %v", w.AllowedLateness)
	}
	fn := string(op.Kind)
	switch {
	case op.Kind == pipeline.KindProcess && op.Plugin != "":
		fn = "process-window plugin " + op.Plugin
	case op.Plugin != "":
		fn = string(op.Kind) + " plugin " + op.Plugin
	}
	fmt.Fprintf(&b, ", %s of each window; bounds in %s, %s", fn, w.StartField, w.EndField)
	return b.String()
}

func writeWindows(ew *errWriter, g *JobGraph) {
	first := true
	for _, op := range g.Operators {
		if op.Spec == nil || op.Spec.Window == nil {
			continue
		}
		if first {
			ew.printf("\nwindows\n")
			first = false
		}
		ew.printf("  %s: %s\n", op.ID, WindowText(op.Spec))
	}
}

// jsonWindow is an operator's window in --format json; durations in
// milliseconds.
type jsonWindow struct {
	Type              string `json:"type"`
	All               bool   `json:"all,omitempty"`
	Time              string `json:"time,omitempty"`
	SizeMs            int64  `json:"size_ms,omitempty"`
	SlideMs           int64  `json:"slide_ms,omitempty"`
	OffsetMs          int64  `json:"offset_ms,omitempty"`
	GapMs             int64  `json:"gap_ms,omitempty"`
	Count             int64  `json:"count,omitempty"`
	AllowedLatenessMs int64  `json:"allowed_lateness_ms"`
	StartField        string `json:"start_field"`
	EndField          string `json:"end_field"`
}

func windowJSON(op *Operator) *jsonWindow {
	if op.Spec == nil || op.Spec.Window == nil {
		return nil
	}
	w := op.Spec.Window
	ms := func(d interface{ Milliseconds() int64 }) int64 { return d.Milliseconds() }
	j := &jsonWindow{Type: w.Type, All: w.All, SizeMs: ms(w.Size), SlideMs: ms(w.Slide), OffsetMs: ms(w.Offset),
		GapMs: ms(w.Gap), Count: w.Count, AllowedLatenessMs: ms(w.AllowedLateness), StartField: w.StartField, EndField: w.EndField}
	if w.Type != pipeline.WindowGlobal {
		j.Time = w.Time
	}
	return j
}
