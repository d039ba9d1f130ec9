package runtime

import (
	"strings"
	"testing"
	"time"
)

// TestSummaryBackPressuredIsTheBusiestSubtasks: four source subtasks each blocked
// 50 s of a 68 s job sum to 200 s, more than the job's time; the summary
// shows the busiest subtask's time and its share of the job's instead.
func TestSummaryBackPressuredIsTheBusiestSubtasks(t *testing.T) {
	src := OperatorMetrics{ID: "src", Kind: "source", Parallelism: 4}
	for i, ms := range []int64{50000, 49000, 12000, 0} {
		src.Subtasks = append(src.Subtasks, SubtaskMetrics{Subtask: i, RecordsOut: 1000, BackPressuredMs: ms})
	}
	src.sum()
	sink := OperatorMetrics{ID: "out", Kind: "sink", Parallelism: 1, Subtasks: []SubtaskMetrics{{RecordsIn: 4000}}}
	sink.sum()
	if src.BackPressuredMs != 111000 || src.MaxBackPressuredMs != 50000 {
		t.Fatalf("summed %d, max %d", src.BackPressuredMs, src.MaxBackPressuredMs)
	}
	r := &Result{Job: "j", Mode: "batch", Duration: 68 * time.Second, Operators: []OperatorMetrics{src, sink}}
	var b strings.Builder
	if err := r.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	want := `job "j" (batch): 1m8s
operator  kind    par  records in  records out  records/s  skew  back-pressured (max subtask)
src       source    4           0        4,000         58  1.00                50,000ms (74%)
out       sink      1       4,000            0         58  1.00                           0ms
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
