package checkpoint

import (
	"math/rand/v2"
	"os"
	"testing"
)

// benchState is 1 M keys' worth of keyed state: 128 key groups of 8192
// entries of 32 bytes (32 MiB), held by one subtask at max parallelism 128.
func benchState() SubtaskState {
	rng := rand.New(rand.NewPCG(1, 2))
	s := SubtaskState{Operator: "sum", Parallelism: 1, MaxParallelism: 128}
	for range 128 {
		kg := make([]byte, 8192*32)
		for i := 0; i < len(kg); i += 8 {
			v := rng.Uint64()
			for k := range 8 {
				kg[i+k] = byte(v >> (8 * k))
			}
		}
		s.KeyGroups = append(s.KeyGroups, kg)
	}
	return s
}

func stateBytes(s SubtaskState) int64 {
	var n int64
	for _, kg := range s.KeyGroups {
		n += int64(len(kg))
	}
	return n
}

// BenchmarkWrite1MKeys writes and publishes a checkpoint of 1 M keys:
// the state file fsynced, then the metadata atomically.
func BenchmarkWrite1MKeys(b *testing.B) {
	s := benchState()
	storage := b.TempDir()
	b.SetBytes(stateBytes(s))
	id := ID(0)
	for b.Loop() {
		id++
		w, err := CreateCheckpoint(storage, "job", id)
		if err != nil {
			b.Fatal(err)
		}
		f, err := w.Write(s)
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Publish(trigger, []SubtaskFile{f}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(w.Dir())
		b.StartTimer()
	}
}

func benchCheckpoint(b *testing.B) (string, int64) {
	s := benchState()
	storage := b.TempDir()
	w, err := CreateCheckpoint(storage, "job", 1)
	if err != nil {
		b.Fatal(err)
	}
	f, err := w.Write(s)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Publish(trigger, []SubtaskFile{f}); err != nil {
		b.Fatal(err)
	}
	return w.Dir(), stateBytes(s)
}

// BenchmarkRestore1MKeys opens the checkpoint and restores its only
// subtask at the same parallelism: every key group, every checksum.
func BenchmarkRestore1MKeys(b *testing.B) {
	dir, n := benchCheckpoint(b)
	b.SetBytes(n)
	for b.Loop() {
		r, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		got, err := r.Restore("sum", 0, 1, 128)
		if err != nil || len(got.KeyGroups) != 128 {
			b.Fatal(len(got.KeyGroups), err)
		}
	}
}

// BenchmarkRestore1MKeysRescaled restores subtask 1 of 4 from it: the 32
// key groups of its range, a quarter of the bytes (the figure is per
// restored byte).
func BenchmarkRestore1MKeysRescaled(b *testing.B) {
	dir, n := benchCheckpoint(b)
	b.SetBytes(n / 4)
	for b.Loop() {
		r, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		got, err := r.Restore("sum", 1, 4, 128)
		if err != nil || len(got.KeyGroups) != 32 {
			b.Fatal(len(got.KeyGroups), err)
		}
	}
}

// BenchmarkVerify1MKeys is what Latest adds before it trusts a
// checkpoint: reading every byte through and checking every checksum.
func BenchmarkVerify1MKeys(b *testing.B) {
	dir, n := benchCheckpoint(b)
	b.SetBytes(n)
	for b.Loop() {
		r, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Verify(); err != nil {
			b.Fatal(err)
		}
	}
}
