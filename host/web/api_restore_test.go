package web

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/server"
)

// seqJob is a checkpointed job over 20000 sequence numbers at 2000 a
// second: long enough to be stopped with a savepoint midway.
const seqJob = "version: 1\nname: seq\nmode: streaming\nparallelism: 1\ncheckpointing: { interval: 20ms }\noperators:\n" +
	"  - { id: src, source: { type: generator, preset: sequence, count: 20000, rate: 2000 } }\n" +
	"  - { id: out, sink: { type: collect } }\n"

// TestSubmitFromASavepoint: a job stopped with a savepoint through the
// API, and the same pipeline submitted with ?from= that savepoint: the
// second job produces exactly the records the first had not, and its
// status names the savepoint. A savepoint outside the tenant's folder, a
// missing one, a job that does not checkpoint and a bad flag are refused.
func TestSubmitFromASavepoint(t *testing.T) {
	a, root := startCkptAPI(t)
	first := a.submit(tokenA, seqJob)
	waitFor(t, "a completed checkpoint", func() bool { return a.checkpoints(first.ID).Counts.Completed >= 1 })
	var sp server.Savepoint
	a.ok(tokenA, "POST", "/v1/jobs/"+first.ID+"/savepoints", []byte(`{"stop": true}`), http.StatusAccepted, &sp)
	end := a.wait(first.ID)
	info := find(a.checkpoints(first.ID), sp.ID)
	if end.State != server.Finished || info == nil || info.Status != "COMPLETED" {
		t.Fatalf("stop-with-savepoint: %s %q, savepoint %+v", end.State, end.Error, info)
	}
	if end.RecordsDone <= 0 || end.RecordsDone >= 20000 {
		t.Fatalf("the first job produced %d records before its savepoint, want some of the 20000", end.RecordsDone)
	}
	rel, err := filepath.Rel(filepath.Join(root, "a"), info.Path)
	if err != nil {
		t.Fatal(err)
	}

	var second server.JobStatus
	a.ok(tokenA, "POST", "/v1/jobs?from="+url.QueryEscape(rel), []byte(seqJob), http.StatusCreated, &second)
	if second.RestoredFrom != info.Path {
		t.Fatalf("restored_from %q, want %q", second.RestoredFrom, info.Path)
	}
	if got := a.wait(second.ID); got.State != server.Finished || got.RecordsDone != 20000-end.RecordsDone {
		t.Fatalf("the restored job: %s %q, produced %d, want the %d the first had not", got.State, got.Error, got.RecordsDone, 20000-end.RecordsDone)
	}
	if c := a.checkpoints(second.ID); c.Restored != sp.ID && c.Restored != 0 {
		t.Errorf("restored %d", c.Restored)
	}

	other := filepath.Join(root, "b")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query, job, want string
	}{
		{"from=" + url.QueryEscape(other), seqJob, "outside the tenant's checkpoint folder"},
		{"from=" + url.QueryEscape("../b"), seqJob, "outside the tenant's checkpoint folder"},
		{"from=savepoints/nowhere", seqJob, "nowhere"},
		{"from=" + url.QueryEscape(rel), strings.Replace(seqJob, "checkpointing: { interval: 20ms }\n", "", 1), "must checkpoint"},
		{"from=" + url.QueryEscape(rel) + "&allow-non-restored-state=maybe", seqJob, "true or false"},
		{"allow-non-restored-state=true", seqJob, "needs from"},
	} {
		r := a.do(tokenA, "POST", "/v1/jobs?"+c.query, []byte(c.job))
		if r.code != http.StatusBadRequest || !strings.Contains(r.errorJSON(t).Error, c.want) {
			t.Errorf("?%s: status %d, want 400 with %q: %s", c.query, r.code, c.want, r)
		}
	}
	// a pipeline whose operator is renamed has state nobody takes
	renamed := strings.Replace(seqJob, "id: src", "id: numbers", 1)
	if r := a.do(tokenA, "POST", "/v1/jobs?from="+url.QueryEscape(rel), []byte(renamed)); r.code != http.StatusBadRequest || !strings.Contains(r.errorJSON(t).Error, `"src"`) ||
		!strings.Contains(r.errorJSON(t).Error, "&allow-non-restored-state=true") || strings.Contains(r.errorJSON(t).Error, root) {
		t.Errorf("state of a renamed operator: status %d: %s", r.code, r)
	}
	st := server.JobStatus{}
	a.ok(tokenA, "POST", "/v1/jobs?allow-non-restored-state=true&from="+url.QueryEscape(rel), []byte(renamed), http.StatusCreated, &st)
	if got := a.wait(st.ID); got.State != server.Finished || got.RecordsDone != 20000 {
		t.Errorf("with allow-non-restored-state the renamed source starts afresh: %s, %d records", got.State, got.RecordsDone)
	}
}

// TestRestartsInTheExceptionHistory: a plugin whose second snapshot traps
// makes the job master restart the job once; the job finishes, and its
// exception history holds that failure, marked restarted, naming the
// plugin, the operator and the subtask, and no root cause.
func TestRestartsInTheExceptionHistory(t *testing.T) {
	wasm, err := os.ReadFile("../../plugins/wat/trap-snapshot.wasm")
	if err != nil {
		t.Fatalf("%v: run make plugins (plugins-wat)", err)
	}
	a, _ := startCkptAPI(t)
	a.ok(tokenA, "POST", "/v1/plugins?name=trap", wasm, http.StatusCreated, nil)
	st := a.submit(tokenA, `version: 1
name: trapping
mode: streaming
parallelism: 1
checkpointing: { interval: 50ms }
restart-strategy: { type: fixed-delay, attempts: 2, delay: 10ms }
plugins:
  trap: { path: trap }
operators:
  - { id: src, source: { type: generator, preset: sequence, count: 2000, rate: 2000 } }
  - { id: snap, map: trap }
  - { id: out, sink: { type: collect } }
`)
	if end := a.wait(st.ID); end.State != server.Finished {
		t.Fatalf("the job: %s %q", end.State, end.Error)
	}
	var ex server.Exceptions
	a.ok(tokenA, "GET", "/v1/jobs/"+st.ID+"/exceptions", nil, http.StatusOK, &ex)
	var restarts []server.Exception
	for _, e := range ex.Exceptions {
		if e.Root {
			t.Errorf("a root cause in a finished job: %+v", e)
		}
		if e.Restarted {
			restarts = append(restarts, e)
		}
	}
	if len(restarts) != 1 {
		t.Fatalf("%d restarts in the history, want 1: %+v", len(restarts), ex)
	}
	e := restarts[0]
	for _, want := range []string{`plugin "trap" (operator snap, subtask 1/1)`, "sluice_snapshot: wasm trap: unreachable", "declined"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("the restart's message lacks %q: %q", want, e.Message)
		}
	}
	if e.Time.IsZero() || e.Plugin != "trap" || e.Operator != "snap" || e.Subtask != 0 {
		t.Errorf("want a time, plugin trap, operator snap, subtask 0: %+v", e)
	}
}
