package plan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// host plan prints each source's watermark strategy, in text and JSON;
// a plan with none written prints no watermarks section.
func TestPlanWatermarks(t *testing.T) {
	g := mustPlan(t, `watermarks: monotonous
operators:
  - id: bids
    source:
      type: generator
      preset: sensors
      watermarks: { strategy: bounded-out-of-orderness, max-out-of-orderness: 5s, idleness: 1m, timestamp: { field: ts, format: rfc3339 } }
  - id: asks
    source: { type: generator, preset: sensors }
  - id: out
    input: [bids, asks]
    sink: { type: discard }
`)
	var text bytes.Buffer
	if err := WriteText(&text, g); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nwatermarks\n",
		"  bids  bounded-out-of-orderness 5s, every 200ms, idle after 1m0s, time from field ts (rfc3339)\n",
		"  asks  monotonous, every 200ms, time from the envelope\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text plan lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, g); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Operators []struct {
			ID         string
			Watermarks *map[string]any
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]any{}
	for _, op := range doc.Operators {
		if op.Watermarks != nil {
			got[op.ID] = *op.Watermarks
		}
	}
	b := got["bids"]
	if len(got) != 2 || b["strategy"] != "bounded-out-of-orderness" || b["max_out_of_orderness_ms"] != 5000.0 || b["interval_ms"] != 200.0 ||
		b["idleness_ms"] != 60000.0 || b["timestamp_field"] != "ts" || got["asks"]["strategy"] != "monotonous" {
		t.Errorf("JSON watermarks: %v", got)
	}

	none := mustPlan(t, `operators:
  - id: src
    source: { type: generator, preset: sensors }
  - id: out
    sink: { type: discard }
`)
	text.Reset()
	_ = WriteText(&text, none)
	if strings.Contains(text.String(), "watermarks") {
		t.Errorf("a plan without strategies prints watermarks:\n%s", text.String())
	}
}
