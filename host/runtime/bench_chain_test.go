package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// BenchmarkChain3 runs a chain of three operators, valid -> enrich (bank:
// NBI) -> valid, between a source replaying 1024 records of the
// transactions generator and a discard sink. The operators are the C
// builds of the example plugins (plugins/*/NAME-c.wasm) or native Go doing
// the same work on the same msgpack bytes, through the same engine:
//
//	fused    one task: source and operators call each other (chaining)
//	unfused  chaining: false on every operator: four queues of batches,
//	         five goroutines on 2 cores
//	fused-p2 the fused chain at parallelism 2 (the scaling of a CPU-bound
//	         Wasm chain on 2 cores)
//
// Figures: records/s (wall, source records) and cpu-ns/rec.
func BenchmarkChain3(b *testing.B) {
	for _, v := range []struct {
		name   string
		wasm   bool
		chain  bool
		p      int
		suffix string
	}{
		{"wasm-fused", true, true, 1, ""},
		{"native-fused", false, true, 1, ""},
		{"wasm-unfused", true, false, 1, ""},
		{"native-unfused", false, false, 1, ""},
		{"wasm-fused-p2", true, true, 2, ""},
		{"native-fused-p2", false, true, 2, ""},
	} {
		b.Run(v.name, func(b *testing.B) { benchChain3(b, v.wasm, v.chain, v.p) })
	}
}

const chain3Pipeline = `
version: 1
name: chain3
parallelism: %d
plugins:
  valid: { path: ../plugins/valid/valid-c.wasm }
  enrich: { path: ../plugins/enrich/enrich-c.wasm, config: { bank: NBI } }
operators:
  - id: src
    source: { type: generator, preset: transactions }
  - id: valid1
    filter: valid
    %[2]s
  - id: enriched
    map: enrich
    %[2]s
  - id: valid2
    filter: valid
    %[2]s
  - id: out
    sink: { type: discard }
    %[2]s
`

func benchChain3(b *testing.B, wasm, chaining bool, p int) {
	opt := ""
	if !chaining {
		opt = "chaining: false"
	}
	file := cfg("chain3.yaml") // plugin paths resolve against configs/
	src := fmt.Sprintf(chain3Pipeline, p, opt)
	wd, _ := os.Getwd()
	pl, err := pipeline.Parse(file, []byte(strings.TrimSpace(src)+"\n"), pipeline.ParseOptions{PluginRoots: []string{filepath.Join(wd, "../..")}})
	if err != nil {
		b.Fatal(err)
	}
	g, err := plan.Plan(pl, plan.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var plugins runtime.Plugins = nativeChainPlugins{}
	if wasm {
		plugins = loadPlugins(b, file, pl) // skips when not built
	}
	batch, count := transactionsBatch(b, 1024)
	run := func(n int) *replayConnectors {
		conn := &replayConnectors{n: int64(n), batch: batch, count: count}
		if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conn, Plugins: plugins}); err != nil {
			b.Fatal(err)
		}
		return conn
	}
	run(4096) // instantiate once, warm up
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	conn := run(b.N)
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	b.StopTimer()
	if b.N >= 1024 && conn.sunk.Load() == 0 {
		b.Fatal("nothing reached the sink")
	}
	b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
}

// transactionsBatch is n records of the transactions generator (seed 7),
// as one batch.
func transactionsBatch(tb testing.TB, n int) ([]byte, int) {
	tb.Helper()
	spec := &pipeline.Operator{ID: "txns", Kind: pipeline.KindSource, Source: &pipeline.Connector{Type: "generator",
		Options: map[string]any{"preset": "transactions", "count": n, "seed": 7}}}
	src, err := (&connector.Builtin{}).Source(spec, 0, 1)
	if err != nil {
		tb.Fatal(err)
	}
	if err := src.Open(&runtime.OpenContext{Operator: "txns", Parallelism: 1, MaxParallelism: 128}); err != nil {
		tb.Fatal(err)
	}
	var w abi.Writer
	if err := src.Run(context.Background(), collectInto{&w}); err != nil {
		tb.Fatal(err)
	}
	src.Close()
	if w.Count != n {
		tb.Fatalf("generator gave %d records, want %d", w.Count, n)
	}
	return w.Buf, w.Count
}

type collectInto struct{ w *abi.Writer }

func (c collectInto) Emit(_ int, buf []byte, count int) error {
	c.w.Buf = append(c.w.Buf, buf...)
	c.w.Count += count
	return nil
}

// replayConnectors: every source subtask replays batch until it emitted
// its share of n records; every sink counts and drops.
type replayConnectors struct {
	n     int64
	batch []byte
	count int
	sunk  atomic.Int64
}

func (c *replayConnectors) Bounded(*pipeline.Connector) bool { return true }
func (c *replayConnectors) Source(_ *pipeline.Operator, subtask, p int) (runtime.Source, error) {
	return &replaySource{c: c, n: (c.n + int64(p-1-subtask)) / int64(p)}, nil
}
func (c *replayConnectors) Sink(*pipeline.Operator, int, int) (runtime.Operator, error) {
	return &countSink{n: &c.sunk}, nil
}

type replaySource struct {
	c *replayConnectors
	n int64
}

func (s *replaySource) Open(*runtime.OpenContext) error { return nil }
func (s *replaySource) Total() int64                    { return s.n }
func (s *replaySource) Close() error                    { return nil }
func (s *replaySource) Run(ctx context.Context, out runtime.Collector) error {
	for left := s.n; left > 0; {
		if left >= int64(s.c.count) {
			if err := out.Emit(0, s.c.batch, s.c.count); err != nil {
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

type countSink struct{ n *atomic.Int64 }

func (s *countSink) Open(*runtime.OpenContext) error { return nil }
func (s *countSink) Process(_ int, _ []byte, count int, _ runtime.Collector) error {
	s.n.Add(int64(count))
	return nil
}
func (s *countSink) Close(runtime.Collector) error { return nil }

// nativeChainPlugins serves the plugins valid and enrich as native Go
// operators on the msgpack bytes, doing what the C plugins do.
type nativeChainPlugins struct{}

func (nativeChainPlugins) Operator(_, plugin string, _ int) (runtime.Operator, error) {
	switch plugin {
	case "valid":
		return &nativeValid{}, nil
	case "enrich":
		return &nativeEnrich{field: abi.AppendStr(abi.AppendStr(nil, "bank"), "NBI")}, nil
	}
	return nil, fmt.Errorf("no native plugin %q", plugin)
}
func (nativeChainPlugins) Partitioner(plugin, _, _ string, _ int) (runtime.CustomPartitioner, error) {
	return nil, fmt.Errorf("no native partitioner %q", plugin)
}
func (nativeChainPlugins) KeySelector(plugin, _, _ string, _ int) (runtime.KeySelector, error) {
	return nil, fmt.Errorf("no native key selector %q", plugin)
}

// nativeValid keeps the records whose int amount is > 0.
type nativeValid struct{ w abi.Writer }

func (*nativeValid) Open(*runtime.OpenContext) error { return nil }
func (*nativeValid) Close(runtime.Collector) error   { return nil }
func (n *nativeValid) Process(_ int, batch []byte, count int, out runtime.Collector) error {
	n.w.Reset()
	rd := abi.NewReader(batch, count)
	for rd.Next() {
		r := rd.Record()
		raw, ok, err := abi.MapField(r.Value, "amount")
		if err != nil || !ok {
			continue
		}
		if amt, err := abi.ReadInt(raw); err != nil || amt <= 0 {
			continue
		}
		n.w.Buf = append(n.w.Buf, r.Raw...)
		n.w.Count++
	}
	if err := rd.Err(); err != nil {
		return err
	}
	return out.Emit(0, n.w.Buf, n.w.Count)
}

// nativeEnrich appends "bank": "NBI" to every record (the records have no
// bank field, so there is nothing to overwrite).
type nativeEnrich struct {
	w     abi.Writer
	v     []byte
	field []byte
}

func (*nativeEnrich) Open(*runtime.OpenContext) error { return nil }
func (*nativeEnrich) Close(runtime.Collector) error   { return nil }
func (n *nativeEnrich) Process(_ int, batch []byte, count int, out runtime.Collector) error {
	n.w.Reset()
	rd := abi.NewReader(batch, count)
	for rd.Next() {
		r := rd.Record()
		pairs, body, err := abi.Len(r.Value)
		if err != nil {
			return err
		}
		n.v = append(abi.AppendMapHeader(n.v[:0], pairs+1), r.Value[body:]...)
		n.v = append(n.v, n.field...)
		n.w.Append(r.Time, r.HasTime, r.Key, n.v)
	}
	if err := rd.Err(); err != nil {
		return err
	}
	return out.Emit(0, n.w.Buf, n.w.Count)
}
