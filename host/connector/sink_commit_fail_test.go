package connector

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/host/checkpoint"
)

// TestFileSinkCommitFailsThenRestoreCommits follows Flink's
// TwoPhaseCommitSinkFunction: a commit that fails in
// notifyCheckpointComplete fails the task (the error names the sink and
// the part), the checkpoint stays completed, and the restore from it
// commits the pending part again — failing again while the cause lasts,
// committing once it is gone — and removes what was written after it.
func TestFileSinkCommitFailsThenRestoreCommits(t *testing.T) {
	dir := t.TempDir()
	b := &Builtin{Root: dir, Checkpointed: true}
	s := openTxSink(t, b, "out/r.jsonl", 0, 1)
	out := filepath.Join(dir, "out")
	process(t, s, `{"a":1}`)
	st, err := s.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	process(t, s, `{"a":2}`) // after checkpoint 1: gone after the failover
	// the part's final name is taken by a folder that is not empty: the
	// rename fails
	if err := os.MkdirAll(filepath.Join(out, "r-0-0.jsonl", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = s.NotifyCheckpointComplete(1)
	wantErrContaining(t, err, `sink "out"`, "committing", filepath.Join("out", ".r-0-0.jsonl.inprogress"))
	s.Close(nil) // the failover
	restore := checkpoint.Restore{Committables: st.Committables, Union: st.Union}
	r := openTxSink(t, b, "out/r.jsonl", 0, 1)
	wantErrContaining(t, r.RestoreState(restore), "committing", ".r-0-0.jsonl.inprogress")
	r.Close(nil)
	if err := os.RemoveAll(filepath.Join(out, "r-0-0.jsonl")); err != nil {
		t.Fatal(err)
	}
	r = openTxSink(t, b, "out/r.jsonl", 0, 1)
	if err := r.RestoreState(restore); err != nil {
		t.Fatalf("the restore once the cause is gone: %v", err)
	}
	if got := listDir(t, out); !slices.Equal(got, []string{"r-0-0.jsonl"}) || readText(t, filepath.Join(out, "r-0-0.jsonl")) != "{\"a\":1}\n" {
		t.Fatalf("after the restore: %v", got)
	}
	process(t, r, `{"a":3}`)
	if err := r.Close(&collector{t: t}); err != nil {
		t.Fatal(err)
	}
	if got := listDir(t, out); !slices.Equal(got, []string{"r-0-0.jsonl", "r-0-1.jsonl"}) || readText(t, filepath.Join(out, "r-0-1.jsonl")) != "{\"a\":3}\n" {
		t.Fatalf("the output: %v", got)
	}
}
