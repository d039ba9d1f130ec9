package web

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/server"
)

// ckptJob is an unbounded streaming job checkpointing every 20ms.
const ckptJob = "version: 1\nname: ticks\nmode: streaming\ncheckpointing: { interval: 20ms }\noperators:\n" +
	"  - { id: src, source: { type: generator, preset: sequence, rate: 2000 } }\n" +
	"  - { id: out, sink: { type: collect } }\n"

func startCkptAPI(t *testing.T) (*testAPI, string) {
	hs, ss := testSettings(t)
	hs.CheckpointStorage = t.TempDir()
	return startAPI(t, hs, ss, nil), hs.CheckpointStorage
}

func (a *testAPI) checkpoints(id string) server.Checkpoints {
	a.t.Helper()
	var c server.Checkpoints
	a.ok(tokenA, "GET", "/v1/jobs/"+id+"/checkpoints", nil, http.StatusOK, &c)
	return c
}

func find(c server.Checkpoints, id uint64) *server.CheckpointInfo {
	for i := range c.History {
		if c.History[i].ID == id {
			return &c.History[i]
		}
	}
	return nil
}

func TestSavepointsThroughTheAPI(t *testing.T) {
	a, root := startCkptAPI(t)
	st := a.submit(tokenA, ckptJob)
	waitFor(t, "a completed checkpoint", func() bool { return a.checkpoints(st.ID).Counts.Completed >= 1 })

	// another tenant sees no such job
	if r := a.do(tokenB, "GET", "/v1/jobs/"+st.ID+"/checkpoints", nil); r.code != http.StatusNotFound {
		t.Fatalf("tenant b: status %d: %s", r.code, r)
	}
	if r := a.do(tokenA, "POST", "/v1/jobs/"+st.ID+"/savepoints", []byte(`{"stop": "yes"}`)); r.code != http.StatusBadRequest {
		t.Fatalf("a bad body: status %d: %s", r.code, r)
	}

	// a savepoint; the job goes on
	var sp server.Savepoint
	a.ok(tokenA, "POST", "/v1/jobs/"+st.ID+"/savepoints", []byte(`{"stop": false}`), http.StatusAccepted, &sp)
	if sp.ID == 0 || sp.Stop || sp.Job != st.ID {
		t.Fatalf("savepoint %+v", sp)
	}
	var got *server.CheckpointInfo
	waitFor(t, "the savepoint to complete", func() bool {
		got = find(a.checkpoints(st.ID), sp.ID)
		return got != nil && got.Status != "IN_PROGRESS"
	})
	if got.Kind != "savepoint" || got.Status != "COMPLETED" || filepath.Dir(got.Path) != filepath.Join(root, "a", "savepoints") {
		t.Fatalf("savepoint %+v, want COMPLETED in %s", *got, filepath.Join(root, "a", "savepoints"))
	}
	if _, err := os.Stat(filepath.Join(got.Path, "_metadata")); err != nil {
		t.Fatal(err)
	}
	if s := a.status(st.ID); s.State != server.Running {
		t.Fatalf("after a savepoint: %s", s.State)
	}

	// stop-with-savepoint: the job ends FINISHED
	a.ok(tokenA, "POST", "/v1/jobs/"+st.ID+"/savepoints", []byte(`{"stop": true}`), http.StatusAccepted, &sp)
	if end := a.wait(st.ID); end.State != server.Finished {
		t.Fatalf("after stop-with-savepoint: %s %q", end.State, end.Error)
	}
	c := a.checkpoints(st.ID)
	if got = find(c, sp.ID); got == nil || got.Status != "COMPLETED" || c.Latest == nil || c.Latest.ID != sp.ID || c.Counts.Completed < 3 {
		t.Fatalf("after stop-with-savepoint %d: %+v", sp.ID, c)
	}
	if r := a.do(tokenA, "POST", "/v1/jobs/"+st.ID+"/savepoints", nil); r.code != http.StatusConflict {
		t.Fatalf("a savepoint of an ended job: status %d: %s", r.code, r)
	}
}

func TestSavepointOfAJobWithoutCheckpointing(t *testing.T) {
	a, _ := startCkptAPI(t)
	st := a.submit(tokenA, strings.Replace(ckptJob, "checkpointing: { interval: 20ms }\n", "", 1))
	r := a.do(tokenA, "POST", "/v1/jobs/"+st.ID+"/savepoints", []byte(`{"stop": true}`))
	if r.code != http.StatusConflict || !strings.Contains(r.errorJSON(t).Error, "takes no checkpoints") {
		t.Fatalf("status %d: %s", r.code, r)
	}
	if c := a.checkpoints(st.ID); c.Checkpointing || len(c.History) != 0 {
		t.Fatalf("checkpoints %+v", c)
	}
	a.ok(tokenA, "POST", "/v1/jobs/"+st.ID+"/cancel", nil, http.StatusOK, nil)
}

func TestStorageOutsideTheTenantsFolderRefused(t *testing.T) {
	a, root := startCkptAPI(t)
	job := strings.Replace(ckptJob, "{ interval: 20ms }", fmt.Sprintf("{ interval: 20ms, storage: %s }", root), 1)
	r := a.do(tokenA, "POST", "/v1/jobs", []byte(job))
	if r.code != http.StatusBadRequest || !strings.Contains(r.errorJSON(t).Error, "outside the tenant's checkpoint folder") {
		t.Fatalf("status %d: %s", r.code, r)
	}
}

// status is the job's status now.
func (a *testAPI) status(id string) server.JobStatus {
	a.t.Helper()
	var s server.JobStatus
	a.ok(tokenA, "GET", "/v1/jobs/"+id, nil, http.StatusOK, &s)
	return s
}

// TestCheckpointMetricsInPrometheus: a checkpointed job's statistics
// under Flink's names, with the tenant and job_id labels; a job without
// checkpointing has none.
func TestCheckpointMetricsInPrometheus(t *testing.T) {
	a, _ := startCkptAPI(t)
	st := a.submit(tokenA, ckptJob)
	plain := a.submit(tokenA, strings.Replace(ckptJob, "checkpointing: { interval: 20ms }\n", "", 1))
	waitFor(t, "two completed checkpoints", func() bool { return a.checkpoints(st.ID).Counts.Completed >= 2 })
	text := a.ok(tokenAdmin, "GET", "/metrics", nil, http.StatusOK, nil).String()
	after := a.checkpoints(st.ID)
	id := `job_id="` + st.ID + `"`
	for _, c := range []struct {
		name     string
		min, max float64
	}{
		{"sluice_job_numberOfCompletedCheckpoints", 2, float64(after.Counts.Completed)},
		{"sluice_job_numberOfFailedCheckpoints", 0, float64(after.Counts.Failed)},
		{"sluice_job_numberOfInProgressCheckpoints", 0, 1}, // max-concurrent 1
		{"sluice_job_lastCheckpointSize", 1, 1 << 30},
		{"sluice_job_lastCheckpointDuration", 0, 1 << 30},
	} {
		v, ok := series(text, c.name, id, `tenant="a"`)
		if !ok || v < c.min || v > c.max {
			t.Errorf("%s{%s}: %v (found %v), want %v to %v", c.name, id, v, ok, c.min, c.max)
		}
	}
	if _, ok := series(text, "sluice_job_numberOfCompletedCheckpoints", `job_id="`+plain.ID+`"`); ok {
		t.Errorf("a job without checkpointing has checkpoint series")
	}
	a.ok(tokenA, "POST", "/v1/jobs/"+plain.ID+"/cancel", nil, http.StatusOK, nil)
}
