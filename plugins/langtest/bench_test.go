package langtest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// discard is a Collector that keeps nothing.
type discard struct{}

func (discard) Emit(int, []byte, int) error { return nil }

// BenchmarkFilterBatch1024 runs each language's valid filter (named by
// the language: go, c, rust, as), its double filter+map (double-go, ...),
// the same double in Go against the raw ABI with no SDK (double-go-raw:
// the floor of Go's wasm code for this work) and the hand-written WAT
// identity on batches of 1024 transactions through the real host;
// ns/record is per input record. Each batch through the guest alternates
// with the same batch through the native Go operator doing the same work
// on the same bytes (native-ns/record): this machine's speed drifts by
// tens of percent over minutes, and the ratio of the two (x-native) is
// only as good as their being measured at the same moment.
// BenchmarkFilterBatch1024Native runs the native operators alone.
func BenchmarkFilterBatch1024(b *testing.B) {
	w := langBatch(1024)
	root := repoRoot(&testing.T{})
	// The host as it runs: every call has a CPU budget, which instruments
	// guest loops (host/plugin/fuel).
	h, err := plugin.New(context.Background(), plugin.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	type target struct {
		path   string
		native runtime.Operator
	}
	targets := map[string]target{"wat-identity": {filepath.Join(root, "plugins/wat/identity.wasm"), nativeIdentity{}}}
	names := []string{}
	for _, op := range []string{"valid", "double"} {
		for _, lang := range append([]string{"go"}, languages...) {
			name := lang
			var native runtime.Operator = &nativeAmount{}
			if op != "valid" {
				name, native = op+"-"+lang, &nativeAmount{double: true}
			}
			targets[name] = target{modulePath(root, op, lang), native}
			names = append(names, name)
		}
	}
	// the floor of a Go guest: the same double with no SDK (rawgo_test.go)
	targets["double-go-raw"] = target{rawGoModule(b), &nativeAmount{double: true}}
	for _, name := range append(names, "double-go-raw", "wat-identity") {
		b.Run(name, func(b *testing.B) {
			tg := targets[name]
			op := openBench(b, h, tg.path)
			b.SetBytes(int64(len(w.Buf)))
			b.ResetTimer()
			var guest, native time.Duration
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := op.Process(0, w.Buf, w.Count, discard{}); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := tg.native.Process(0, w.Buf, w.Count, discard{}); err != nil {
					b.Fatal(err)
				}
				guest, native = guest+t1.Sub(t0), native+time.Since(t1)
			}
			records := float64(b.N * w.Count)
			b.ReportMetric(float64(guest.Nanoseconds())/records, "ns/record")
			b.ReportMetric(float64(native.Nanoseconds())/records, "native-ns/record")
			b.ReportMetric(float64(guest)/float64(native), "x-native")
		})
	}
}

// openBench opens an operator of the module at path on h for one
// benchmark, closed when it ends; a module not built skips it.
func openBench(b *testing.B, h *plugin.Host, path string) runtime.Operator {
	m, err := h.LoadFile(context.Background(), path)
	if err != nil {
		b.Skip(err)
	}
	op := m.NewOperator(context.Background(), "op", nil)
	if err := op.Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { op.Close(nil) })
	return op
}
