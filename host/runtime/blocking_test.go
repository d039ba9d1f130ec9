package runtime

import (
	"strconv"
	"sync/atomic"
	"testing"
)

// TestBlockingExchange: in batch mode an edge that is not chained is a
// BLOCKING exchange, FORWARD included (Flink's
// testPartitionTypesInBatchMode), and its consumer processes nothing
// while its producers still produce: the sink's first batch arrives after
// the sources emitted every record. In streaming mode the same edge is
// pipelined, and back-pressure keeps the sources from running more than
// the channels' buffers ahead of the sink, so the sink's first batch
// arrives long before the sources finished. (With several subtasks a
// FORWARD consumer waits for its own producer only, as Flink schedules
// it: the forward cases run one subtask a side.)
func TestBlockingExchange(t *testing.T) {
	const total = 50000
	for _, tc := range []struct {
		mode, partition string
		parallelism     int
		blocking        bool
	}{
		// one subtask each side: the sink's one channel is the source's
		{"batch", "forward", 1, true},
		{"batch", "rebalance", 2, true},
		{"streaming", "forward", 1, false},
		{"streaming", "rebalance", 2, false},
	} {
		t.Run(tc.mode+"-"+tc.partition, func(t *testing.T) {
			src := `
version: 1
name: blocking
mode: ` + tc.mode + `
parallelism: ` + strconv.Itoa(tc.parallelism) + `
chaining: false
operators:
  - { id: s, source: { type: generator, preset: sequence, count: 50000 } }
  - { id: out, sink: { type: discard }, partition: ` + tc.partition + ` }
`
			conn := newFakeConnectors()
			var calls, early atomic.Int64
			conn.before["out"] = func(int) {
				calls.Add(1)
				if conn.emitted.Load() < total {
					early.Add(1)
				}
			}
			conn, _, _, err := runWith(t, t.Context(), conn, src, nil, Options{QueueCapacity: 2, BatchSize: 100})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(conn.records("out")); got != total {
				t.Fatalf("sink got %d records, want %d", got, total)
			}
			if tc.blocking && early.Load() != 0 {
				t.Errorf("%d of %d sink batches arrived before the sources finished: the exchange is not blocking", early.Load(), calls.Load())
			}
			if !tc.blocking && early.Load() == 0 {
				t.Errorf("no sink batch arrived before the sources finished: a streaming exchange must be pipelined")
			}
		})
	}
}
