package langtest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// discard is a Collector that keeps nothing.
type discard struct{}

func (discard) Emit(int, []byte, int) error { return nil }

// BenchmarkFilterBatch1024 runs each language's valid filter on batches of
// 1024 transactions through the real host; ns/record is per input record.
func BenchmarkFilterBatch1024(b *testing.B) {
	var w abi.Writer
	for i := 0; i < 1024; i++ {
		v := enc(nil, obj{"txnId", i, "accountId", fmt.Sprint("acct-", i%97), "amount", i%7 - 3, "currency", "EUR"})
		w.Append(int64(1_700_000_000_000+i), true, nil, v)
	}
	root := repoRoot(&testing.T{})
	// The host as it runs: every call has a deadline, which instruments
	// guest loops (4-7x on loop-heavy guests, shared/design/abi.md).
	h, err := plugin.New(context.Background(), plugin.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	paths := map[string]string{"wat-identity": filepath.Join(root, "plugins/wat/identity.wasm")}
	for _, lang := range append([]string{"go"}, languages...) {
		paths[lang] = modulePath(root, "valid", lang)
	}
	for _, name := range []string{"go", "c", "rust", "as", "wat-identity"} {
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
