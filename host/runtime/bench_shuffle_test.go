package runtime

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkKeyedShuffleParallelism is BenchmarkKeyedShuffle (sources ->
// HASH on accountId -> keyed sums -> discard) at 1, 2 and 4 subtasks per
// operator, on this 2-core machine; BenchmarkKeyedShuffleNativeParallelism
// is BenchmarkKeyedShuffleNative's structs and goroutines at the same
// parallelism. Figures: records/s (wall) and cpu-ns/rec.
func BenchmarkKeyedShuffleParallelism(b *testing.B) {
	for _, p := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("p%d", p), func(b *testing.B) {
			benchRun(b, strings.Replace(shufflePipeline, "parallelism: 2", fmt.Sprintf("parallelism: %d", p), 1), nil)
		})
	}
}

func BenchmarkKeyedShuffleNativeParallelism(b *testing.B) {
	for _, p := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("p%d", p), func(b *testing.B) { keyedShuffleNative(b, p) })
	}
}

// keyedShuffleNative: p producers hash-partition structs in batches of
// 1024 over channels to p goroutines keeping a sum per key in a map and
// producing the updated record for each input; consumed batches go back
// to the producers, as the engine reuses its batch buffers.
func keyedShuffleNative(b *testing.B, p int) {
	type txn struct {
		account    string
		amount, ts int64
		payload    string
	}
	recs := make([]txn, 1024)
	for i := range recs {
		recs[i] = txn{fmt.Sprintf("acct-%06d", i*7919%1000), int64(i%200 - 98), int64(1700000000000 + i), "0123456789abcdef0123456789abcdef"}
	}
	seed := maphash.MakeSeed()
	var sunk atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	chans := make([]chan []txn, p)
	// used batches go back to the producers, as the engine reuses its
	// batch buffers: a new batch for every 1024 records made the baseline
	// allocate 48 bytes a record and collect them
	free := make(chan []txn, 8*p*p)
	var wg sync.WaitGroup
	for i := range chans {
		chans[i] = make(chan []txn, 4*p)
		wg.Add(1)
		go func(in chan []txn) {
			defer wg.Done()
			sums := map[string]*txn{}
			out := make([]txn, 0, 1024)
			var n int64
			for batch := range in {
				for _, r := range batch {
					t := sums[r.account]
					if t == nil {
						c := r
						t = &c
						sums[r.account] = t
					} else {
						t.amount += r.amount
					}
					if out = append(out, *t); len(out) == cap(out) {
						out = out[:0] // emitted
					}
					n++
				}
				select {
				case free <- batch[:0]:
				default:
				}
			}
			sunk.Add(n)
		}(chans[i])
	}
	var prod sync.WaitGroup
	for s := 0; s < p; s++ {
		prod.Add(1)
		go func(share int) {
			defer prod.Done()
			out := make([][]txn, p)
			for left := share; left > 0; {
				for _, r := range recs[:min(left, len(recs))] {
					c := int(maphash.String(seed, r.account) % uint64(p))
					out[c] = append(out[c], r)
					if len(out[c]) == 1024 {
						chans[c] <- out[c]
						select {
						case out[c] = <-free:
						default:
							out[c] = make([]txn, 0, 1024)
						}
					}
				}
				left -= min(left, len(recs))
			}
			for c := range out {
				if len(out[c]) > 0 {
					chans[c] <- out[c]
				}
			}
		}((b.N + p - 1 - s) / p)
	}
	prod.Wait()
	for _, c := range chans {
		close(c)
	}
	wg.Wait()
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	if sunk.Load() != int64(b.N) {
		b.Fatalf("summed %d of %d", sunk.Load(), b.N)
	}
	b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
}
