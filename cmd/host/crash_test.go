package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// The crash tests kill a real `host run` process with SIGKILL from
// outside, at random moments and while a checkpoint is being written,
// resume it each time with --from latest, and compare what the file sink
// committed with an uninterrupted run of the same job: a keyed Wasm
// reduce (its accumulator in the host's keyed state) over a generator,
// checkpointed every 100 ms. The source runs at parallelism 1, so every
// key's records reach the reduce in one order and the running totals an
// uninterrupted run commits are one exact multiset.

const crashPipeline = `version: 1
name: crash
parallelism: 2
checkpointing:
  interval: 100ms
  mode: %s
  storage: ckpt
  retain: 2
restart-strategy: none
plugins:
  sum: { path: reduce-sum.wasm }
operators:
  - id: txns
    source: { type: generator, preset: transactions, count: 24000, rate: 6000, seed: 3, accounts: 40 }
    parallelism: 1
  - id: totals
    key-by: accountId
    reduce: sum
  - id: out
    sink: { type: file, path: out/totals.jsonl }
`

// crashJob is one job folder: the pipeline (<name>.yaml), the plugin, its
// checkpoints (ckpt/<name>/) and its output; env is added to host run's
// environment.
type crashJob struct {
	t    *testing.T
	bin  string
	dir  string
	name string
	env  []string
}

func newCrashJob(t *testing.T, bin, mode string) *crashJob {
	t.Helper()
	dir := t.TempDir()
	wasm, err := os.ReadFile("../../plugins/reduce-sum/reduce-sum.wasm")
	if err != nil {
		t.Fatalf("%v: run make plugins", err)
	}
	writeFile(t, filepath.Join(dir, "reduce-sum.wasm"), string(wasm))
	writeFile(t, filepath.Join(dir, "crash.yaml"), fmt.Sprintf(crashPipeline, mode))
	return &crashJob{t: t, bin: bin, dir: dir, name: "crash"}
}

// start runs host run, from the latest completed checkpoint when there is
// one.
func (j *crashJob) start() (*exec.Cmd, *bytes.Buffer) {
	j.t.Helper()
	args := []string{"run", "--progress=none"}
	if len(j.completed()) > 0 {
		args = append(args, "--from", "latest")
	}
	cmd := exec.Command(j.bin, append(args, j.name+".yaml")...)
	cmd.Dir = j.dir
	cmd.Env = append(os.Environ(), j.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		j.t.Fatal(err)
	}
	return cmd, &stderr
}

// checkpoints lists the job's checkpoint folders, and which of them are
// complete (their _metadata written).
func (j *crashJob) checkpoints() (all, complete []string) {
	dirs, _ := filepath.Glob(filepath.Join(j.dir, "ckpt", j.name, "chk-*"))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "_pruned")); err == nil {
			continue // removed by retain but for files a newer checkpoint references
		}
		all = append(all, d)
		if _, err := os.Stat(filepath.Join(d, "_metadata")); err == nil {
			complete = append(complete, d)
		}
	}
	return all, complete
}

func (j *crashJob) completed() []string { _, c := j.checkpoints(); return c }

// committed is every line of the sink's committed part files (not the
// hidden in-progress ones), sorted.
func (j *crashJob) committed() []string {
	j.t.Helper()
	parts, _ := filepath.Glob(filepath.Join(j.dir, "out", "totals-*.jsonl"))
	var lines []string
	for _, p := range parts {
		f, err := os.Open(p)
		if err != nil {
			j.t.Fatal(err)
		}
		s := bufio.NewScanner(f)
		for s.Scan() {
			lines = append(lines, s.Text())
		}
		f.Close()
	}
	slices.Sort(lines)
	return lines
}

// runToEnd runs the job until it finishes by itself.
func (j *crashJob) runToEnd() {
	j.t.Helper()
	cmd, stderr := j.start()
	if err := cmd.Wait(); err != nil {
		j.t.Fatalf("the resumed job failed: %v\n%s", err, stderr)
	}
}

// killPoint is when crash sends SIGKILL.
type killPoint int

const (
	// killAfterCheckpoint: a random pause (0-250 ms) after a new
	// checkpoint completed, so every run makes progress.
	killAfterCheckpoint killPoint = iota
	// killDuringWrite: as soon as a checkpoint folder exists without its
	// _metadata.
	killDuringWrite
	// killOnCompletion: as soon as a new checkpoint's _metadata exists,
	// before the job has heard that it completed, or just after (a
	// two-phase-commit sink's commit races the kill).
	killOnCompletion
)

// crash starts the job and kills it with SIGKILL at the point at. It
// reports whether the job had finished before the kill, and whether a
// checkpoint was incomplete when the process died.
func (j *crashJob) crash(rng *rand.Rand, at killPoint) (finished, midWrite bool) {
	j.t.Helper()
	old, done := j.checkpoints()
	cmd, stderr := j.start()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-exited:
			if err != nil {
				j.t.Fatalf("the job failed before it was killed: %v\n%s", err, stderr)
			}
			return true, false
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			j.t.Fatalf("no checkpoint to kill at in 30 s\n%s", stderr)
		}
		all, complete := j.checkpoints()
		if at == killDuringWrite && len(all) > len(complete) {
			break
		}
		if at == killOnCompletion && newCheckpoint(complete, done) {
			break
		}
		if at == killAfterCheckpoint && newCheckpoint(complete, done) {
			time.Sleep(time.Duration(rng.IntN(250)) * time.Millisecond)
			break
		}
		time.Sleep(200 * time.Microsecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	err := <-exited
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		return err == nil, false // it ended before the signal reached it
	}
	// a checkpoint this run began and did not finish
	all, complete := j.checkpoints()
	for _, d := range all {
		if !slices.Contains(old, d) && !slices.Contains(complete, d) {
			return false, true
		}
	}
	return false, false
}

// newCheckpoint is whether complete holds a checkpoint that before does
// not (retain keeps their number level once it is reached).
func newCheckpoint(complete, before []string) bool {
	for _, d := range complete {
		if !slices.Contains(before, d) {
			return true
		}
	}
	return false
}

func crashRun(t *testing.T, mode string, kills int) (reference, got []string, midWrites int) {
	bin := buildHost(t)
	ref := newCrashJob(t, bin, mode)
	ref.runToEnd()
	reference = ref.committed()
	if len(reference) != 24000 {
		t.Fatalf("the uninterrupted run committed %d records, want 24000", len(reference))
	}

	job := newCrashJob(t, bin, mode)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	killed := 0
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
	}
	t.Logf("%s: %d kills, %d with a checkpoint being written", mode, killed, midWrites)
	if killed < kills {
		t.Fatalf("the job finished after %d kills, want %d: make it longer", killed, kills)
	}
	job.runToEnd()
	return reference, job.committed(), midWrites
}

// TestCrashExactlyOnce: 21 SIGKILLs, a third of them while a checkpoint
// is being written; the committed output is the uninterrupted run's,
// record for record: none lost, none twice, every running total right.
func TestCrashExactlyOnce(t *testing.T) {
	reference, got, midWrites := crashRun(t, "exactly-once", 21)
	if !slices.Equal(got, reference) {
		t.Fatalf("committed output differs from the uninterrupted run: %s", diffLines(reference, got))
	}
	if midWrites < 3 {
		t.Errorf("only %d kills hit a checkpoint being written, want several", midWrites)
	}
}

// TestCrashAtLeastOnce: in at-least-once mode, kills lose nothing.
func TestCrashAtLeastOnce(t *testing.T) {
	reference, got, _ := crashRun(t, "at-least-once", 6)
	have := map[string]int{}
	for _, l := range got {
		have[l]++
	}
	var lost []string
	for _, l := range reference {
		if have[l] == 0 {
			lost = append(lost, l)
		}
		have[l]--
	}
	if len(lost) > 0 {
		t.Fatalf("%d records lost, e.g. %s", len(lost), lost[0])
	}
}

// diffLines says how two sorted multisets of lines differ.
func diffLines(want, got []string) string {
	w, g := map[string]int{}, map[string]int{}
	for _, l := range want {
		w[l]++
	}
	for _, l := range got {
		g[l]++
	}
	var missing, extra []string
	for l, n := range w {
		if g[l] < n {
			missing = append(missing, l)
		}
	}
	for l, n := range g {
		if w[l] < n {
			extra = append(extra, l)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	first := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		return s[0]
	}
	return fmt.Sprintf("%d records, want %d; %d missing (first %s), %d extra or duplicated (first %s)",
		len(got), len(want), len(missing), first(missing), len(extra), first(extra))
}
