package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/runtime"
)

// A job shows each operator's current input and output watermark in its
// metrics: at the end of its input, the end of event time, with a
// strategy or without one (as in Flink, every operator gets
// MAX_WATERMARK when its input ends); before the first, the keys are
// absent.
func TestJobMetricsWatermarks(t *testing.T) {
	s := newTestServer(t, testConfig(t))
	for _, wm := range []string{"\nwatermarks: { strategy: bounded-out-of-orderness, max-out-of-orderness: 1s }", ""} {
		st, err := s.Submit(t.Context(), tenantA, []byte(`version: 1
name: wm`+wm+`
operators:
  - id: src
    source: { type: generator, preset: sensors, count: 500 }
  - id: out
    sink: { type: discard }
`))
		if err != nil {
			t.Fatal(err)
		}
		if end := waitEnded(t, s, tenantA, st.ID); end.State != Finished {
			t.Fatalf("ended %+v", end)
		}
		m, err := s.JobMetrics(tenantA, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(m)
		for _, op := range m.Operators {
			in, out := op.CurrentInputWatermark, op.CurrentOutputWatermark
			switch {
			case in == nil || out == nil || *in != runtime.MaxWatermark || *out != runtime.MaxWatermark:
				t.Errorf("%s: watermarks %v %v at the end, want MaxWatermark: %s", op.ID, in, out, js)
			case len(op.Subtasks) == 0 || op.Subtasks[0].CurrentInputWatermark == nil:
				t.Errorf("%s: no subtask watermark: %s", op.ID, js)
			case !strings.Contains(string(js), `"current_input_watermark":9223372036854775807`):
				t.Errorf("the JSON lacks current_input_watermark: %s", js)
			}
		}
	}
}

func TestWatermarkOfBeforeTheFirst(t *testing.T) {
	if watermarkOf(runtime.MinWatermark) != nil {
		t.Error("no watermark yet, and the JSON would show Long.MIN_VALUE")
	}
	if p := watermarkOf(42); p == nil || *p != 42 {
		t.Errorf("watermarkOf(42) = %v", p)
	}
}
