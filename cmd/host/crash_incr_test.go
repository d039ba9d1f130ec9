package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/runtime"
)

// Incremental checkpoints of the heap backend in a real `host run`: a
// keyed built-in sum over 4000 accounts, checkpointed every 100 ms, so
// that each checkpoint sees about a sixth of the keys change.

const incrPipeline = `version: 1
name: incr
parallelism: %d
checkpointing:
  interval: 100ms
  storage: ckpt
  retain: %d
restart-strategy: none
operators:
  - id: txns
    source: { type: generator, preset: transactions, count: 24000, rate: 6000, seed: 11, accounts: 4000 }
    parallelism: 1
  - id: totals
    key-by: accountId
    sum: amount
  - id: out
    sink: { type: file, path: out/totals.jsonl }
`

func newIncrJob(t *testing.T, bin string, p, retain int) *crashJob {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "incr.yaml"), fmt.Sprintf(incrPipeline, p, retain))
	return &crashJob{t: t, bin: bin, dir: dir, name: "incr"}
}

// TestIncrementalCheckpointFiles: an uninterrupted run keeping every
// checkpoint: the first is full (no chains), the later ones incremental
// (but the last, the finished tasks' full final state), each restoring
// exactly (Verify reads every link) and together writing less than half
// the bytes of the sum's keyed state that full checkpoints of the same
// state would (the state of each, its chains merged, measures that).
func TestIncrementalCheckpointFiles(t *testing.T) {
	bin := buildHost(t)
	job := newIncrJob(t, bin, 2, 1000)
	job.runToEnd()
	storage := filepath.Join(job.dir, "ckpt")
	var ids []checkpoint.ID
	for _, d := range job.completed() {
		r, err := checkpoint.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Meta.ID)
	}
	slices.Sort(ids)
	if len(ids) < 5 {
		t.Fatalf("%d checkpoints, want at least 5", len(ids))
	}
	var wrote, whole int64
	for i, id := range ids {
		r, err := checkpoint.Open(checkpoint.CheckpointDir(storage, "incr", id))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		om, ok := r.Operator("totals")
		if !ok {
			t.Fatalf("checkpoint %d has no keyed state of totals", id)
		}
		chained := om.Subtasks[0].Chains != nil
		if i == 0 && chained {
			t.Fatalf("the first checkpoint %d is incremental", id)
		}
		if i > 0 && i < len(ids)-1 && !chained {
			t.Fatalf("checkpoint %d is not incremental", id)
		}
		if !chained {
			continue
		}
		var full int64 // the checkpoint's state as a full one writes it
		for sub := range om.Parallelism {
			rs, err := r.Restore("totals", sub, om.Parallelism, om.MaxParallelism)
			if err != nil {
				t.Fatal(err)
			}
			for kg, b := range rs.KeyGroups {
				if ds := rs.Deltas[kg]; len(ds) > 0 {
					if b, err = runtime.MergeKeyGroupChain(b, ds); err != nil {
						t.Fatal(err)
					}
				}
				full += int64(len(b))
			}
			for kg, ds := range rs.Deltas {
				if _, ok := rs.KeyGroups[kg]; !ok { // a key group that started empty
					b, err := runtime.MergeKeyGroupChain(nil, ds)
					if err != nil {
						t.Fatal(err)
					}
					full += int64(len(b))
				}
			}
		}
		if om.Size() >= full {
			t.Errorf("checkpoint %d wrote %d bytes of keyed state, a full one %d", id, om.Size(), full)
		}
		wrote += om.Size()
		whole += full
	}
	if wrote*2 > whole {
		t.Fatalf("the incremental checkpoints wrote %d bytes of keyed state, full ones would have written %d", wrote, whole)
	}
	t.Logf("%d incremental checkpoints wrote %d bytes of keyed state, full ones %d (%.0f %%)", len(ids)-2, wrote, whole, 100*float64(wrote)/float64(whole))
}

// TestCrashIncremental: SIGKILLs after checkpoints completed and while
// one is being written, each resumed with --from latest from incremental
// checkpoints, the last resume rescaled from parallelism 2 to 3: the
// committed running totals are the uninterrupted run's, record for
// record.
func TestCrashIncremental(t *testing.T) {
	bin := buildHost(t)
	ref := newIncrJob(t, bin, 2, 2)
	ref.runToEnd()
	reference := ref.committed()
	if len(reference) != 24000 {
		t.Fatalf("the uninterrupted run committed %d records, want 24000", len(reference))
	}
	job := newIncrJob(t, bin, 2, 2)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	killed, chained := 0, 0
	for killed < 6 {
		at := killAfterCheckpoint
		if killed%3 == 2 {
			at = killDuringWrite
		}
		if finished, _ := job.crash(rng, at); finished {
			break
		}
		killed++
		if r, _, err := checkpoint.Latest(filepath.Join(job.dir, "ckpt", "incr")); err == nil {
			if om, ok := r.Operator("totals"); ok && om.Subtasks[0].Chains != nil {
				chained++
			}
		}
	}
	if killed < 6 {
		t.Fatalf("the job finished after %d kills, want 6: make it longer", killed)
	}
	if chained == 0 {
		t.Fatal("no kill left an incremental checkpoint to restore from")
	}
	// the last kill once this run completed an incremental checkpoint,
	// which the rescaled run then restores from
	if !killWhenIncremental(job) {
		t.Fatal("the job finished before it completed an incremental checkpoint")
	}
	chained++
	writeFile(t, filepath.Join(job.dir, "incr.yaml"), fmt.Sprintf(incrPipeline, 3, 2)) // rescaled 2 -> 3
	job.runToEnd()
	if got := job.committed(); !slices.Equal(got, reference) {
		t.Fatalf("committed output differs from the uninterrupted run: %s", diffLines(reference, got))
	}
	t.Logf("%d kills, %d of them with an incremental checkpoint to restore from", killed+1, chained)
}

// killWhenIncremental starts the job and kills it with SIGKILL once the
// newest complete checkpoint is one this run wrote incrementally; false if
// the job ended first.
func killWhenIncremental(j *crashJob) bool {
	j.t.Helper()
	jobDir := filepath.Join(j.dir, "ckpt", j.name)
	var before checkpoint.ID
	if r, _, err := checkpoint.Latest(jobDir); err == nil {
		before = r.Meta.ID
	}
	cmd, stderr := j.start()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			if err != nil {
				j.t.Fatalf("the job failed: %v\n%s", err, stderr)
			}
			return false
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			j.t.Fatalf("no incremental checkpoint in 30 s\n%s", stderr)
		}
		r, err := checkpoint.Open(newestComplete(jobDir))
		if err != nil || r.Meta.ID <= before {
			continue
		}
		if om, ok := r.Operator("totals"); ok && om.Subtasks[0].Chains != nil {
			break
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	return true
}

// newestComplete is the newest chk-<id> folder of jobDir with a _metadata
// ("" when none).
func newestComplete(jobDir string) string {
	ids, _ := filepath.Glob(filepath.Join(jobDir, "chk-*", checkpoint.MetadataFile))
	best, bestID := "", int64(-1)
	for _, m := range ids {
		if id := chkID(filepath.Dir(m)); id > bestID {
			best, bestID = filepath.Dir(m), id
		}
	}
	return best
}
