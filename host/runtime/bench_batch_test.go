package runtime_test

import (
	"fmt"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/runtime"
)

// BenchmarkManyKeys is a keyed sum over keys distinct per record (the
// generator's sequence, keyed by n) into a discard sink, in BATCH and in
// STREAMING mode: the state holds one key per record. BATCH emits one
// final per key at the end of input, STREAMING one update per record, so
// BATCH should cost no more. Figures: ns/record, and peak-MB, the largest
// live heap seen during the run (sampled every 5 ms).
func BenchmarkManyKeys(b *testing.B) {
	const n = 1 << 20
	for _, mode := range []string{"batch", "streaming"} {
		b.Run(mode, func(b *testing.B) {
			src := fmt.Sprintf(`
version: 1
name: many-keys
mode: %s
parallelism: 1
operators:
  - id: src
    source: { type: generator, preset: sequence, count: %d }
  - id: totals
    key-by: n
    sum: n
  - id: out
    sink: { type: discard }
`, mode, n)
			b.ReportAllocs()
			peak := watchHeap()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := runPipeline(b, "many-keys.yaml", src, nil, runtime.Options{})
				if r.err != nil {
					b.Fatal(r.err)
				}
				if got := r.res.Operator("totals").RecordsOut; got != n {
					b.Fatalf("totals emitted %d records, want %d", got, n)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
			b.ReportMetric(float64(peak())/(1<<20), "peak-MB")
		})
	}
}

// watchHeap samples the live heap (bytes in heap objects) until the
// returned function is called; it returns the largest sample.
func watchHeap() func() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var mu sync.Mutex
	var max uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			max = maxU(max, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return max
	}
}

func maxU(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}
