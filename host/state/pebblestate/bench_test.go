package pebblestate_test

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/host/runtime/statetest"
	"github.com/sluicehq/sluice/host/state/pebblestate"
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

// randomValue is n bytes that do not compress.
func randomValue(n int) []byte {
	rng := rand.New(rand.NewPCG(5, 6))
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(rng.Uint32())
	}
	return v
}

// fill puts n keys of slot 0 (val bytes each) in calls of 4096.
func fill(b *testing.B, st *pebblestate.Store, n int, val []byte) {
	b.Helper()
	for i := 0; i < n; i++ {
		if i%4096 == 0 {
			if i > 0 {
				if err := st.CommitCall(); err != nil {
					b.Fatal(err)
				}
			}
			st.BeginCall()
		}
		binary.LittleEndian.PutUint64(val, uint64(i)*0x9e3779b97f4a7c15) // values differ: blocks do not compress them away
		if err := st.Put(0, statetest.Key(i), val); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.CommitCall(); err != nil {
		b.Fatal(err)
	}
	if err := st.Compact(); err != nil { // the steady state, not the bulk load's compactions
		b.Fatal(err)
	}
}

// BenchmarkNativeCheckpointSync is the synchronous part of a Pebble
// checkpoint (NativeCheckpoint: flush the memtable, db.Checkpoint's hard
// links) at growing state sizes, with 10 000 keys written since the last
// checkpoint, as a running job writes between two. The copy into the
// storage is not timed: it is the asynchronous part. It reports sync-ms
// and the state's bytes.
func BenchmarkNativeCheckpointSync(b *testing.B) {
	val := randomValue(100)
	for _, size := range []struct {
		name string
		keys int
	}{{"keys-10k", 10_000}, {"keys-300k", 300_000}, {"keys-3M", 3_000_000}} {
		b.Run(size.name, func(b *testing.B) {
			st := pebbleWith(b, 128, 0, 127, 0)
			defer st.Close()
			fill(b, st, size.keys, val)
			rng := rand.New(rand.NewPCG(1, 2))
			var spent time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				st.BeginCall()
				for range 10_000 {
					if err := st.Put(0, statetest.Key(rng.IntN(size.keys)), val); err != nil {
						b.Fatal(err)
					}
				}
				if err := st.CommitCall(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				t0 := time.Now()
				ns, err := st.NativeCheckpoint(checkpoint.ID(i + 1))
				spent += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := os.RemoveAll(ns.Dir); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(spent.Microseconds())/1e3/float64(b.N), "sync-ms")
			b.ReportMetric(float64(st.Size()), "state-bytes")
		})
	}
}

// BenchmarkLargerThanMemory is BenchmarkKeyedAggregation's
// read-modify-write on Pebble with state larger than the backend's
// memory: 2 M keys of 100 bytes (about 230 MB) against a 32 MiB block
// cache and a 32 MiB memtable, keys drawn uniformly (the worst case for
// the cache). It reports records/s and the state's bytes.
func BenchmarkLargerThanMemory(b *testing.B) {
	const keys, call = 2_000_000, 1024
	st := pebbleWith(b, 128, 0, 127, 0)
	defer st.Close()
	val := randomValue(100)
	fill(b, st, keys, val)
	ns, err := st.NativeCheckpoint(1) // flushes the memtable: the state is on disk
	if err != nil {
		b.Fatal(err)
	}
	os.RemoveAll(ns.Dir)
	rng := rand.New(rand.NewPCG(3, 4))
	dst := make([]byte, 0, len(val))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%call == 0 {
			if i > 0 {
				if err := st.CommitCall(); err != nil {
					b.Fatal(err)
				}
			}
			st.BeginCall()
		}
		k := statetest.Key(rng.IntN(keys))
		v, ok, err := st.Get(0, k, dst)
		if err != nil || !ok {
			b.Fatal(err, ok)
		}
		binary.LittleEndian.PutUint64(v, binary.LittleEndian.Uint64(v)+uint64(i&7))
		if err := st.Put(0, k, v); err != nil {
			b.Fatal(err)
		}
		dst = v
	}
	if err := st.CommitCall(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(st.Size()), "state-bytes")
}
