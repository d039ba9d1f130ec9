package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// steppingClock is a processing-time clock that moves on by step at each
// reading: every source batch is followed by a periodic watermark emit,
// whatever the machine's speed.
type steppingClock struct {
	ns    atomic.Int64
	step  time.Duration
	reads atomic.Int64
}

func (c *steppingClock) now() time.Time {
	c.reads.Add(1)
	return time.Unix(0, c.ns.Add(int64(c.step)))
}

func kafkaWindowPipeline(t *testing.T, brokers, source, watermarks, dir string) *plan.JobGraph {
	t.Helper()
	src := fmt.Sprintf(`version: 1
name: per-partition
mode: streaming
parallelism: 1
operators:
  - id: in
    source: { type: kafka, brokers: %q, topics: [bids], %s watermarks: %s }
  - id: win
    window-all: { type: tumbling, size: 10s }
    count: true
  - id: out
    sink: { type: file, path: out.jsonl }
`, brokers, source, watermarks)
	p, err := pipeline.Parse(filepath.Join(dir, "k.yaml"), []byte(src), pipeline.ParseOptions{Connectors: Set()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestKafkaPerPartitionWatermarks is #27's "with Kafka, watermarks are
// generated per partition inside the source and combined, as Flink's
// KafkaSource does": one source subtask reads a fast partition (times
// 0 to 30 s, more than one batch) and a lagging one (three records at
// 5 s, one at 25 s). Its watermark is the lowest of the two partitions',
// so the lagging partition's records at 5 s, late only with respect to
// the fast partition, are not dropped: the windows are Flink's, 403, 400
// and 401 records, and numLateRecordsDropped is 0. A clock that moves on
// at each reading makes a watermark follow every batch.
func TestKafkaPerPartitionWatermarks(t *testing.T) {
	c, err := kafkatest.Start(1, map[string]int32{"bids": 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for i := range 1200 { // partition 0: every 25 ms from 0 to 29 975 ms
		recs = append(recs, &kgo.Record{Topic: "bids", Partition: 0, Value: []byte(fmt.Sprintf(`{"n":%d}`, i)), Timestamp: time.UnixMilli(int64(25 * i))})
	}
	for _, ms := range []int64{5000, 5001, 5002, 25000} {
		recs = append(recs, &kgo.Record{Topic: "bids", Partition: 1, Value: []byte(`{"late":true}`), Timestamp: time.UnixMilli(ms)})
	}
	if err := c.Produce(ctx, true, recs...); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	g := kafkaWindowPipeline(t, strings.Join(c.Addrs(), ","), "bounded: latest,", "monotonous", dir)
	clock := &steppingClock{step: time.Second}
	res, err := runtime.Run(ctx, g, runtime.Deps{Connectors: &Builtin{Root: dir}, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var w struct {
			Count int64 `json:"count"`
			Start int64 `json:"window_start"`
		}
		if err := json.Unmarshal([]byte(line), &w); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		got = append(got, fmt.Sprintf("[%d,+10s):%d", w.Start, w.Count))
	}
	sort.Strings(got)
	if want := "[0,+10s):403 [10000,+10s):400 [20000,+10s):401"; strings.Join(got, " ") != want {
		t.Errorf("windows %v, want %s", got, want)
	}
	for _, s := range res.Operator("win").Subtasks {
		for _, gg := range s.Gauges {
			if gg.Name == "numLateRecordsDropped" && gg.Value != 0 {
				t.Errorf("numLateRecordsDropped %v, want 0: no record is late with respect to its own partition", gg.Value)
			}
		}
	}
}

// TestKafkaIdlePartition: a partition with no records holds the source
// subtask's watermark back (its watermark is the start of time) until
// idleness passes; then the subtask's watermark is the other partition's
// alone, so the job's windows fire while it runs.
func TestKafkaIdlePartition(t *testing.T) {
	c, err := kafkatest.Start(1, map[string]int32{"bids": 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for i := range 20 { // partition 0 only: 0 to 19 s
		recs = append(recs, &kgo.Record{Topic: "bids", Partition: 0, Value: []byte(`{}`), Timestamp: time.UnixMilli(int64(1000 * i))})
	}
	if err := c.Produce(ctx, true, recs...); err != nil {
		t.Fatal(err)
	}
	brokers := strings.Join(c.Addrs(), ",")
	run := func(watermarks string) (*runtime.Execution, *steppingClock) {
		g := kafkaWindowPipeline(t, brokers, "", watermarks, t.TempDir())
		clock := &steppingClock{step: 100 * time.Millisecond}
		e, err := runtime.Start(ctx, g, runtime.Deps{Connectors: &Builtin{Root: t.TempDir()}, Now: clock.now})
		if err != nil {
			t.Fatal(err)
		}
		return e, clock
	}
	wait := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-ctx.Done():
				t.Fatalf("gave up waiting for %s", what)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	source := func(e *runtime.Execution) *runtime.OperatorMetrics { return e.Snapshot().Operator("in") }

	// without idleness the empty partition holds the watermark at the
	// start of time, however long the clock runs
	e, clock := run("{ strategy: monotonous, interval: 10ms }")
	wait("20 records", func() bool { return source(e).RecordsOut == 20 })
	reads := clock.reads.Load()
	wait("50 more periodic emits", func() bool { return clock.reads.Load() > reads+50 })
	if wm := source(e).OutputWatermark; wm != runtime.MinWatermark {
		t.Errorf("without idleness the source's watermark is %d, want the start of time (partition 1 has no record)", wm)
	}
	e.Cancel()
	e.Wait()

	// with idleness 1 s (ten readings of the clock) partition 1 goes idle
	// and partition 0's watermark, 19 s − 1 ms, is the subtask's
	e, _ = run("{ strategy: monotonous, interval: 10ms, idleness: 1s }")
	wait("the watermark of partition 0 alone", func() bool { return source(e).OutputWatermark == 18999 })
	e.Cancel()
	e.Wait()
}
