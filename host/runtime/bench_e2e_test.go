package runtime_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

// BenchmarkQuickstart runs configs/quickstart.yaml (generator -> Wasm
// filter valid -> Wasm map enrich -> keyBy accountId -> sum -> sink) with
// b.N records into a discard sink; BenchmarkQuickstartNative does the same
// work in one Go loop over the same generator's msgpack bytes. Figures:
// records/s (wall, 2 cores) and cpu-ns/rec. Sub-benchmarks: the Go plugins
// as shipped, and their C builds (plugins/*/NAME-c.wasm).
func BenchmarkQuickstart(b *testing.B) {
	b.Run("go", func(b *testing.B) { benchQuickstart(b, "") })
	b.Run("c", func(b *testing.B) { benchQuickstart(b, "-c") })
}

func benchQuickstart(b *testing.B, suffix string) {
	edit := func(p *pipeline.Pipeline) {
		for _, pl := range p.Plugins {
			pl.Path = strings.TrimSuffix(pl.Path, ".wasm") + suffix + ".wasm"
		}
		for _, op := range p.Operators {
			if op.Kind == pipeline.KindSource {
				op.Source.Options["count"] = b.N
			}
			if op.Kind == pipeline.KindSink {
				op.Sink = &pipeline.Connector{Type: "discard", Options: map[string]any{}}
			}
		}
	}
	runPipeline(b, cfg("quickstart.yaml"), "", func(p *pipeline.Pipeline) { // compile, warm up
		edit(p)
		p.Operators[0].Source.Options["count"] = 1000
	}, runtime.Options{})
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	r := runPipeline(b, cfg("quickstart.yaml"), "", edit, runtime.Options{})
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	if r.err != nil {
		b.Fatal(r.err)
	}
	if got := r.res.Operator("totals").RecordsIn; got == 0 {
		b.Fatal("nothing reached totals")
	}
	b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
}

func BenchmarkQuickstartNative(b *testing.B) {
	spec := &pipeline.Operator{ID: "txns", Kind: pipeline.KindSource, Source: &pipeline.Connector{Type: "generator",
		Options: map[string]any{"preset": "transactions", "count": b.N, "seed": 7}}}
	src, err := (&connector.Builtin{}).Source(spec, 0, 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := src.Open(&runtime.OpenContext{Operator: "txns", Parallelism: 1, MaxParallelism: 128}); err != nil {
		b.Fatal(err)
	}
	n := &nativeQuickstart{sums: map[string]int64{}, bank: abi.AppendStr(abi.AppendStr(nil, "bank"), "NBI")}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	if err := src.Run(context.Background(), n); err != nil {
		b.Fatal(err)
	}
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	if n.kept == 0 {
		b.Fatal("nothing kept")
	}
	b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
}

// nativeQuickstart is a Collector doing filter amount > 0, adding "bank":
// "NBI", and a running sum of amount per accountId, emitting the enriched
// record keyed by its account into a reused buffer (it does not write the
// sum into the record, as sluice's sum does: a little less work than the
// pipeline's).
type nativeQuickstart struct {
	sums      map[string]int64
	bank, val []byte
	out       abi.Writer
	kept      int
}

func (n *nativeQuickstart) Emit(_ int, batch []byte, count int) error {
	rd := abi.NewReader(batch, count)
	for rd.Next() {
		r := rd.Record()
		raw, _, _ := abi.MapField(r.Value, "amount")
		amount, _ := abi.ReadInt(raw)
		if amount <= 0 {
			continue
		}
		pairs, body, _ := abi.Len(r.Value)
		n.val = append(abi.AppendMapHeader(n.val[:0], pairs+1), r.Value[body:]...)
		n.val = append(n.val, n.bank...)
		acct, _, _ := abi.MapField(r.Value, "accountId")
		n.sums[string(acct)] += amount // one map assignment, no allocation once the key is in
		n.out.Append(r.Time, r.HasTime, acct, n.val)
		if n.out.Count == 1024 {
			n.out.Reset()
		}
		n.kept++
	}
	return rd.Err()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
