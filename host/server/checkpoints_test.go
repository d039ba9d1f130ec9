package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ckptJob is an unbounded streaming job that checkpoints every 20ms,
// with extra lines under checkpointing:.
func ckptJob(extra string) string {
	return "version: 1\nname: ticks\nmode: streaming\n" +
		"checkpointing:\n  interval: 20ms\n" + extra +
		"operators:\n" +
		"  - { id: src, source: { type: generator, preset: sequence, rate: 2000 } }\n" +
		"  - { id: out, sink: { type: collect } }\n"
}

// waitCheckpoints polls the job's statistics until ok says they are what
// the test waits for (the test's deadline bounds it).
func waitCheckpoints(t *testing.T, s *Server, id string, ok func(Checkpoints) bool) Checkpoints {
	t.Helper()
	for {
		c, err := s.JobCheckpoints(tenantA, id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(c) {
			return c
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("gave up waiting; last statistics %+v", c)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func ckptConfig(t *testing.T) (Config, string) {
	cfg := testConfig(t)
	root := t.TempDir()
	cfg.Host.CheckpointStorage = root
	return cfg, root
}

func TestTenantJobCheckpointsIntoItsFolder(t *testing.T) {
	cfg, root := ckptConfig(t)
	s := newTestServer(t, cfg)
	st, err := s.Submit(t.Context(), tenantA, []byte(ckptJob("  storage: mine\n")))
	if err != nil {
		t.Fatal(err)
	}
	c := waitCheckpoints(t, s, st.ID, func(c Checkpoints) bool { return c.Counts.Completed >= 2 })
	if !c.Checkpointing || c.Latest == nil || c.Latest.Status != "COMPLETED" || c.Latest.Kind != "checkpoint" {
		t.Fatalf("statistics %+v", c)
	}
	if len(c.Latest.Tasks) == 0 || c.Latest.Acknowledged != c.Latest.Subtasks {
		t.Fatalf("latest %+v: want every subtask acknowledged", *c.Latest)
	}
	meta := filepath.Join(c.Latest.Path, "_metadata")
	if want := filepath.Join(root, "a", "mine", st.ID) + string(filepath.Separator); !strings.HasPrefix(meta, want) {
		t.Fatalf("checkpoint at %s, want under %s", meta, want)
	}
	if _, err := os.Stat(meta); err != nil {
		t.Fatal(err)
	}

	// stop-with-savepoint: the job ends FINISHED, the savepoint in the
	// tenant's savepoint folder
	sp, err := s.TriggerSavepoint(t.Context(), tenantA, st.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if end := waitEnded(t, s, tenantA, st.ID); end.State != Finished {
		t.Fatalf("after stop-with-savepoint: state %s, error %q", end.State, end.Error)
	}
	c, err = s.JobCheckpoints(tenantA, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got *CheckpointInfo
	for i := range c.History {
		if c.History[i].ID == sp.ID {
			got = &c.History[i]
		}
	}
	if got == nil || got.Kind != "savepoint" || got.Status != "COMPLETED" || c.Latest == nil || c.Latest.ID != sp.ID {
		t.Fatalf("savepoint %d: statistics %+v", sp.ID, c)
	}
	if dir := filepath.Join(root, "a", "savepoints"); filepath.Dir(got.Path) != dir {
		t.Fatalf("savepoint at %s, want in %s", got.Path, dir)
	}
	if _, err := os.Stat(filepath.Join(got.Path, "_metadata")); err != nil {
		t.Fatal(err)
	}
	// the ended job refuses another
	if _, err := s.TriggerSavepoint(t.Context(), tenantA, st.ID, false); CodeOf(err) != Conflict {
		t.Fatalf("savepoint of an ended job: %v, want Conflict", err)
	}
}

func TestTenantStorageStaysInItsFolder(t *testing.T) {
	cfg, _ := ckptConfig(t)
	s := newTestServer(t, cfg)
	for _, storage := range []string{"/tmp/elsewhere", "../b", "x/../../b"} {
		_, err := s.Submit(t.Context(), tenantA, []byte(ckptJob("  storage: "+storage+"\n")))
		if CodeOf(err) != Invalid || !strings.Contains(err.Error(), "outside the tenant's checkpoint folder") {
			t.Errorf("storage %s: %v, want Invalid: outside the tenant's checkpoint folder", storage, err)
		}
	}
}

func TestCheckpointingNeedsTheServersStorage(t *testing.T) {
	s := newTestServer(t, testConfig(t))
	_, err := s.Submit(t.Context(), tenantA, []byte(ckptJob("")))
	if CodeOf(err) != Invalid || !strings.Contains(err.Error(), "checkpoint-storage") {
		t.Fatalf("%v, want Invalid naming checkpoint-storage", err)
	}
}

func TestSavepointNeedsCheckpointing(t *testing.T) {
	cfg, _ := ckptConfig(t)
	s := newTestServer(t, cfg)
	job := "version: 1\nname: plain\nmode: streaming\noperators:\n" +
		"  - { id: src, source: { type: generator, preset: sequence, rate: 100 } }\n" +
		"  - { id: out, sink: { type: collect } }\n"
	st, err := s.Submit(t.Context(), tenantA, []byte(job))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.TriggerSavepoint(t.Context(), tenantA, st.ID, false)
	if CodeOf(err) != Conflict || !strings.Contains(err.Error(), "takes no checkpoints") {
		t.Fatalf("%v, want Conflict: takes no checkpoints", err)
	}
	c, err := s.JobCheckpoints(tenantA, st.ID)
	if err != nil || c.Checkpointing || c.Counts != (CheckpointCounts{}) {
		t.Fatalf("statistics %+v, %v", c, err)
	}
	if _, err := s.Cancel(tenantA, st.ID); err != nil {
		t.Fatal(err)
	}
}

// TestJobsOfOneNameKeepApart: two running jobs of a tenant with one name
// checkpoint into folders of their own (their ids, as Flink's), so that
// neither's retain removes the other's checkpoints.
func TestJobsOfOneNameKeepApart(t *testing.T) {
	cfg, root := ckptConfig(t)
	s := newTestServer(t, cfg)
	var ids []string
	for range 2 {
		st, err := s.Submit(t.Context(), tenantA, []byte(ckptJob("")))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID)
	}
	for _, id := range ids {
		c := waitCheckpoints(t, s, id, func(c Checkpoints) bool { return c.Counts.Completed >= 3 })
		if want := filepath.Join(root, "a", id); filepath.Dir(c.Latest.Path) != want {
			t.Fatalf("job %s checkpoints at %s, want in %s", id, c.Latest.Path, want)
		}
		if c.Counts.Failed != 0 {
			t.Fatalf("job %s: %d failed checkpoints: %+v", id, c.Counts.Failed, c.History)
		}
	}
	for _, id := range ids {
		if _, err := s.Cancel(tenantA, id); err != nil {
			t.Fatal(err)
		}
	}
}
