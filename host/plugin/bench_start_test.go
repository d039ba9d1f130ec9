package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// Start-up benchmarks over the built plugins (make plugins), through the
// public API only: the C, Rust and AssemblyScript builds of the example
// plugin valid, the hand-written plugins/wat/identity.wasm and the Go
// build of valid. They complete bench_test.go's StartWarmCache,
// Instantiate and MemoryPerInstance (WAT fixture and Go guest) with the
// compiled languages, and add the cold start.

// builtPlugin returns plugins/<rel>, skipping when it was not built.
func builtPlugin(b *testing.B, rel string) string {
	p := filepath.Join("..", "..", "plugins", rel)
	if _, err := os.Stat(p); err != nil {
		b.Skipf("%s not built (make plugins)", p)
	}
	return p
}

var startGuests = []struct{ name, path string }{
	{"wat", "wat/identity.wasm"},
	{"c", "valid/valid-c.wasm"},
	{"rust", "valid/valid-rust.wasm"},
	{"as", "valid/valid-as.wasm"},
	{"go", "valid/valid.wasm"},
}

// startOnce builds a Host, loads path, opens and closes one operator and
// closes the Host: a new process's plugin start.
func startOnce(b *testing.B, cfg plugin.Config, path string) {
	ctx := context.Background()
	h, err := plugin.New(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	m, err := h.LoadFile(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	op := m.NewOperator(ctx, "op", nil)
	if err := op.Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
		b.Fatal(err)
	}
	op.Close(nil)
	h.Close(ctx)
}

// BenchmarkStartCold: plugin start without a compilation cache: the
// module is compiled every time (the first run on a machine, or a module
// that changed), then instantiated and opened.
func BenchmarkStartCold(b *testing.B) {
	for _, g := range startGuests {
		b.Run(g.name, func(b *testing.B) {
			path := builtPlugin(b, g.path)
			for i := 0; i < b.N; i++ {
				startOnce(b, plugin.DefaultConfig(), path)
			}
		})
	}
}

// BenchmarkStartWarmCacheLangs is bench_test.go's StartWarmCache for the
// compiled-language guests: a new Host over a warm on-disk compilation
// cache, load, instantiate, open.
func BenchmarkStartWarmCacheLangs(b *testing.B) {
	for _, g := range startGuests[1:4] {
		b.Run(g.name, func(b *testing.B) {
			path := builtPlugin(b, g.path)
			cfg := plugin.DefaultConfig()
			cfg.CacheDir = b.TempDir()
			startOnce(b, cfg, path) // warm the cache
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				startOnce(b, cfg, path)
			}
		})
	}
}

// BenchmarkInstantiateLangs is bench_test.go's Instantiate for the
// compiled-language guests: one more opened instance of a compiled module.
func BenchmarkInstantiateLangs(b *testing.B) {
	ctx := context.Background()
	h, err := plugin.New(ctx, plugin.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	for _, g := range startGuests[1:4] {
		b.Run(g.name, func(b *testing.B) {
			m, err := h.LoadFile(ctx, builtPlugin(b, g.path))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				op := m.NewOperator(ctx, "op", nil)
				if err := op.Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
					b.Fatal(err)
				}
				op.Close(nil)
			}
		})
	}
}

// BenchmarkMemoryPerInstanceLangs is bench_test.go's MemoryPerInstance for
// the compiled-language guests: the linear memory and Go heap one open
// instance holds, over 16 instances alive at once (ns/op is not
// meaningful).
func BenchmarkMemoryPerInstanceLangs(b *testing.B) {
	const n = 16
	ctx := context.Background()
	h, err := plugin.New(ctx, plugin.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	for _, g := range startGuests[1:4] {
		b.Run(g.name, func(b *testing.B) {
			m, err := h.LoadFile(ctx, builtPlugin(b, g.path))
			if err != nil {
				b.Fatal(err)
			}
			var before, after goruntime.MemStats
			goruntime.GC()
			goruntime.ReadMemStats(&before)
			ops := make([]*plugin.Operator, n)
			linear := uint64(0)
			for i := range ops {
				ops[i] = m.NewOperator(ctx, "op", nil)
				if err := ops[i].Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
					b.Fatal(err)
				}
				linear += ops[i].MemoryBytes()
			}
			goruntime.GC()
			goruntime.ReadMemStats(&after)
			b.ReportMetric(float64(linear)/n, "linear-B/instance")
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "heap-B/instance")
			b.ReportMetric(0, "ns/op")
			for _, op := range ops {
				op.Close(nil)
			}
		})
	}
}
