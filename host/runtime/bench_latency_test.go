//go:build linux

package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
)

// BenchmarkLatency: source-to-sink latency at a fixed rate. A paced source
// emits latencyRate records/s, one record per emit, each stamped with its
// emission time (monotonic, in the value's "sentNs" field; the event time
// is the sequence number, as the generator sets it); the records go
// through a map chained to the source, then one non-chained edge (a queue
// of batches, cut at BatchSize records or flushed by the linger timer) to
// a sink that takes arrival - emission for every record. One iteration is
// latencyRecords records (1 s); run it with -benchtime 1x.
//
// linger0 is Options{BatchSize: 1}: every record is sent the moment it is
// emitted (Options.Linger has no zero: <= 0 takes the 5ms default, so
// "no linger" is a batch of one, as Flink's buffer timeout 0 flushes after
// every record). The others keep BatchSize 1024, so at 20k records/s the
// linger timer, not the batch size, sends the batches.
//
// Figures: p50-us, p99-us, max-us of the latency and the achieved
// records/s.
func BenchmarkLatency(b *testing.B) {
	for _, v := range []struct {
		name string
		opts Options
	}{
		{"linger0", Options{BatchSize: 1}},
		{"linger1ms", Options{Linger: time.Millisecond}},
		{"linger5ms", Options{Linger: 5 * time.Millisecond}},
		{"linger20ms", Options{Linger: 20 * time.Millisecond}},
	} {
		b.Run(v.name, func(b *testing.B) { benchLatency(b, v.opts) })
	}
}

const (
	latencyRate    = 20_000
	latencyRecords = latencyRate // one second per iteration
)

func benchLatency(b *testing.B, opts Options) {
	g := planYAML(b, fmt.Sprintf(edgePipeline, "chaining: false"), nil)
	var lat []time.Duration
	var wall time.Duration
	for i := 0; i < b.N; i++ {
		conn := &latencyConnectors{base: time.Now(), n: latencyRecords, rate: latencyRate}
		t0 := time.Now()
		if _, err := Run(context.Background(), g, Deps{Connectors: conn, Plugins: &identityPlugins{}, Options: opts}); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(t0)
		if len(conn.lat) != latencyRecords {
			b.Fatalf("%d records reached the sink, want %d", len(conn.lat), latencyRecords)
		}
		lat = append(lat, conn.lat...)
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(latencyQuantile(lat, 0.50).Nanoseconds())/1e3, "p50-us")
	b.ReportMetric(float64(latencyQuantile(lat, 0.99).Nanoseconds())/1e3, "p99-us")
	b.ReportMetric(float64(lat[len(lat)-1].Nanoseconds())/1e3, "max-us")
	b.ReportMetric(float64(len(lat))/wall.Seconds(), "records/s")
}

// latencyQuantile is the nearest-rank q-quantile of sorted s.
func latencyQuantile(s []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// latencyConnectors: one paced source, sinks that record latencies.
type latencyConnectors struct {
	base time.Time // the clock both ends read (monotonic)
	n    int
	rate int

	mu  sync.Mutex
	lat []time.Duration
}

func (c *latencyConnectors) Bounded(*pipeline.Connector) bool { return true }
func (c *latencyConnectors) Source(*pipeline.Operator, int, int) (Source, error) {
	return &pacedSource{c: c}, nil
}
func (c *latencyConnectors) Sink(*pipeline.Operator, int, int) (Operator, error) {
	return &latencySink{c: c}, nil
}

// pacedSource emits record i at base + i/rate, or as soon after as it
// wakes up; each record carries the time it was actually emitted. It
// sleeps with nanosleep(2), not a Go timer: an idle Go program sleeps in
// its poller with 1 ms granularity, which would wake the source together
// with the linger ticker and emit its records in bursts just before (or
// just after) each flush.
type pacedSource struct{ c *latencyConnectors }

func (s *pacedSource) Open(*OpenContext) error { return nil }
func (s *pacedSource) Total() int64            { return int64(s.c.n) }
func (s *pacedSource) Close() error            { return nil }
func (s *pacedSource) Run(ctx context.Context, out Collector) error {
	interval := time.Second / time.Duration(s.c.rate)
	payload := "0123456789abcdef0123456789abcdef"
	var w abi.Writer
	for i := 0; i < s.c.n; {
		due := min(s.c.n, int(time.Since(s.c.base)/interval)+1)
		for ; i < due; i++ {
			w.Reset()
			w.Append(int64(i), true, nil, enc("accountId", fmt.Sprintf("acct-%06d", i*7919%1000),
				"amount", int64(i%200-98), "payload", payload, "sentNs", int64(time.Since(s.c.base))))
			if err := out.Emit(0, w.Buf, w.Count); err != nil {
				return err
			}
		}
		if i < s.c.n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if wait := time.Until(s.c.base.Add(time.Duration(i) * interval)); wait > 0 {
				ts := syscall.NsecToTimespec(wait.Nanoseconds())
				_ = syscall.Nanosleep(&ts, nil) // EINTR (a signal): wake early, the loop catches up
			}
		}
	}
	return nil
}

type latencySink struct {
	c   *latencyConnectors
	lat []time.Duration
}

func (s *latencySink) Open(*OpenContext) error { return nil }
func (s *latencySink) Process(_ int, batch []byte, count int, _ Collector) error {
	now := time.Since(s.c.base)
	rd := abi.NewReader(batch, count)
	for rd.Next() {
		raw, ok, err := abi.MapField(rd.Record().Value, "sentNs")
		if err != nil || !ok {
			return fmt.Errorf("no sentNs: %v", err)
		}
		sent, err := abi.ReadInt(raw)
		if err != nil {
			return err
		}
		s.lat = append(s.lat, now-time.Duration(sent))
	}
	return rd.Err()
}
func (s *latencySink) Close(Collector) error {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.c.lat = append(s.c.lat, s.lat...)
	return nil
}
