package plugin

import (
	"context"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

// discard is a Collector that keeps nothing.
type discard struct{ records int }

func (d *discard) Emit(_ int, _ []byte, count int) error { d.records += count; return nil }

// nativeNoop is the native twin of testdata/noop.wat.
type nativeNoop struct{}

func (nativeNoop) Open(*runtime.OpenContext) error                   { return nil }
func (nativeNoop) Process(int, []byte, int, runtime.Collector) error { return nil }
func (nativeNoop) Close(runtime.Collector) error                     { return nil }

// BenchmarkCallOverhead: one batch of one record through a plugin that
// does nothing (buffer + copy + process), against a native operator.
func BenchmarkCallOverhead(b *testing.B) {
	rec := record(nil, 1, 1)
	run := func(b *testing.B, op runtime.Operator) {
		out := &discard{}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := op.Process(0, rec, 1, out); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("wasm", func(b *testing.B) {
		run(b, open(b, load(b, newHost(b, nil), "noop"), runtime.OpenContext{}))
	})
	b.Run("native", func(b *testing.B) { run(b, nativeNoop{}) })
}

// nativeFilterOp runs nativeFilter as an operator.
type nativeFilterOp struct{ w abi.Writer }

func (*nativeFilterOp) Open(*runtime.OpenContext) error { return nil }
func (n *nativeFilterOp) Process(_ int, batch []byte, count int, out runtime.Collector) error {
	n.w.Reset()
	if err := nativeFilter(&n.w, batch, count); err != nil {
		return err
	}
	return out.Emit(0, n.w.Buf, n.w.Count)
}
func (*nativeFilterOp) Close(runtime.Collector) error { return nil }

func perRecord(b *testing.B, op runtime.Operator, w abi.Writer) {
	out := &discard{}
	b.SetBytes(int64(len(w.Buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := op.Process(0, w.Buf, w.Count, out); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*w.Count), "ns/record")
}

// BenchmarkFilterMap: keep amount > 0 and double it, batch 1024, the
// hand-written WAT guest against native Go on the same msgpack bytes.
func BenchmarkFilterMap(b *testing.B) {
	w := filterBatch(1024)
	b.Run("wasm", func(b *testing.B) {
		perRecord(b, open(b, load(b, newHost(b, nil), "filter"), runtime.OpenContext{}), w)
	})
	b.Run("wasm-unchecked-output", func(b *testing.B) {
		h := newHost(b, func(c *Config) { c.CheckOutput = false })
		perRecord(b, open(b, load(b, h, "filter"), runtime.OpenContext{}), w)
	})
	b.Run("native", func(b *testing.B) { perRecord(b, &nativeFilterOp{}, w) })
}

// goPluginBench returns an example Go plugin's built module, skipping the
// benchmark when `make plugins` has not built it.
func goPluginBench(b *testing.B, name string) string {
	p := filepath.Join("..", "..", "plugins", name, name+".wasm")
	if _, err := os.Stat(p); err != nil {
		b.Skipf("%s not built (make plugins)", p)
	}
	return p
}

// chain runs operators one after the other, as a chain does.
type chain struct {
	ops []runtime.Operator
	buf [2]abi.Writer
}

type writerSink struct{ w *abi.Writer }

func (s writerSink) Emit(_ int, buf []byte, count int) error {
	s.w.Buf = append(s.w.Buf, buf...)
	s.w.Count += count
	return nil
}

func (c *chain) Open(*runtime.OpenContext) error { return nil }
func (c *chain) Close(runtime.Collector) error   { return nil }
func (c *chain) Process(_ int, batch []byte, count int, out runtime.Collector) error {
	for i, op := range c.ops {
		if i == len(c.ops)-1 {
			return op.Process(0, batch, count, out)
		}
		w := &c.buf[i%2]
		w.Reset()
		if err := op.Process(0, batch, count, writerSink{w}); err != nil {
			return err
		}
		batch, count = w.Buf, w.Count
	}
	return nil
}

// nativeValidEnrich is valid (amount > 0) then enrich (add "bank": "NBI")
// on the msgpack bytes with abi's scanner.
type nativeValidEnrich struct{ w abi.Writer }

func (*nativeValidEnrich) Open(*runtime.OpenContext) error { return nil }
func (*nativeValidEnrich) Close(runtime.Collector) error   { return nil }
func (n *nativeValidEnrich) Process(_ int, batch []byte, count int, out runtime.Collector) error {
	n.w.Reset()
	var v []byte
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
		pairs, body, err := abi.Len(r.Value)
		if err != nil {
			return err
		}
		v = abi.AppendMapHeader(v[:0], pairs+1)
		v = append(v, r.Value[body:]...)
		v = abi.AppendStr(v, "bank")
		v = abi.AppendStr(v, "NBI")
		n.w.Append(r.Time, r.HasTime, r.Key, v)
	}
	if err := rd.Err(); err != nil {
		return err
	}
	return out.Emit(0, n.w.Buf, n.w.Count)
}

// BenchmarkGoSDK: the example Go plugins valid then enrich (config
// bank=NBI) at batch 1024, against the same work in native Go.
func BenchmarkGoSDK(b *testing.B) {
	w := filterBatch(1024)
	b.Run("wasm", func(b *testing.B) {
		h := newHost(b, nil)
		var ops []runtime.Operator
		for _, name := range []string{"valid", "enrich"} {
			m, err := h.LoadFile(context.Background(), goPluginBench(b, name))
			if err != nil {
				b.Fatal(err)
			}
			ops = append(ops, open(b, m, runtime.OpenContext{Config: map[string]any{"bank": "NBI"}}))
		}
		perRecord(b, &chain{ops: ops}, w)
	})
	b.Run("native", func(b *testing.B) { perRecord(b, &nativeValidEnrich{}, w) })
}

// BenchmarkStartWarmCache: a new Host over a warm on-disk compilation
// cache, load (compile from the cache), instantiate, _initialize and
// open; the whole cold path of a new process but the compiler.
func BenchmarkStartWarmCache(b *testing.B) {
	start := func(b *testing.B, path string) {
		dir := b.TempDir()
		once := func() {
			h := newHost(b, func(c *Config) { c.CacheDir = dir })
			m, err := h.LoadFile(context.Background(), path)
			if err != nil {
				b.Fatal(err)
			}
			op := m.NewOperator(context.Background(), "op", nil)
			if err := op.Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
				b.Fatal(err)
			}
			op.Close(nil)
			h.Close(context.Background())
		}
		once() // warm the cache
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			once()
		}
	}
	b.Run("wat", func(b *testing.B) { start(b, fixturePath(b, "identity")) })
	b.Run("go", func(b *testing.B) { start(b, goPluginBench(b, "valid")) })
}

// BenchmarkInstantiate: one more instance of an already compiled module,
// opened (what a new subtask or a replaced instance costs).
func BenchmarkInstantiate(b *testing.B) {
	inst := func(b *testing.B, m *Module) {
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			op := m.NewOperator(context.Background(), "op", nil)
			if err := op.Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
				b.Fatal(err)
			}
			op.Close(nil)
		}
	}
	h := newHost(b, nil)
	b.Run("wat", func(b *testing.B) { inst(b, load(b, h, "identity")) })
	b.Run("go", func(b *testing.B) {
		m, err := h.LoadFile(context.Background(), goPluginBench(b, "valid"))
		if err != nil {
			b.Fatal(err)
		}
		inst(b, m)
	})
}

// BenchmarkMemoryPerInstance reports the linear memory and Go heap that
// one open instance holds, measured over 16 instances alive at once; the
// time per op is not meaningful.
func BenchmarkMemoryPerInstance(b *testing.B) {
	const n = 16
	measure := func(b *testing.B, m *Module) {
		var before, after goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&before)
		ops := make([]*Operator, n)
		linear := 0
		for i := range ops {
			ops[i] = m.NewOperator(context.Background(), "op", nil)
			if err := ops[i].Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
				b.Fatal(err)
			}
			linear += int(ops[i].r.inst.mem.Size())
		}
		goruntime.GC()
		goruntime.ReadMemStats(&after)
		b.ReportMetric(float64(linear)/n, "linear-B/instance")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "heap-B/instance")
		b.ReportMetric(0, "ns/op")
		for _, op := range ops {
			op.Close(nil)
		}
	}
	h := newHost(b, nil)
	b.Run("wat", func(b *testing.B) { measure(b, load(b, h, "identity")) })
	b.Run("go", func(b *testing.B) {
		m, err := h.LoadFile(context.Background(), goPluginBench(b, "valid"))
		if err != nil {
			b.Fatal(err)
		}
		measure(b, m)
	})
}
