package checkpoint

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestCoordinatorDrivesStorage runs the whole cycle the engine will run:
// the coordinator's actions performed against a checkpoint directory, tasks
// writing their state and acknowledging with the handles, a checkpoint
// that expires and is discarded, one that crashes before its metadata, and
// a restore of the latest completed one at another parallelism.
func TestCoordinatorDrivesStorage(t *testing.T) {
	storage := t.TempDir()
	jobDir := JobDir(storage, "job")
	cfg := Defaults()
	cfg.Interval = time.Second
	cfg.Timeout = 500 * time.Millisecond
	cfg.TolerableFailures = 3
	cfg.Retain = 2
	tasks := []Task{{"sum", 0}, {"sum", 1}}
	c, err := NewCoordinator(cfg, tasks, Options{})
	if err != nil {
		t.Fatal(err)
	}
	writers := map[ID]*Writer{}
	var completed, aborted []ID

	// perform does what the actions ask; tasks ack at once unless slow.
	var perform func(now time.Time, as []Action, slow bool)
	perform = func(now time.Time, as []Action, slow bool) {
		for _, a := range as {
			switch a := a.(type) {
			case Inject:
				w, err := CreateCheckpoint(storage, "job", a.ID)
				if err != nil {
					t.Fatal(err)
				}
				writers[a.ID] = w
				if slow {
					continue
				}
				for _, task := range tasks {
					st := testState("sum", true, 2, 128, task.Subtask)
					st.Union = [][]byte{[]byte{byte(a.ID)}}
					f, err := w.Write(st)
					if err != nil {
						t.Fatal(err)
					}
					perform(now, c.Ack(now, Ack{Task: task, ID: a.ID, Files: []SubtaskFile{f}}), false)
				}
			case WriteMetadata:
				if err := writers[a.ID].Publish(a.Timestamp, a.Files); err != nil {
					perform(now, c.MetadataFailed(now, a.ID, err), false)
				} else {
					perform(now, c.MetadataWritten(now, a.ID), false)
				}
			case NotifyComplete:
				completed = append(completed, a.ID)
				if _, err := Retain(jobDir, cfg.Retain, c.Pending()...); err != nil {
					t.Fatal(err)
				}
			case NotifyAbort:
				aborted = append(aborted, a.ID)
				if err := writers[a.ID].Discard(); err != nil {
					t.Fatal(err)
				}
			case FailJob:
				t.Fatalf("job failed: %v", a.Err)
			}
		}
	}
	c.Start(t0)
	perform(t0.Add(1*time.Second), c.Tick(t0.Add(1*time.Second)), false) // 1 completes
	perform(t0.Add(2*time.Second), c.Tick(t0.Add(2*time.Second)), true)  // 2 never acked
	perform(t0.Add(2500*time.Millisecond), c.Tick(t0.Add(2500*time.Millisecond)), false)
	perform(t0.Add(3*time.Second), c.Tick(t0.Add(3*time.Second)), false) // 3 completes
	perform(t0.Add(4*time.Second), c.Tick(t0.Add(4*time.Second)), false) // 4 completes, 1 goes

	if len(completed) != 3 || completed[2] != 4 || len(aborted) != 1 || aborted[0] != 2 {
		t.Fatalf("completed %v, aborted %v", completed, aborted)
	}
	for id, exists := range map[ID]bool{1: false, 2: false, 3: true, 4: true} {
		if _, err := os.Stat(CheckpointDir(storage, "job", id)); (err == nil) != exists {
			t.Errorf("chk-%d exists: %v, want %v", id, err == nil, exists)
		}
	}
	s := c.Stats()
	if s.NumberOfCompletedCheckpoints != 3 || s.NumberOfFailedCheckpoints != 1 || s.LastCheckpointSize <= 0 {
		t.Errorf("stats %+v", s)
	}

	// A crash while checkpoint 5 writes its state: no metadata.
	w, err := CreateCheckpoint(storage, "job", 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(testState("sum", true, 2, 128, 0)); err != nil {
		t.Fatal(err)
	}

	r, skipped, err := Latest(jobDir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.ID != 4 || len(skipped) != 1 || !errors.Is(skipped[0].Err, ErrNoMetadata) {
		t.Fatalf("latest %d, skipped %+v", r.Meta.ID, skipped)
	}
	next, err := NextID(jobDir)
	if err != nil || next != 6 {
		t.Fatalf("next id %d, %v", next, err)
	}
	// Restored at parallelism 3, every key group comes back once.
	n := 0
	for sub := range 3 {
		got, err := r.Restore("sum", sub, 3, 128)
		if err != nil {
			t.Fatal(err)
		}
		n += len(got.KeyGroups)
		if len(got.Union) != 2 || got.Union[0][0] != 4 {
			t.Errorf("subtask %d union %v", sub, got.Union)
		}
	}
	if n != 85 { // 128 key groups less every third one, which is empty
		t.Errorf("%d key groups restored, want 85", n)
	}
}
