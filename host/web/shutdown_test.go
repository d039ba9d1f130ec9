package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/server"
)

// shutdownAPI is a server behind a real listener, without the cleanup of
// startAPI: the test shuts it down itself.
func shutdownAPI(t *testing.T, drain time.Duration) *testAPI {
	hs, ss := testSettings(t)
	ss.DrainTimeout = drain
	srv, err := server.New(server.Config{Host: hs, Server: ss})
	if err != nil {
		t.Fatal(err)
	}
	return &testAPI{t: t, srv: srv, http: httptest.NewServer(New(srv, ss))}
}

func TestShutdownCancelsRunningJobsAndLeavesNoGoroutine(t *testing.T) {
	validWasm(t) // built before the count
	base := runtime.NumGoroutine()
	a := shutdownAPI(t, 0)
	a.ok(tokenA, "POST", "/v1/plugins?name=valid", validWasm(t), http.StatusCreated, nil)
	live := a.submit(tokenA, liveJob("valid", 2))
	other := a.submit(tokenB, plainJob(2))
	waitFor(t, "records through the live job", func() bool {
		var m server.JobMetrics
		a.ok(tokenA, "GET", "/v1/jobs/"+live.ID+"/metrics", nil, 200, &m)
		return m.RecordsDone > 0
	})
	during := runtime.NumGoroutine()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t0 := time.Now()
	if err := a.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("shutdown took %s", time.Since(t0))
	for _, id := range []string{live.ID, other.ID} {
		var st server.JobStatus
		a.ok(tokenAdmin, "GET", "/v1/jobs/"+id, nil, 200, &st)
		if st.State != server.Canceled || st.CancelCause != "the server is shutting down" {
			t.Errorf("job %s after shutdown: %s (%s)", st.Name, st.State, st.CancelCause)
		}
	}
	if r := a.do("", "GET", "/readyz", nil); r.code != http.StatusServiceUnavailable {
		t.Errorf("/readyz during shutdown: %d, want 503", r.code)
	}
	if r := a.do(tokenA, "POST", "/v1/jobs", []byte(plainJob(1))); r.code != http.StatusServiceUnavailable {
		t.Errorf("submitting during shutdown: %d, want 503", r.code)
	}
	var m server.JobMetrics
	a.ok(tokenA, "GET", "/v1/jobs/"+live.ID+"/metrics", nil, 200, &m)
	for _, pc := range m.Plugins {
		if pc.MemoryBytes != 0 {
			t.Errorf("plugin instance %s/%d still holds %d bytes", pc.Operator, pc.Subtask, pc.MemoryBytes)
		}
	}
	a.http.Close()
	t0 = time.Now()
	after := settleGoroutines(t, base)
	t.Logf("settled in %s", time.Since(t0))
	t.Logf("goroutines: %d before, %d with 2 jobs running, %d after shutdown", base, during, after)
}

func TestShutdownDrainsBoundedJobs(t *testing.T) {
	base := runtime.NumGoroutine()
	a := shutdownAPI(t, time.Hour)
	job := a.submit(tokenA, `version: 1
name: paced
operators:
  - id: txns
    source: { type: generator, preset: sequence, count: 300, rate: 1000 }
  - id: out
    sink: { type: collect }
`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	var st server.JobStatus
	a.ok(tokenA, "GET", "/v1/jobs/"+job.ID, nil, 200, &st)
	var out server.Output
	a.ok(tokenA, "GET", "/v1/jobs/"+job.ID+"/output?n=1", nil, 200, &out)
	var last struct{ N int }
	if len(out.Records) == 1 {
		_ = json.Unmarshal(out.Records[0].Value, &last)
	}
	if st.State != server.Finished || out.Total != 300 || last.N != 299 {
		t.Errorf("drained job: %s, %d records, last %+v", st.State, out.Total, out.Records)
	}
	a.http.Close()
	settleGoroutines(t, base)
}
