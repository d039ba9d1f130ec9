package pipeline

import (
	"strings"
	"testing"
	"time"
)

func TestParseWindow(t *testing.T) {
	src := `
version: 1
name: w
operators:
  - id: src
    source: { type: elements, values: [{k: a, v: 1}], watermarks: { strategy: bounded-out-of-orderness, max-out-of-orderness: 1s } }
  - id: top
    key-by: k
    window: { type: tumbling, size: 10s, offset: -2s, allowed-lateness: 1s, start-field: s, end-field: e }
    max: v
  - id: sl
    input: src
    key-by: k
    window: { type: sliding, size: 10s, slide: 5s, time: processing }
    count: true
  - id: se
    input: src
    window-all: { type: session, gap: 30s }
    sum: v
  - id: g
    input: src
    key-by: k
    window: { type: global, count: 3 }
    min-by: v
  - id: late
    input: top.late
    sink: { type: print }
`
	p, err := Parse("w.yaml", []byte(src), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Operator{}
	for _, op := range p.Operators {
		byID[op.ID] = op
	}
	w := byID["top"].Window
	if w == nil || w.Type != WindowTumbling || w.Size != 10*time.Second || w.Offset != -2*time.Second || w.AllowedLateness != time.Second || w.Time != TimeEvent || w.StartField != "s" || w.EndField != "e" || w.All {
		t.Errorf("top window %+v", w)
	}
	if w := byID["sl"].Window; w.Slide != 5*time.Second || w.Time != TimeProcessing || w.StartField != DefaultStartField || w.EndField != DefaultEndField {
		t.Errorf("sl window %+v", w)
	}
	if w := byID["se"].Window; !w.All || w.Gap != 30*time.Second || p.ParallelismOf(byID["se"]) != 1 {
		t.Errorf("se window %+v", w)
	}
	if w := byID["g"].Window; w.Count != 3 || w.IsEventTime() {
		t.Errorf("g window %+v", w)
	}
	if wm := byID["src"].Source.Watermarks; !wm.Active() || wm.MaxOutOfOrderness != time.Second {
		t.Errorf("source watermarks %+v", wm)
	}
	if _, ok := byID["src"].Source.Options["watermarks"]; ok {
		t.Error("watermarks went into the connector's options")
	}
}

// An event-time window in BATCH mode needs no watermarks: the watermark
// jumps to the end of time when the input ends.
func TestWindowBatchNeedsNoWatermarks(t *testing.T) {
	src := `
version: 1
name: w
mode: batch
operators:
  - id: src
    source: { type: elements, values: [{k: a, v: 1}] }
  - id: top
    key-by: k
    window: { type: tumbling, size: 10s }
    max: v
`
	if _, err := Parse("w.yaml", []byte(src), ParseOptions{}); err != nil {
		t.Fatal(err)
	}
	streaming := strings.Replace(src, "mode: batch", "mode: streaming", 1)
	_, err := Parse("w.yaml", []byte(streaming), ParseOptions{})
	if err == nil || !strings.Contains(err.Error(), "w.yaml:10:") || !strings.Contains(err.Error(), "no source it reads has watermarks") {
		t.Fatalf("streaming without watermarks: %v", err)
	}
	none := strings.Replace(streaming, "values: [{k: a, v: 1}]", "values: [{k: a, v: 1}], watermarks: none", 1)
	if _, err := Parse("w.yaml", []byte(none), ParseOptions{}); err == nil {
		t.Fatal("watermarks: none accepted for an event-time window")
	}
}
