package langtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// BenchmarkBatchSweep runs the C build of valid through the real host (as
// BenchmarkFilterBatch1024 does: DefaultConfig, every call under its
// deadline) at batch sizes 1, 16, 256, 1024 and 4096, against native Go
// doing the same on the same bytes. Each size walks the same 4096 records
// in windows of that size, so every size sees the same records. ns/record
// is per input record: at batch 1 it is the cost of one call; where it
// stops falling, the per-call cost has disappeared into the per-record one.
func BenchmarkBatchSweep(b *testing.B) {
	all := langBatch(4096)
	offs := make([]int, 0, all.Count+1) // offs[i]: where record i starts
	for off := 0; off < len(all.Buf); {
		offs = append(offs, off)
		end, err := abi.Skip(all.Buf, off)
		if err != nil {
			b.Fatal(err)
		}
		off = end
	}
	offs = append(offs, len(all.Buf))
	ctx := context.Background()
	h, err := plugin.New(ctx, plugin.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	for _, impl := range []string{"c", "native"} {
		b.Run(impl, func(b *testing.B) {
			var op runtime.Operator = &nativeAmount{}
			if impl != "native" {
				m, err := h.LoadFile(ctx, modulePath(repoRoot(&testing.T{}), "valid", impl))
				if err != nil {
					b.Skip(err)
				}
				pop := m.NewOperator(ctx, "op", nil)
				if err := pop.Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
					b.Fatal(err)
				}
				defer pop.Close(nil)
				op = pop
			}
			for _, size := range []int{1, 16, 256, 1024, 4096} {
				b.Run(fmt.Sprint(size), func(b *testing.B) {
					windows := all.Count / size
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						j := i % windows
						if err := op.Process(0, all.Buf[offs[j*size]:offs[(j+1)*size]], size, discard{}); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/record")
				})
			}
		})
	}
}
