package langtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// discard is a Collector that keeps nothing.
type discard struct{}

func (discard) Emit(int, []byte, int) error { return nil }

// BenchmarkFilterBatch1024 runs each language's valid filter (named by
// the language: go, c, rust, as), its double filter+map (double-go, ...)
// and the hand-written WAT identity on batches of 1024 transactions
// through the real host; ns/record is per input record.
// BenchmarkFilterBatch1024Native does the same work in native Go on the
// same bytes.
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
	paths := map[string]string{"wat-identity": filepath.Join(root, "plugins/wat/identity.wasm")}
	names := []string{}
	for _, op := range []string{"valid", "double"} {
		for _, lang := range append([]string{"go"}, languages...) {
			name := lang
			if op != "valid" {
				name = op + "-" + lang
			}
			paths[name] = modulePath(root, op, lang)
			names = append(names, name)
		}
	}
	for _, name := range append(names, "wat-identity") {
		b.Run(name, func(b *testing.B) {
			m, err := h.LoadFile(context.Background(), paths[name])
			if err != nil {
				b.Skip(err)
			}
			op := m.NewOperator(context.Background(), "op", nil)
			if err := op.Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
				b.Fatal(err)
			}
			defer op.Close(nil)
			b.SetBytes(int64(len(w.Buf)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op.Process(0, w.Buf, w.Count, discard{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*w.Count), "ns/record")
		})
	}
}
