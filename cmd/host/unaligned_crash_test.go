package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
)

// The unaligned crash test: the keyed job of the crash tests with a slow
// map after the reduce (plugins/wat/slow-map.wat), so the reduce's input
// channels are back-pressured and full of queued data, checkpointed every
// 100 ms with unaligned: true. It is killed with SIGKILL after random
// checkpoints and while one is being written, resumed each time with
// --from latest, and what the file sink committed must be exactly the
// uninterrupted run's. The checkpoints it resumes from must hold in-flight
// data (channel state), or the test proves nothing about it.

const unalignedPipeline = `version: 1
name: unaligned
parallelism: 2
checkpointing:
  interval: 100ms
  unaligned: true
  storage: ckpt
  retain: 2
restart-strategy: none
plugins:
  sum: { path: reduce-sum.wasm }
  slow: { path: slow-map.wasm }
operators:
  - id: txns
    source: { type: generator, preset: transactions, count: %d, seed: 3, accounts: 40 }
    parallelism: 1
  - id: totals
    key-by: accountId
    reduce: sum
  - id: slow
    map: slow
  - id: out
    sink: { type: file, path: out/totals.jsonl }
`

func newUnalignedJob(t *testing.T, bin string, count int) *crashJob {
	t.Helper()
	dir := t.TempDir()
	for _, w := range []string{"reduce-sum/reduce-sum.wasm", "wat/slow-map.wasm"} {
		b, err := os.ReadFile(filepath.Join("../../plugins", w))
		if err != nil {
			t.Fatalf("%v: run make plugins (plugins-wat for the wat/ test plugins)", err)
		}
		writeFile(t, filepath.Join(dir, filepath.Base(w)), string(b))
	}
	writeFile(t, filepath.Join(dir, "unaligned.yaml"), fmt.Sprintf(unalignedPipeline, count))
	return &crashJob{t: t, bin: bin, dir: dir, name: "unaligned"}
}

// inFlight is the number of records the channel state of the job's latest
// completed checkpoint holds.
func (j *crashJob) inFlight() int {
	j.t.Helper()
	r, _, err := checkpoint.Latest(checkpoint.JobDir(filepath.Join(j.dir, "ckpt"), j.name))
	if err != nil || r == nil {
		return 0
	}
	om, ok := r.Operator(checkpoint.ChannelStateID("totals"))
	if !ok {
		j.t.Fatalf("%s has no channel state entry for totals", r.Path)
	}
	n := 0
	for i := 0; i < om.Parallelism; i++ {
		bs, err := r.ChannelState("totals", i, om.Parallelism, om.MaxParallelism)
		if err != nil {
			j.t.Fatal(err)
		}
		for _, b := range bs {
			n += b.Count
		}
	}
	return n
}

// TestCrashUnaligned: 12 SIGKILLs of a back-pressured job with unaligned
// checkpoints, some while a checkpoint is being written; the committed
// output is the uninterrupted run's, record for record, and the
// checkpoints resumed from held in-flight records.
func TestCrashUnaligned(t *testing.T) {
	const count, kills = 300000, 12
	bin := buildHost(t)
	ref := newUnalignedJob(t, bin, count)
	ref.runToEnd()
	reference := ref.committed()
	if len(reference) != count {
		t.Fatalf("the uninterrupted run committed %d records, want %d", len(reference), count)
	}

	job := newUnalignedJob(t, bin, count)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	killed, midWrites, persisted, withData := 0, 0, 0, 0
	for killed < kills {
		at := killAfterCheckpoint
		if killed%3 == 2 {
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
		if n := job.inFlight(); n > 0 {
			persisted += n
			withData++
		}
	}
	t.Logf("%d kills, %d with a checkpoint being written; %d of the checkpoints resumed from held in-flight data, %d records in all", killed, midWrites, withData, persisted)
	if killed < kills {
		t.Fatalf("the job finished after %d kills, want %d: make it longer", killed, kills)
	}
	if withData == 0 {
		t.Fatal("no checkpoint resumed from held in-flight data: the back-pressure did not build up")
	}
	job.runToEnd()
	if got := job.committed(); !slices.Equal(got, reference) {
		t.Fatalf("committed output differs from the uninterrupted run: %s", diffLines(reference, got))
	}
}
