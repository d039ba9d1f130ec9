package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/server"
	"github.com/sluicehq/sluice/host/settings"
)

// TestLoad: tenants submit jobs and poll their metrics at once, over
// loopback, within their quotas. No request may fail, every job must end
// FINISHED with all its output, and no goroutine may be left once the
// server is shut down.
func TestLoad(t *testing.T) {
	const tenants, submitters, jobsEach = 4, 2, 3 // 24 jobs, 2 running per tenant at most
	validWasm(t)
	base := runtime.NumGoroutine()
	hs, ss := testSettings(t)
	ss.Tenants = nil
	tokens := make([]string, tenants)
	for i := range tenants {
		tc := settings.DefaultTenant()
		tc.Name, tokens[i] = fmt.Sprintf("t%d", i), fmt.Sprintf("load-token-%d", i)
		tc.TokenSHA256 = server.HashToken(tokens[i])
		tc.Slots, tc.RunningJobs, tc.InstancePages, tc.MemoryPages = 4, submitters, 256, 2048
		ss.Tenants = append(ss.Tenants, tc)
	}
	srv, err := server.New(server.Config{Host: hs, Server: ss})
	if err != nil {
		t.Fatal(err)
	}
	a := &testAPI{t: t, srv: srv, http: httptest.NewServer(New(srv, ss))}
	for _, tok := range tokens {
		a.ok(tok, "POST", "/v1/plugins?name=valid", validWasm(t), http.StatusCreated, nil)
	}
	job := `version: 1
name: load
mode: batch
parallelism: 2
plugins:
  valid: { path: valid }
operators:
  - id: txns
    source: { type: generator, preset: transactions, count: 20000, accounts: 50 }
  - id: valid
    filter: valid
  - id: totals
    key-by: accountId
    sum: amount
  - id: out
    sink: { type: collect }
`
	var requests, failures atomic.Int64
	var peak atomic.Int64
	// call does one request; any status but want is a failure
	call := func(tok, method, path string, body []byte, want int, out any) bool {
		requests.Add(1)
		r := a.do(tok, method, path, body)
		if r.code != want {
			failures.Add(1)
			t.Errorf("%s %s: %d: %s", method, path, r.code, r)
			return false
		}
		if out != nil {
			return jsonInto(t, r, out)
		}
		return true
	}
	start := time.Now()
	var wg sync.WaitGroup
	for ti, tok := range tokens {
		for range submitters {
			wg.Go(func() {
				for range jobsEach {
					var st server.JobStatus
					if !call(tok, "POST", "/v1/jobs", []byte(job), http.StatusCreated, &st) {
						return
					}
					for { // poll as the dashboard does, but without pause
						var m server.JobMetrics
						if !call(tok, "GET", "/v1/jobs/"+st.ID+"/metrics", nil, 200, &m) {
							return
						}
						call(tok, "GET", "/v1/jobs", nil, 200, nil)
						peak.Store(max(peak.Load(), int64(runtime.NumGoroutine())))
						if m.State != server.Running {
							break
						}
					}
					var end server.JobStatus
					call(tok, "GET", "/v1/jobs/"+st.ID, nil, 200, &end)
					var out server.Output
					call(tok, "GET", "/v1/jobs/"+st.ID+"/output", nil, 200, &out)
					if end.State != server.Finished || end.RecordsDone != 20000 || out.Total != 50 {
						failures.Add(1)
						t.Errorf("tenant t%d job %s: %s, %d records, %d results: %s", ti, st.ID, end.State, end.RecordsDone, out.Total, end.Error)
					}
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	text := a.ok(tokenAdmin, "GET", "/metrics", nil, 200, nil).String()
	for i := range tenants {
		if v, _ := series(text, "sluice_tenant_jobs_total", fmt.Sprintf(`tenant="t%d"`, i), `outcome="finished"`); v != submitters*jobsEach {
			t.Errorf("tenant t%d: %v jobs finished, want %d", i, v, submitters*jobsEach)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	a.http.Close()
	after := settleGoroutines(t, base)
	n := tenants * submitters * jobsEach
	t.Logf("load: %d tenants, %d jobs of 20,000 records (Wasm filter, keyed sum), %d requests, %d failed, in %s (%.0f requests/s); goroutines %d before, peak %d, %d after",
		tenants, n, requests.Load(), failures.Load(), elapsed.Round(time.Millisecond), float64(requests.Load())/elapsed.Seconds(), base, peak.Load(), after)
}
