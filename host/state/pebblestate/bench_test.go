package pebblestate_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/host/runtime/statetest"
)

// BenchmarkKeyedAggregation is a read-modify-write keyed aggregation (a
// running sum per key: get, add, put) over 100k keys of one subtask, on
// the heap and on Pebble in the same run, in calls of 1024 records as the
// plugin adapter makes them (Pebble: one batch a call). It reports
// records/s.
func BenchmarkKeyedAggregation(b *testing.B) {
	const keys, call = 100_000, 1024
	ks := make([][]byte, keys)
	for i := range ks {
		ks[i] = statetest.Key(i)
	}
	for _, bk := range []struct {
		name string
		open func(b *testing.B) runtime.StateBackend
	}{
		{"heap", func(*testing.B) runtime.StateBackend { return runtime.NewKeyedStore(128, 0, 127) }},
		{"pebble", func(b *testing.B) runtime.StateBackend { return pebbleWith(b, 128, 0, 127, 0) }},
	} {
		b.Run(bk.name, func(b *testing.B) {
			st := bk.open(b)
			defer st.Close()
			batcher, _ := st.(runtime.CallBatcher)
			rng := rand.New(rand.NewPCG(1, 2))
			var buf [8]byte
			dst := make([]byte, 0, 8)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if batcher != nil && i%call == 0 {
					if i > 0 {
						if err := batcher.CommitCall(); err != nil {
							b.Fatal(err)
						}
					}
					batcher.BeginCall()
				}
				k := ks[rng.IntN(keys)]
				v, ok, err := st.Get(0, k, dst)
				if err != nil {
					b.Fatal(err)
				}
				var sum uint64
				if ok {
					sum = binary.LittleEndian.Uint64(v)
				}
				binary.LittleEndian.PutUint64(buf[:], sum+uint64(i&7))
				if err := st.Put(0, k, buf[:]); err != nil {
					b.Fatal(err)
				}
			}
			if batcher != nil {
				if err := batcher.CommitCall(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
