package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/connector/spec"
)

// TestDurationOption: a connector option of type duration is read with
// its unit, held to its minimum, and refused without a unit, at its line
// and column.
func TestDurationOption(t *testing.T) {
	ticker := &spec.Connector{Name: "ticker", Role: spec.Source, Summary: "ticks", Doc: "d", Guarantee: spec.None,
		Options: []spec.Option{{Name: "every", Type: spec.Duration, MinDuration: 10 * time.Millisecond, Default: time.Second, Doc: "how often"}}}
	set := spec.Builtin.With(ticker)
	src := "version: 1\nname: t\noperators:\n  - id: t\n    source: { type: ticker, every: EVERY }\n  - id: out\n    sink: { type: discard }\n"
	for in, want := range map[string]time.Duration{"30s": 30 * time.Second, "1m30s": 90 * time.Second, "5m": 5 * time.Minute, "250ms": 250 * time.Millisecond} {
		p, err := Parse("t.yaml", []byte(strings.Replace(src, "EVERY", in, 1)), ParseOptions{Connectors: set})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := p.Operator("t").Source.Options["every"]; got != want {
			t.Errorf("%s read as %#v, want %v", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"30":    "t.yaml:5:36: source ticker every: 30 has no unit: write it with one, as 30s or 30ms",
		"5ms":   "t.yaml:5:36: source ticker every 5ms is below the minimum of 10ms",
		"0":     "t.yaml:5:36: source ticker every must be at least 10ms, not 0",
		"soon":  `t.yaml:5:36: source ticker every must be a duration such as 10s, 500ms or 1m30s, not "soon"`,
		"[1s]":  "t.yaml:5:36: source ticker every must be a duration such as 10s or 500ms, not a list",
		"-1s":   "t.yaml:5:36: source ticker every -1s is below the minimum of 10ms",
		"1 day": `t.yaml:5:36: source ticker every must be a duration such as 10s, 500ms or 1m30s, not "1 day"`,
	} {
		_, err := Parse("t.yaml", []byte(strings.Replace(src, "EVERY", in, 1)), ParseOptions{Connectors: set})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant %s", in, err, want)
		}
	}
}
