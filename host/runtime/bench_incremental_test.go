package runtime

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
)

// BenchmarkDirtyTracking: BenchmarkKeyedShuffle's job (2 sources -> HASH
// on accountId -> 2 keyed sums -> discard) with an exactly-once
// checkpoint every 100 ms, the heap backend's dirty tracking off
// (Options.FullCheckpoints: every checkpoint full) and on (incremental
// checkpoints): what marking every changed cell costs the keyed shuffle,
// side by side in one run. The states are dropped, not written.
func BenchmarkDirtyTracking(b *testing.B) {
	for _, v := range []struct {
		name string
		full bool
	}{{"off", true}, {"on", false}} {
		b.Run(v.name, func(b *testing.B) {
			acks := &countingAcks{}
			deps := Deps{Checkpoints: acks, Options: Options{FullCheckpoints: v.full}}
			benchRunWith(b, shufflePipeline, nil, deps, checkpointEvery(acks, 100*time.Millisecond))
			b.ReportMetric(float64(acks.done.Load()), "checkpoints")
		})
	}
}

// BenchmarkIncrementalCheckpoint: one subtask's heap state of 200 000
// keys (128 key groups, 100-byte values) of which 10 % (random keys)
// changed since the last checkpoint, written to disk as one checkpoint
// (snapshot, checkpoint.Writer's write and fsync, publish) full and
// incrementally on the previous one; compactions of chains past their
// bound are in the incremental figures as they come. Figures: ns/op and
// the state file's bytes per checkpoint.
func BenchmarkIncrementalCheckpoint(b *testing.B) {
	const keys, maxP = 200_000, 128
	for _, v := range []struct {
		name        string
		incremental bool
	}{{"full", false}, {"incremental", true}} {
		b.Run(v.name, func(b *testing.B) {
			st := NewKeyedStore(maxP, 0, maxP-1)
			st.SetTracking(v.incremental)
			val := make([]byte, 100)
			key := func(i int) []byte { return strKey(fmt.Sprintf("account-%07d", i)) }
			for i := range keys {
				if err := st.Put(1, key(i), val); err != nil {
					b.Fatal(err)
				}
			}
			storage := b.TempDir()
			rng := rand.New(rand.NewPCG(1, 2))
			var written int64
			write := func(id checkpoint.ID) {
				w, err := checkpoint.CreateCheckpoint(storage, "job", id)
				if err != nil {
					b.Fatal(err)
				}
				first, groups, changes, base := st.SnapshotCheckpoint(id)
				f, err := w.Write(checkpoint.SubtaskState{Operator: "sum", Parallelism: 1, MaxParallelism: maxP,
					FirstKeyGroup: first, KeyGroups: groups, Changes: changes, Base: base})
				if err != nil {
					b.Fatal(err)
				}
				if err := w.Publish(time.Unix(0, 0), []checkpoint.SubtaskFile{f}); err != nil {
					b.Fatal(err)
				}
				st.CheckpointComplete(id)
				written += f.Size
			}
			write(1)
			written = 0
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				for range keys / 10 {
					k := rng.IntN(keys)
					val[k%100]++
					if err := st.Put(1, key(k), val); err != nil {
						b.Fatal(err)
					}
				}
				if i > 0 && i%4 == 0 { // keep the disk use bounded as a job's retain does
					if _, err := checkpoint.Retain(checkpoint.JobDir(storage, "job"), 1); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				write(checkpoint.ID(i + 2))
			}
			b.StopTimer()
			b.ReportMetric(float64(written)/float64(b.N), "bytes")
			os.RemoveAll(storage)
		})
	}
}

// BenchmarkDirtyTrackingStore: the write path alone, Put of a 16-byte
// value over 1000 keys of one store, dirty tracking off and on; a
// checkpoint snapshot (not timed) every 100 000 writes clears the marks,
// so each interval pays for marking every key once. ns/op is one Put.
func BenchmarkDirtyTrackingStore(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[on]
		b.Run(name, func(b *testing.B) {
			st := NewKeyedStore(128, 0, 127)
			st.SetTracking(on)
			keys := make([][]byte, 1000)
			for i := range keys {
				keys[i] = strKey(fmt.Sprintf("acct-%06d", i))
			}
			val := make([]byte, 16)
			id := checkpoint.ID(0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i%100_000 == 0 {
					b.StopTimer()
					id++
					st.SnapshotCheckpoint(id)
					st.CheckpointComplete(id)
					b.StartTimer()
				}
				val[0] = byte(i)
				if err := st.Put(1, keys[i%len(keys)], val); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
