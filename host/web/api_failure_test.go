package web

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/server"
)

// poisonWasm compiles host/plugin's poison fixture: a map that traps on a
// record holding the word "trap".
func poisonWasm(t *testing.T) []byte {
	t.Helper()
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatalf("wat2wasm is missing: install wabt (make tools, or apt-get install wabt)")
	}
	out := filepath.Join(t.TempDir(), "poison.wasm")
	if b, err := exec.Command(wat2wasm, "../plugin/testdata/poison.wat", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, b)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestFailingPluginFailsItsJobOnly(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	a.ok(tokenA, "POST", "/v1/plugins?name=poison", poisonWasm(t), http.StatusCreated, nil)
	neighbour := a.submit(tokenB, plainJob(1))
	start := time.Now()
	bad := a.submit(tokenA, `version: 1
name: poisoned
plugins:
  poison: { path: poison }
operators:
  - id: src
    source: { type: elements, values: [{n: 1}, {cmd: trap}, {n: 3}] }
  - id: p
    map: poison
  - id: out
    sink: { type: collect }
`)
	end := a.wait(bad.ID)
	if end.State != server.Failed || !strings.Contains(end.Error, `plugin "poison"`) || !strings.Contains(end.Error, "wasm trap") {
		t.Fatalf("poisoned job: %s, error %q", end.State, end.Error)
	}
	// the job list tells what was read from what got through
	if end.RecordsDone != 3 || end.RecordsAll != 3 || end.RecordsSunk >= 3 {
		t.Errorf("poisoned job read %d of %d, its sink received %d", end.RecordsDone, end.RecordsAll, end.RecordsSunk)
	}
	var exc server.Exceptions
	a.ok(tokenA, "GET", "/v1/jobs/"+bad.ID+"/exceptions", nil, 200, &exc)
	if len(exc.Exceptions) != 1 {
		t.Fatalf("exceptions: %+v", exc.Exceptions)
	}
	e := exc.Exceptions[0]
	if e.Operator != "p" || e.Subtask != 0 || e.Plugin != "poison" || e.Kind != "trap" || !e.Root ||
		e.Time.Before(start) || !strings.Contains(e.Message, "sluice_process") {
		t.Errorf("exception: %+v", e)
	}
	var m server.JobMetrics
	a.ok(tokenA, "GET", "/v1/jobs/"+bad.ID+"/metrics", nil, 200, &m)
	if len(m.Plugins) != 1 || m.Plugins[0].Errors["trap"] != 1 || m.Plugins[0].Restarts != 1 {
		t.Errorf("plugin metrics: %+v", m.Plugins)
	}
	// the server and the other tenant's job go on
	var st server.JobStatus
	a.ok(tokenB, "GET", "/v1/jobs/"+neighbour.ID, nil, 200, &st)
	if st.State != server.Running {
		t.Errorf("the neighbour's job is %s", st.State)
	}
	ok := a.submit(tokenA, `version: 1
name: after
operators:
  - id: src
    source: { type: elements, values: [{n: 1}] }
  - id: out
    sink: { type: collect }
`)
	if end := a.wait(ok.ID); end.State != server.Finished {
		t.Errorf("a job after the failure: %s %s", end.State, end.Error)
	}
	var usage struct{ Usage []server.Usage }
	a.ok(tokenA, "GET", "/v1/whoami", nil, 200, &usage)
	if u := usage.Usage[0]; u.JobsFailed != 1 || u.JobsFinished != 1 || u.Slots != 0 || u.MemoryPages != 0 {
		t.Errorf("usage after the jobs: %+v", u)
	}
}

// TestCancelInterruptsAPluginCall: a cancel stops a plugin call in
// progress: the calls run under the job's context (they ran under the
// server's, and a cancel waited out each call's call-timeout, here 10
// minutes).
func TestCancelInterruptsAPluginCall(t *testing.T) {
	hs, ss := testSettings(t)
	for i := range ss.Tenants {
		ss.Tenants[i].CallTimeout = 10 * time.Minute
	}
	a := startAPI(t, hs, ss, nil)
	a.ok(tokenA, "POST", "/v1/plugins?name=poison", poisonWasm(t), http.StatusCreated, nil)
	j := a.submit(tokenA, `version: 1
name: spinning
plugins:
  poison: { path: poison }
operators:
  - id: src
    source: { type: elements, values: [{n: 1}, {cmd: spin}] }
  - id: p
    map: poison
  - id: out
    sink: { type: collect }
`)
	// the job says the spinning record reached the map (an operator
	// counts a batch in as it hands it to the plugin's call): a cancel
	// before that stopped the source and passed with no call to stop
	waitFor(t, "the map to take the spinning record", func() bool {
		var m server.JobMetrics
		a.ok(tokenA, "GET", "/v1/jobs/"+j.ID+"/metrics", nil, 200, &m)
		for _, op := range m.Operators {
			if op.ID == "p" {
				return op.RecordsIn == 2
			}
		}
		return false
	})
	a.ok(tokenA, "POST", "/v1/jobs/"+j.ID+"/cancel", nil, 200, nil)
	end := a.wait(j.ID)
	if end.State != server.Canceled {
		t.Fatalf("state %s, error %q", end.State, end.Error)
	}
	// the call was under way, and the cancel ended it
	var m server.JobMetrics
	a.ok(tokenA, "GET", "/v1/jobs/"+j.ID+"/metrics", nil, 200, &m)
	if len(m.Plugins) != 1 || m.Plugins[0].Calls["process"] != 1 || m.Plugins[0].Errors["canceled"] != 1 {
		t.Errorf("plugin calls: %+v, want the process call the cancel interrupted", m.Plugins)
	}
}

// TestRunningJobsQuotaHoldsUnderParallelSubmits: jobs count against the
// running-jobs quota from admission, so submits compiling their plugins at
// the same time cannot all pass (8 parallel submits against a quota of 2
// all started).
func TestRunningJobsQuotaHoldsUnderParallelSubmits(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	a.ok(tokenA, "POST", "/v1/plugins?name=v", validWasm(t), http.StatusCreated, nil)
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = a.do(tokenA, "POST", "/v1/jobs", []byte(liveJob("v", 1))).code
		}()
	}
	wg.Wait()
	created := 0
	for _, c := range codes {
		if c == http.StatusCreated {
			created++
		} else if c != http.StatusForbidden {
			t.Errorf("a submit answered %d", c)
		}
	}
	if created != 2 {
		t.Errorf("%d jobs started against a running-jobs quota of 2 (answers %v)", created, codes)
	}
}

// TestSkippedRecordsAreCountedAndListed: under on-error: skip the records
// a plugin failed on are in the job's exceptions and its plugin error
// counts (they were invisible: exceptions [], errors {}).
func TestSkippedRecordsAreCountedAndListed(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	a.ok(tokenA, "POST", "/v1/plugins?name=poison", poisonWasm(t), http.StatusCreated, nil)
	j := a.submit(tokenA, `version: 1
name: skipping
plugins:
  poison: { path: poison }
operators:
  - id: src
    source: { type: elements, values: [{n: 1}, {cmd: trap}, {n: 3}, {cmd: fail}, {n: 5}] }
  - id: p
    map: poison
    on-error: skip
  - id: out
    sink: { type: collect }
`)
	if end := a.wait(j.ID); end.State != server.Finished {
		t.Fatalf("state %s, error %q", end.State, end.Error)
	}
	var exc server.Exceptions
	a.ok(tokenA, "GET", "/v1/jobs/"+j.ID+"/exceptions", nil, 200, &exc)
	kinds := []string{}
	for _, e := range exc.Exceptions {
		if e.Root || e.Operator != "p" {
			t.Errorf("exception %+v", e)
		}
		kinds = append(kinds, e.Kind)
	}
	if strings.Join(kinds, ",") != "trap,status" {
		t.Errorf("exception kinds %v, want trap,status", kinds)
	}
	var m server.JobMetrics
	a.ok(tokenA, "GET", "/v1/jobs/"+j.ID+"/metrics", nil, 200, &m)
	if len(m.Plugins) != 1 || m.Plugins[0].Errors["trap"] != 1 || m.Plugins[0].Errors["status"] != 1 || m.Plugins[0].Restarts != 1 {
		t.Errorf("plugin metrics: %+v", m.Plugins)
	}
}
