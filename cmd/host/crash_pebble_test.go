package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCrashPebbleCheckpoint: the crash job with its keyed state on Pebble
// takes Pebble's own checkpoints (shared sstables, a .refs per
// checkpoint); killed with SIGKILL from outside, half the time while a
// checkpoint is being copied into the storage, and resumed each time with
// --from latest (the previous checkpoint), it commits exactly what an
// uninterrupted run on the heap commits.
func TestCrashPebbleCheckpoint(t *testing.T) {
	bin := buildHost(t)
	ref := newCrashJob(t, bin, "exactly-once")
	ref.runToEnd()
	reference := ref.committed()
	if len(reference) != 24000 {
		t.Fatalf("the uninterrupted run committed %d records, want 24000", len(reference))
	}

	job := newCrashJob(t, bin, "exactly-once")
	src := strings.Replace(readFileT(t, filepath.Join(job.dir, "crash.yaml")), "restart-strategy: none\n", "restart-strategy: none\nstate: { backend: pebble, dir: state }\n", 1)
	writeFile(t, filepath.Join(job.dir, "crash.yaml"), src)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	const kills = 8
	killed, midWrites, native := 0, 0, false
	for killed < kills {
		at := killAfterCheckpoint
		if killed%2 == 1 {
			at = killDuringWrite
		}
		finished, mid := job.crash(rng, at)
		if finished {
			break
		}
		killed++
		if mid {
			midWrites++
		}
		for _, d := range job.completed() {
			if refs, _ := filepath.Glob(filepath.Join(d, "totals-*.refs")); len(refs) > 0 {
				native = true
			}
		}
	}
	t.Logf("%d kills, %d with a checkpoint being written", killed, midWrites)
	if killed < kills {
		t.Fatalf("the job finished after %d kills, want %d: make it longer", killed, kills)
	}
	if !native {
		t.Fatal("no completed checkpoint holds native Pebble state (no .refs file)")
	}
	if midWrites < 2 {
		t.Errorf("only %d kills hit a checkpoint being written, want several", midWrites)
	}
	if ents, err := os.ReadDir(filepath.Join(job.dir, "ckpt", "crash", "shared")); err != nil || len(ents) == 0 {
		t.Fatalf("no shared sstables in the storage: %v", err)
	}
	job.runToEnd()
	if got := job.committed(); !slices.Equal(got, reference) {
		t.Fatalf("committed output differs from the uninterrupted run: %s", diffLines(reference, got))
	}
}
