package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
)

// ckptPipeline writes a checkpointed pipeline into dir: a file source and
// a file sink, with checkpointing keys extra.
func ckptPipeline(t *testing.T, dir, extra string) string {
	t.Helper()
	writeFile(t, filepath.Join(dir, "in.jsonl"), "{\"n\":1}\n")
	file := filepath.Join(dir, "job.yaml")
	writeFile(t, file, `version: 1
name: job
`+extra+`operators:
  - id: nums
    source: {type: file, path: in.jsonl}
  - id: out
    sink: {type: file, path: out.jsonl}
`)
	return file
}

// savedCheckpoint writes a completed checkpoint of operators ops into
// storage/job/chk-1 and returns its folder.
func savedCheckpoint(t *testing.T, storage string, ops ...string) string {
	t.Helper()
	w, err := checkpoint.CreateCheckpoint(storage, "job", 1)
	if err != nil {
		t.Fatal(err)
	}
	var files []checkpoint.SubtaskFile
	for _, op := range ops {
		f, err := w.Write(checkpoint.SubtaskState{Operator: op, Parallelism: 1, MaxParallelism: 128, Union: [][]byte{[]byte("position")}})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := w.Publish(time.Now(), files); err != nil {
		t.Fatal(err)
	}
	return w.Dir()
}

// TestRunFromRefusesWhatCannotBeRestored: --from of a missing folder, of a
// corrupted checkpoint, of one with state the pipeline cannot take, and
// --from latest with none, each exit 1 with what and where.
func TestRunFromRefusesWhatCannotBeRestored(t *testing.T) {
	dir := t.TempDir()
	storage := filepath.Join(dir, "ckpt")
	// restart-strategy none: a restore that fails (the state below is no
	// file source's) ends the run rather than restarting it
	file := ckptPipeline(t, dir, "checkpointing: {interval: 1s, storage: ckpt}\nrestart-strategy: none\n")

	code, _, errs := runHost(t, "run", file, "--from", filepath.Join(dir, "nowhere"))
	if code != 1 || !strings.Contains(errs, "--from "+filepath.Join(dir, "nowhere")) || !strings.Contains(errs, "no such file or directory") {
		t.Fatalf("a missing folder: exit %d\n%s", code, errs)
	}
	code, _, errs = runHost(t, "run", file, "--from", "latest")
	if code != 1 || !strings.Contains(errs, "--from latest") || !strings.Contains(errs, "no completed checkpoint: "+filepath.Join(storage, "job")+" does not exist") {
		t.Fatalf("--from latest with none: exit %d\n%s", code, errs)
	}

	chk := savedCheckpoint(t, storage, "nums", "gone")
	code, _, errs = runHost(t, "run", file, "--from", chk)
	if code != 1 || !strings.Contains(errs, `"gone"`) || !strings.Contains(errs, "--allow-non-restored-state") {
		t.Fatalf("state of an operator the pipeline lacks: exit %d\n%s", code, errs)
	}
	_, _, errs = runHost(t, "run", file, "--from", chk, "--allow-non-restored-state")
	if !strings.Contains(errs, `dropping the state of operator "gone"`) || strings.Contains(errs, "restore with --allow-non-restored-state") {
		t.Fatalf("--allow-non-restored-state:\n%s", errs)
	}

	state := filepath.Join(chk, "nums-0.state")
	b, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	writeFile(t, state, string(b))
	code, _, errs = runHost(t, "run", file, "--from", chk)
	if code != 1 || !strings.Contains(errs, "nums-0.state") {
		t.Fatalf("a corrupted state file: exit %d, want it named\n%s", code, errs)
	}
	code, _, errs = runHost(t, "run", file, "--from", "latest")
	if code != 1 || !strings.Contains(errs, "skipping") || !strings.Contains(errs, "nums-0.state") {
		t.Fatalf("--from latest past a corrupted one: exit %d\n%s", code, errs)
	}
	writeFile(t, filepath.Join(chk, checkpoint.MetadataFile), "not metadata")
	code, _, errs = runHost(t, "run", file, "--from", chk)
	if code != 1 || !strings.Contains(errs, filepath.Join(chk, checkpoint.MetadataFile)) {
		t.Fatalf("a corrupted _metadata: exit %d, want it named\n%s", code, errs)
	}
}

// TestRunCheckpointFlagsAndSettings: flags that need another, and
// checkpointing without storage, are refused before the job starts.
func TestRunCheckpointFlagsAndSettings(t *testing.T) {
	dir := t.TempDir()
	file := ckptPipeline(t, dir, "")
	code, _, errs := runHost(t, "run", file, "--allow-non-restored-state")
	if code != 1 || !strings.Contains(errs, "--allow-non-restored-state needs --from") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	code, _, errs = runHost(t, "run", file, "--checkpoint-interval", "1s")
	if code != 1 || !strings.Contains(errs, "storage is not set") {
		t.Fatalf("no storage: exit %d\n%s", code, errs)
	}
	code, _, errs = runHost(t, "run", file, "--checkpoint-interval", "5ms")
	if code != 1 || !strings.Contains(errs, "checkpoint-interval") {
		t.Fatalf("a bad interval: exit %d\n%s", code, errs)
	}
	// without checkpoints the run is as before
	code, _, errs = runHost(t, "run", file, "--progress", "none")
	if code != 0 || !strings.Contains(readFileT(t, filepath.Join(dir, "out.jsonl")), `{"n":1}`) {
		t.Fatalf("a run without checkpoints: exit %d\n%s", code, errs)
	}
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPlanShowsFaultTolerance: host plan prints the checkpointing, the
// restart strategy and each connector's guarantee.
func TestPlanShowsFaultTolerance(t *testing.T) {
	dir := t.TempDir()
	file := ckptPipeline(t, dir, "checkpointing: {interval: 10s, mode: exactly-once, storage: ckpt}\n")
	code, out, errs := runHost(t, "plan", file)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, want := range []string{
		"checkpointing: every 10s, exactly-once, timeout 10m0s",
		"storage " + filepath.Join(dir, "ckpt"),
		"restart strategy: exponential-delay (initial-backoff 1s, max-backoff 1m0s, backoff-multiplier 1.5",
		"guarantee: exactly-once\n",
		"source nums (file): replays",
		"sink out (file): exactly-once: two-phase commit",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runHost(t, "plan", ckptPipeline(t, dir, ""))
	if code != 0 || !strings.Contains(out, "checkpointing: off") || !strings.Contains(out, "restart strategy: none") {
		t.Errorf("without checkpoints:\n%s", out)
	}
}

func TestCheckpointStatsUseFlinksNames(t *testing.T) {
	var b bytes.Buffer
	s := checkpoint.Stats{NumberOfCompletedCheckpoints: 3, NumberOfFailedCheckpoints: 1, LastCheckpointDuration: 12 * time.Millisecond, LastCheckpointSize: 4096}
	if err := writeCheckpointStats(&b, s, 2); err != nil {
		t.Fatal(err)
	}
	want := "checkpoints: numberOfCompletedCheckpoints 3, numberOfFailedCheckpoints 1, lastCheckpointDuration 12ms, lastCheckpointSize 4096 bytes, restarts 2\n"
	if b.String() != want {
		t.Fatalf("%q\nwant %q", b.String(), want)
	}
}
