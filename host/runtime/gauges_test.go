package runtime

import (
	"strings"
	"testing"
	"time"
)

// TestSummaryShowsGauges: a connector's gauges follow the table, one line
// per subtask and label set, in the connector's order.
func TestSummaryShowsGauges(t *testing.T) {
	l0 := []Label{{"topic", "txns"}, {"partition", "0"}}
	l2 := []Label{{"topic", "txns"}, {"partition", "2"}}
	r := &Result{Job: "j", Mode: "batch", Duration: time.Second, Operators: []OperatorMetrics{
		{ID: "in", Kind: "source", Parallelism: 1, Subtasks: []SubtaskMetrics{{Subtask: 0, Gauges: []Gauge{
			{Name: "currentOffset", Labels: l2, Value: 41}, {Name: "records-lag", Labels: l2, Value: 0},
			{Name: "currentOffset", Labels: l0, Value: 7}, {Name: "records-lag", Labels: l0, Value: 3},
		}}}},
		{ID: "out", Kind: "sink", Parallelism: 1, Subtasks: []SubtaskMetrics{{Subtask: 0, Gauges: []Gauge{{Name: "records-acknowledged", Value: 48}}}}},
		{ID: "plain", Kind: "map", Parallelism: 1, Subtasks: []SubtaskMetrics{{Subtask: 0}}},
	}}
	var b strings.Builder
	if err := r.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	want := `source "in" subtask 0 topic txns partition 2: currentOffset 41, records-lag 0
source "in" subtask 0 topic txns partition 0: currentOffset 7, records-lag 3
sink "out" subtask 0: records-acknowledged 48
`
	if !strings.HasSuffix(b.String(), want) {
		t.Errorf("summary:\n%s\nwant it to end with:\n%s", b.String(), want)
	}
}
