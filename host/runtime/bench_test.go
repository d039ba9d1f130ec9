package runtime

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
)

// Benchmarks of the engine on its own, with performance.md's record: an
// 11-byte key out of 1000, two int64, a 32-byte payload. Sources replay a
// pre-encoded batch, sinks drop, so what is measured is the engine.
// Figures: records/s (wall) and cpu-ns/rec (user+system CPU of the whole
// process per record, the cost on a 2-core machine).

// benchBatch is 1024 encoded transaction records.
func benchBatch() ([]byte, int) {
	var w abi.Writer
	payload := "0123456789abcdef0123456789abcdef"
	for i := 0; i < 1024; i++ {
		w.Append(0, false, nil, enc("accountId", fmt.Sprintf("acct-%06d", i*7919%1000),
			"amount", int64(i%200-98), "ts", int64(1700000000000+i), "payload", payload))
	}
	return w.Buf, w.Count
}

// benchConnectors: every source replays benchBatch until it emitted its
// share of n records; every sink drops what it gets.
type benchConnectors struct {
	n     int64
	batch []byte
	count int
	sunk  atomic.Int64
}

func (c *benchConnectors) Bounded(*pipeline.Connector) bool { return true }
func (c *benchConnectors) Source(spec *pipeline.Operator, subtask, p int) (Source, error) {
	return &benchSource{c: c, n: (c.n + int64(p-1-subtask)) / int64(p)}, nil
}
func (c *benchConnectors) Sink(*pipeline.Operator, int, int) (Operator, error) {
	return &benchSink{c: c}, nil
}

type benchSource struct {
	c *benchConnectors
	n int64
}

func (s *benchSource) Open(*OpenContext) error { return nil }
func (s *benchSource) Total() int64            { return s.n }
func (s *benchSource) Close() error            { return nil }
func (s *benchSource) Run(ctx context.Context, out Collector) error {
	// the ends of the batch's records, as the generator hands them on
	var ends []byte
	rd := abi.NewReader(s.c.batch, s.c.count)
	for rd.Next() {
		ends = binary.LittleEndian.AppendUint32(ends, uint32(rd.Offset()))
	}
	for left := s.n; left > 0; {
		if left >= int64(s.c.count) {
			if err := EmitWithEnds(out, 0, s.c.batch, s.c.count, ends); err != nil {
				return err
			}
			left -= int64(s.c.count)
			continue
		}
		end := 0
		for i := int64(0); i < left; i++ {
			end, _ = abi.Skip(s.c.batch, end)
		}
		return out.Emit(0, s.c.batch[:end], int(left))
	}
	return nil
}

type benchSink struct{ c *benchConnectors }

func (s *benchSink) Open(*OpenContext) error { return nil }
func (s *benchSink) Process(_ int, _ []byte, count int, _ Collector) error {
	s.c.sunk.Add(int64(count))
	return nil
}
func (s *benchSink) Close(Collector) error { return nil }

// identity is a native map operator that forwards its batch.
type identity struct{}

func (identity) Open(*OpenContext) error { return nil }
func (identity) Process(_ int, b []byte, count int, out Collector) error {
	return out.Emit(0, b, count)
}
func (identity) Close(Collector) error { return nil }

type identityPlugins struct{ *fakePlugins }

func (*identityPlugins) Operator(string, string, int) (Operator, error) { return identity{}, nil }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchRun(b *testing.B, src string, edit func(*pipeline.Pipeline)) {
	benchRunWith(b, src, edit, Deps{}, nil)
}

// benchRunWith is benchRun with deps (connectors and plugins are set
// here) and, when not nil, during running beside the job while it runs.
func benchRunWith(b *testing.B, src string, edit func(*pipeline.Pipeline), deps Deps, during func(*Execution)) {
	g := planYAML(b, src, edit)
	batch, count := benchBatch()
	conn := &benchConnectors{n: int64(b.N), batch: batch, count: count}
	deps.Connectors, deps.Plugins = conn, &identityPlugins{}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	e, err := Start(context.Background(), g, deps)
	if err != nil {
		b.Fatal(err)
	}
	if during != nil {
		go during(e)
	}
	if _, err := e.Wait(); err != nil {
		b.Fatal(err)
	}
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	b.StopTimer()
	if conn.sunk.Load() == 0 {
		b.Fatal("nothing reached the sink")
	}
	if deps.Checkpoints != nil && conn.sunk.Load() != int64(b.N) { // the jobs checkpointed sink every record once
		b.Fatalf("%d records reached the sink, the sources emitted %d", conn.sunk.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
}

const edgePipeline = `
version: 1
name: edge
plugins:
  id: { path: id.wasm }
operators:
  - id: src
    source: { type: generator, preset: transactions }
  - id: m
    map: id
  - id: out
    sink: { type: discard }
    %s
`

// BenchmarkEdge: source -> map -> sink fused into one task, against the
// same with the map -> sink edge not chained (a queue of batches between
// two goroutines: a FORWARD edge forwards whole batches). The difference
// of cpu-ns/rec is the cost of one edge. rebalance-1to2 routes record by
// record.
func BenchmarkEdge(b *testing.B) {
	b.Run("fused", func(b *testing.B) { benchRun(b, fmt.Sprintf(edgePipeline, ""), nil) })
	b.Run("edge", func(b *testing.B) { benchRun(b, fmt.Sprintf(edgePipeline, "chaining: false"), nil) })
	// per-record routing: one upstream subtask, round robin over two
	b.Run("rebalance-1to2", func(b *testing.B) {
		benchRun(b, fmt.Sprintf(edgePipeline, "partition: rebalance\n    parallelism: 2"), nil)
	})
}

const shufflePipeline = `
version: 1
name: shuffle
parallelism: 2
operators:
  - id: src
    source: { type: generator, preset: transactions }
  - id: totals
    key-by: accountId
    sum: amount
  - id: out
    sink: { type: discard }
`

// BenchmarkKeyedShuffle: 2 sources -> HASH on accountId -> 2 keyed sums ->
// discard, against BenchmarkKeyedShuffleNative doing the same with Go
// structs and goroutines.
func BenchmarkKeyedShuffle(b *testing.B) {
	benchRun(b, shufflePipeline, nil)
}

// BenchmarkKeyedShuffleNative is the limit: 2 producers hash-partition
// structs in batches of 1024 over channels to 2 goroutines keeping a sum
// per key in a map and producing the updated record for each input.
func BenchmarkKeyedShuffleNative(b *testing.B) { keyedShuffleNative(b, 2) }
