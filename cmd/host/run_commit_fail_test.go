package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRunSinkCommitFailsOver: the file sink's commit of a completed
// checkpoint fails (the part's final name is taken by a folder). As with
// Flink's TwoPhaseCommitSinkFunction, the failure fails the job over, the
// restart restores from that checkpoint and commits its pending part
// again — once the folder is gone — and the job ends with every record
// committed once.
func TestRunSinkCommitFailsOver(t *testing.T) {
	bin := buildHost(t)
	src := fmt.Sprintf(recoverySource, 3000, 1000)
	want := rawTransactions(t, bin, src)
	j := newRecoveryJob(t, bin)
	writeFile(t, filepath.Join(j.dir, "job.yaml"), `version: 1
name: commitfail
parallelism: 1
checkpointing: {interval: 300ms, storage: ckpt}
restart-strategy: {type: fixed-delay, attempts: 5, delay: 1s}
operators:
  - id: txns
    source: `+src+`
  - id: out
    sink: {type: file, path: out/txns.jsonl}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--progress=none", "job.yaml")
	cmd.Dir = j.dir
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	out := filepath.Join(j.dir, "out")
	// block the final name of a part being written, before its commit
	var blocked string
	for blocked == "" {
		select {
		case err := <-exited:
			t.Fatalf("the job ended before a part could be blocked: %v\n%s", err, stderr.String())
		case <-time.After(time.Millisecond):
		}
		parts, _ := filepath.Glob(filepath.Join(out, ".txns-0-*.jsonl.inprogress"))
		slices.Sort(parts)
		if len(parts) == 0 {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(parts[len(parts)-1]), "."), ".inprogress")
		if err := os.Mkdir(filepath.Join(out, name), 0o755); err != nil {
			continue // committed meanwhile: try the next part
		}
		writeFile(t, filepath.Join(out, name, "x"), "x")
		blocked = filepath.Join(out, name)
	}
	// the commit fails the job; unblock it once the restart is scheduled
	for !strings.Contains(stderr.String(), "job failed; restarting") {
		select {
		case err := <-exited:
			t.Fatalf("the job ended without a failover: %v\n%s", err, stderr.String())
		case <-time.After(time.Millisecond):
		}
	}
	if err := os.RemoveAll(blocked); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("the job failed: %v\n%s", err, stderr.String())
	}
	errs := stderr.String()
	if !regexp.MustCompile(`completing checkpoint \d+: sink \\?"out\\?": committing \S*\.txns-0-\d+\.jsonl\.inprogress`).MatchString(errs) {
		t.Errorf("the failover does not say the commit of the part failed:\n%s", errs)
	}
	if m := regexp.MustCompile(`restarts (\d+)`).FindStringSubmatch(errs); m == nil || m[1] == "0" {
		t.Errorf("want a restart in the summary:\n%s", errs)
	}
	if got := unfiled(j.lines("txns")); !slices.Equal(got, unfiled(want)) {
		t.Fatalf("committed %d records, want the source's %d in order, each once", len(got), len(want))
	}
}
