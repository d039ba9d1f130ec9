package pipeline

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/watermark"
)

func TestParseWatermarks(t *testing.T) {
	p := mustParse(t, `version: 1
name: wm
watermarks: monotonous
operators:
  - id: a
    source:
      type: generator
      preset: sensors
      count: 10
      watermarks:
        strategy: bounded-out-of-orderness
        max-out-of-orderness: 5s
        interval: 50ms
        idleness: 1m
        timestamp: { field: ts, format: rfc3339 }
  - id: b
    source: { type: generator, preset: sensors, count: 10 }
  - id: c
    source: { type: generator, preset: sensors, count: 10, watermarks: { strategy: none } }
  - id: out
    input: [a, b, c]
    sink: { type: discard }
`, ParseOptions{})
	a := p.WatermarksOf(p.Operators[0])
	want := watermark.Strategy{Kind: watermark.BoundedOutOfOrderness, MaxOutOfOrderness: 5 * time.Second,
		Interval: 50 * time.Millisecond, Idleness: time.Minute, Field: "ts", Format: watermark.RFC3339}
	if a == nil || a.Strategy != want || a.Pos.Line != 11 {
		t.Fatalf("source a: %+v, want %+v at line 11", a, want)
	}
	if _, leaked := p.Operators[0].Source.Options["watermarks"]; leaked {
		t.Fatal("watermarks reached the connector's options")
	}
	b := p.WatermarksOf(p.Operators[1])
	if b == nil || b.Kind != watermark.Monotonous || b.Interval != watermark.DefaultInterval || b.Field != "" || b.Bound() != 0 {
		t.Fatalf("source b inherits the pipeline's: %+v", b)
	}
	if c := p.WatermarksOf(p.Operators[2]); c == nil || c.Active() {
		t.Fatalf("source c wrote none: %+v", c)
	}
	if p.WatermarksOf(p.Operators[3]) != nil {
		t.Fatal("a sink has a watermark strategy")
	}
}
