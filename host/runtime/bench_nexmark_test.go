package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

// BenchmarkNexmark runs Nexmark's q7 (the highest bid of each 10 s
// tumbling window: configs/nexmark-q7.yaml, the built-in max-by, and
// configs/nexmark-q7-wasm.yaml, the top-bids process-window plugin) and
// q5 (the auction with the most bids per sliding window of 10 s every
// 2 s: configs/nexmark-q5.yaml, built-in count then max-by, and with the
// second step top-bids on the counts) over b.N bids of the bids
// generator preset into a discard sink, the whole engine at the configs'
// parallelism 2 (2 cores). The native sub-benchmarks are one Go loop
// doing the same windows over the same generator's msgpack bytes.
// Figures: records/s (bids per wall second) and cpu-ns/rec.
func BenchmarkNexmark(b *testing.B) {
	b.Run("q7/builtin", func(b *testing.B) { benchNexmark(b, "nexmark-q7.yaml", nil) })
	b.Run("q7/wasm", func(b *testing.B) { benchNexmark(b, "nexmark-q7-wasm.yaml", nil) })
	b.Run("q7/native", func(b *testing.B) { benchNexmarkNative(b, &nativeQ7{}) })
	b.Run("q5/builtin", func(b *testing.B) { benchNexmark(b, "nexmark-q5.yaml", nil) })
	b.Run("q5/wasm", func(b *testing.B) {
		benchNexmark(b, "nexmark-q5.yaml", func(p *pipeline.Pipeline) { // the hottest by the Wasm window function
			p.Plugins["top-bids"] = &pipeline.Plugin{Name: "top-bids", Path: "../plugins/top-bids/top-bids.wasm", Config: map[string]any{"field": "count", "n": 1}}
			for _, op := range p.Operators {
				if op.ID == "hottest" {
					op.Kind, op.Field, op.Plugin = pipeline.KindProcess, "", "top-bids"
				}
			}
		})
	})
	b.Run("q5/native", func(b *testing.B) { benchNexmarkNative(b, &nativeQ5{counts: map[int64]map[int64]int64{}}) })
}

func benchNexmark(b *testing.B, file string, change func(*pipeline.Pipeline)) {
	edit := func(n int) func(*pipeline.Pipeline) {
		return func(p *pipeline.Pipeline) {
			if change != nil {
				change(p)
			}
			for _, op := range p.Operators {
				if op.Kind == pipeline.KindSource {
					op.Source.Options["count"] = n
				}
				if op.Kind == pipeline.KindSink {
					op.Sink = &pipeline.Connector{Type: "discard", Options: map[string]any{}}
				}
			}
		}
	}
	if r := runPipeline(b, cfg(file), "", edit(20_000), runtime.Options{}); r.err != nil { // compile, warm up
		b.Fatal(r.err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	r := runPipeline(b, cfg(file), "", edit(b.N), runtime.Options{})
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	if r.err != nil {
		b.Fatal(r.err)
	}
	if b.N >= 20_000 && r.res.Operator("out").RecordsIn == 0 {
		b.Fatal("no window fired")
	}
	b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
}

// nexmarkQuery is a native query: a Collector over the bids, and the
// windows left at the end of input.
type nexmarkQuery interface {
	runtime.Collector
	end() int
}

func benchNexmarkNative(b *testing.B, q nexmarkQuery) {
	spec := &pipeline.Operator{ID: "bids", Kind: pipeline.KindSource, Source: &pipeline.Connector{Type: "generator",
		Options: map[string]any{"preset": "bids", "count": b.N}}}
	src, err := (&connector.Builtin{}).Source(spec, 0, 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := src.Open(&runtime.OpenContext{Operator: "bids", Parallelism: 1, MaxParallelism: 128}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	if err := src.Run(context.Background(), q); err != nil {
		b.Fatal(err)
	}
	fired := q.end()
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	if b.N >= 20_000 && fired == 0 {
		b.Fatal("no window fired")
	}
	b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
}

// nativeQ7 keeps the highest bid of the current 10 s window (the bids
// come in event-time order) and emits it, with the window's bounds, when
// a bid of a later window arrives.
type nativeQ7 struct {
	start    int64
	best     []byte
	price    int64
	has      bool
	out      abi.Writer
	fired    int
	val, buf []byte
}

func (q *nativeQ7) Emit(_ int, batch []byte, count int) error {
	rd := abi.NewReader(batch, count)
	for rd.Next() {
		r := rd.Record()
		start := r.Time - r.Time%10_000
		if q.has && start != q.start {
			q.fire()
		}
		raw, _, _ := abi.MapField(r.Value, "price")
		p, _ := abi.ReadInt(raw)
		if !q.has || p > q.price {
			q.best, q.price = append(q.best[:0], r.Value...), p
		}
		q.start, q.has = start, true
	}
	return rd.Err()
}

func (q *nativeQ7) fire() {
	n, body, _ := abi.Len(q.best)
	q.val = append(abi.AppendMapHeader(q.val[:0], n+2), q.best[body:]...)
	q.val = abi.AppendInt(abi.AppendStr(q.val, pipeline.DefaultStartField), q.start)
	q.val = abi.AppendInt(abi.AppendStr(q.val, pipeline.DefaultEndField), q.start+10_000)
	q.out.Append(q.start+9_999, true, nil, q.val)
	if q.out.Count == 1024 {
		q.out.Reset()
	}
	q.fired++
	q.has = false
}

func (q *nativeQ7) end() int {
	if q.has {
		q.fire()
	}
	return q.fired
}

// nativeQ5 counts bids per (sliding window start, auction), the five
// windows of 10 s every 2 s a bid falls in, and when event time passes a
// window's end emits the auction with the most bids (the first seen of
// equal counts).
type nativeQ5 struct {
	counts  map[int64]map[int64]int64 // window start -> auction -> bids
	order   map[int64][]int64         // window start -> auctions in first-seen order
	out     abi.Writer
	fired   int
	val     []byte
	next    int64 // the start of the first window not fired
	started bool
}

func (q *nativeQ5) Emit(_ int, batch []byte, count int) error {
	if q.order == nil {
		q.order = map[int64][]int64{}
	}
	rd := abi.NewReader(batch, count)
	for rd.Next() {
		r := rd.Record()
		raw, _, _ := abi.MapField(r.Value, "auction")
		a, _ := abi.ReadInt(raw)
		last := r.Time - r.Time%2_000
		for s := last; s > r.Time-10_000; s -= 2_000 {
			m := q.counts[s]
			if m == nil {
				m = map[int64]int64{}
				q.counts[s] = m
			}
			if m[a] == 0 {
				q.order[s] = append(q.order[s], a)
			}
			m[a]++
		}
		if !q.started { // the first window holding the first bid starts 4 slides before its last
			q.next, q.started = last-8_000, true
		}
		for ; q.next+10_000 <= r.Time; q.next += 2_000 { // the watermark (ts - 1) passed the window's max timestamp
			q.fire(q.next)
		}
	}
	return rd.Err()
}

func (q *nativeQ5) fire(s int64) {
	m := q.counts[s]
	if m == nil {
		return
	}
	var best, n int64
	for _, a := range q.order[s] {
		if m[a] > n {
			best, n = a, m[a]
		}
	}
	q.val = abi.AppendMapHeader(q.val[:0], 4)
	q.val = abi.AppendInt(abi.AppendStr(q.val, "auction"), best)
	q.val = abi.AppendInt(abi.AppendStr(q.val, pipeline.CountField), n)
	q.val = abi.AppendInt(abi.AppendStr(q.val, pipeline.DefaultStartField), s)
	q.val = abi.AppendInt(abi.AppendStr(q.val, pipeline.DefaultEndField), s+10_000)
	q.out.Append(s+9_999, true, nil, q.val)
	if q.out.Count == 1024 {
		q.out.Reset()
	}
	delete(q.counts, s)
	delete(q.order, s)
	q.fired++
}

func (q *nativeQ5) end() int {
	for s := range q.counts {
		q.fire(s)
	}
	return q.fired
}
