package plan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
)

func TestPlanShowsWindows(t *testing.T) {
	src := `version: 1
name: w
parallelism: 4
operators:
  - id: src
    source: { type: elements, values: [{k: a, v: 1}], watermarks: { strategy: bounded-out-of-orderness, max-out-of-orderness: 1s } }
  - id: top
    key-by: k
    window: { type: sliding, size: 10s, slide: 5s, offset: -1s, allowed-lateness: 2s }
    max: v
  - id: all
    input: src
    window-all: { type: session, gap: 30s, time: processing, start-field: s, end-field: e }
    count: true
`
	p, err := pipeline.Parse("w.yaml", []byte(src), pipeline.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Plan(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteText(&b, g); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nwindows\n",
		"  top: sliding 10s slide 5s offset -1s, event time, allowed lateness 2s, max of each window; bounds in window_start, window_end\n",
		"  all: window-all session gap 30s, processing time, count of each window; bounds in s, e\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text plan lacks %q:\n%s", want, b.String())
		}
	}
	for _, op := range g.Operators {
		if op.ID == "all" && op.Parallelism != 1 {
			t.Errorf("window-all at parallelism %d", op.Parallelism)
		}
	}
	b.Reset()
	if err := WriteJSON(&b, g); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Operators []struct {
			ID     string         `json:"id"`
			Window map[string]any `json:"window"`
		} `json:"operators"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, op := range doc.Operators {
		switch op.ID {
		case "top":
			if op.Window["type"] != "sliding" || op.Window["size_ms"] != 10000.0 || op.Window["offset_ms"] != -1000.0 || op.Window["allowed_lateness_ms"] != 2000.0 {
				t.Errorf("json window of top: %v", op.Window)
			}
		case "src":
			if op.Window != nil {
				t.Errorf("json window of the source: %v", op.Window)
			}
		}
	}
}
