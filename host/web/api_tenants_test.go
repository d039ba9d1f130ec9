package web

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/server"
)

// liveJob runs until cancelled: a paced generator through the valid
// plugin (named by plugin) into a keyed sum, at the given parallelism.
func liveJob(plugin string, parallelism int) string {
	return fmt.Sprintf(`version: 1
name: live
parallelism: %d
plugins:
  valid: { path: "%s" }
operators:
  - id: txns
    source: { type: generator, preset: transactions, rate: 200, seed: 1 }
  - id: valid
    filter: valid
  - id: totals
    key-by: accountId
    sum: amount
  - id: out
    sink: { type: collect }
`, parallelism, plugin)
}

// plainJob runs until cancelled, with no plugin.
func plainJob(parallelism int) string {
	return fmt.Sprintf(`version: 1
name: plain
parallelism: %d
operators:
  - id: txns
    source: { type: generator, preset: transactions, rate: 100 }
  - id: out
    sink: { type: discard }
`, parallelism)
}

// withSection returns a distinct, still valid module: bin with a custom
// section appended (another sha256).
func withSection(bin []byte, tag string) []byte {
	payload := append(append([]byte{byte(len(tag))}, tag...), 1) // a name, one byte of data
	return append(bytes.Clone(bin), append([]byte{0, byte(len(payload))}, payload...)...)
}

func TestTenantIsolation(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	var info server.PluginInfo
	a.ok(tokenA, "POST", "/v1/plugins?name=valid", validWasm(t), http.StatusCreated, &info)
	job := a.submit(tokenA, liveJob("valid", 2))
	unknown := a.do(tokenB, "GET", "/v1/jobs/00000000000000000000000000000000", nil)

	// B can neither read nor cancel A's job: the same 404 as an unknown id
	for _, rq := range []struct{ method, path string }{
		{"GET", ""}, {"GET", "/plan"}, {"GET", "/metrics"}, {"GET", "/exceptions"}, {"GET", "/output"}, {"POST", "/cancel"},
	} {
		r := a.do(tokenB, rq.method, "/v1/jobs/"+job.ID+rq.path, nil)
		if r.code != http.StatusNotFound {
			t.Errorf("tenant b %s %s of a's job: %d, want 404: %s", rq.method, rq.path, r.code, r)
			continue
		}
		if e, u := r.errorJSON(t), unknown.errorJSON(t); e.Error != u.Error {
			t.Errorf("the 404 of a's job differs from an unknown job's: %q vs %q", e.Error, u.Error)
		}
	}
	var list []server.JobStatus
	a.ok(tokenB, "GET", "/v1/jobs", nil, 200, &list)
	if len(list) != 0 {
		t.Errorf("tenant b lists %d jobs, want none", len(list))
	}
	// nor see, delete or use A's plugin
	for _, ref := range []string{"valid", info.Digest} {
		if r := a.do(tokenB, "GET", "/v1/plugins/"+ref, nil); r.code != http.StatusNotFound {
			t.Errorf("tenant b GET plugin %s: %d", ref, r.code)
		}
		if r := a.do(tokenB, "DELETE", "/v1/plugins/"+ref, nil); r.code != http.StatusNotFound {
			t.Errorf("tenant b DELETE plugin %s: %d", ref, r.code)
		}
	}
	var plugins []server.PluginInfo
	a.ok(tokenB, "GET", "/v1/plugins", nil, 200, &plugins)
	if len(plugins) != 0 {
		t.Errorf("tenant b lists %d plugins", len(plugins))
	}
	r := a.do(tokenB, "POST", "/v1/jobs", []byte(liveJob(info.Digest, 1)))
	if r.code != http.StatusBadRequest {
		t.Fatalf("tenant b using a's plugin by digest: %d, want 400: %s", r.code, r)
	}
	e := r.errorJSON(t)
	if len(e.Problems) != 1 || e.Problems[0].Line != 5 || e.Problems[0].Col != 3 ||
		!strings.Contains(e.Problems[0].Message, "names no plugin of tenant b") {
		t.Errorf("problems: %+v", e.Problems)
	}
	// A's job is untouched; A and the admin see it
	var st server.JobStatus
	a.ok(tokenA, "GET", "/v1/jobs/"+job.ID, nil, 200, &st)
	if st.State != server.Running {
		t.Fatalf("a's job is %s after b's attempts", st.State)
	}
	a.ok(tokenAdmin, "GET", "/v1/jobs/"+job.ID+"/metrics", nil, 200, nil)
	a.ok(tokenAdmin, "GET", "/v1/plugins/"+info.Digest, nil, 200, nil)
	a.ok(tokenAdmin, "GET", "/v1/plugins/a%2Fvalid", nil, 200, nil)
	a.ok(tokenAdmin, "GET", "/v1/jobs", nil, 200, &list)
	if len(list) != 1 || list[0].Tenant != "a" {
		t.Errorf("admin lists %+v", list)
	}
	if r := a.do(tokenAdmin, "POST", "/v1/jobs", []byte(plainJob(1))); r.code != http.StatusForbidden {
		t.Errorf("admin submitting: %d, want 403", r.code)
	}
	a.ok(tokenAdmin, "POST", "/v1/jobs/"+job.ID+"/cancel", nil, 200, nil)
	if end := a.wait(job.ID); end.State != server.Canceled || !strings.Contains(end.CancelCause, "admin") {
		t.Errorf("after the admin's cancel: %s (%s)", end.State, end.CancelCause)
	}
}

func TestQuotaRefusals(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	refused := func(token, method, path string, body []byte, want string) {
		t.Helper()
		r := a.do(token, method, path, body)
		if r.code != http.StatusForbidden {
			t.Fatalf("%s %s: %d, want 403 (%s): %s", method, path, r.code, want, r)
		}
		e := r.errorJSON(t)
		if e.Error != want || !strings.HasPrefix(e.Where, "quota") {
			t.Errorf("refusal %q (where %q), want %q", e.Error, e.Where, want)
		}
	}
	// slots
	refused(tokenA, "POST", "/v1/jobs", []byte(plainJob(8)), "tenant a: job needs 8 slots, quota 4 (running: 0)")
	first := a.submit(tokenA, plainJob(2))
	refused(tokenA, "POST", "/v1/jobs", []byte(plainJob(3)), "tenant a: job needs 3 slots, quota 4 (running: 2)")
	// running jobs
	a.submit(tokenA, plainJob(1))
	refused(tokenA, "POST", "/v1/jobs", []byte(plainJob(1)),
		"tenant a: 2 jobs running or starting, quota 2: wait for one to end or cancel one")
	// the quota comes back when a job ends
	a.ok(tokenA, "POST", "/v1/jobs/"+first.ID+"/cancel", nil, 200, nil)
	a.wait(first.ID)
	a.submit(tokenA, plainJob(3))

	// memory: 2 plugin operators × parallelism 3 = 6 instances of 256 pages
	bin := validWasm(t)
	a.ok(tokenB, "POST", "/v1/plugins?name=v1", withSection(bin, "one"), http.StatusCreated, nil)
	twoFilters := strings.Replace(liveJob("v1", 3), "  - id: totals", "  - id: valid2\n    filter: valid\n  - id: totals", 1)
	refused(tokenB, "POST", "/v1/jobs", []byte(twoFilters),
		"tenant b: job needs 1536 memory pages (6 plugin instances × 256 pages), quota 1024 (running: 0)")
	// stored plugins: count and size
	a.ok(tokenB, "POST", "/v1/plugins?name=v2", withSection(bin, "two"), http.StatusCreated, nil)
	a.ok(tokenB, "POST", "/v1/plugins?name=v3", withSection(bin, "three"), http.StatusCreated, nil)
	refused(tokenB, "POST", "/v1/plugins?name=v4", withSection(bin, "four"),
		"tenant b: 3 plugins stored, quota 3: delete one first (DELETE /v1/plugins/{name})")
	a.ok(tokenB, "POST", "/v1/plugins?name=v3", withSection(bin, "five"), http.StatusCreated, nil) // replaces v3
	a.ok(tokenB, "DELETE", "/v1/plugins/v3", nil, http.StatusNoContent, nil)
	a.ok(tokenB, "POST", "/v1/plugins?name=v4", withSection(bin, "four"), http.StatusCreated, nil)
	var usage struct{ Usage []server.Usage }
	a.ok(tokenB, "GET", "/v1/whoami", nil, 200, &usage)
	if u := usage.Usage[0]; u.Plugins != 3 || u.Refused != 2 {
		t.Errorf("usage of b: %d plugins, %d refused; want 3 and 2", u.Plugins, u.Refused)
	}

	hs2, ss2 := testSettings(t)
	ss2.Tenants[1].PluginBytes = 1000
	small := startAPI(t, hs2, ss2, nil)
	r := small.do(tokenB, "POST", "/v1/plugins?name=big", bin)
	if r.code != http.StatusForbidden {
		t.Fatalf("plugin over plugin-bytes: %d", r.code)
	}
	if want := fmt.Sprintf("tenant b: plugin big is %d bytes, quota 1000", len(bin)); r.errorJSON(t).Error != want {
		t.Errorf("refusal %q, want %q", r.errorJSON(t).Error, want)
	}
}
