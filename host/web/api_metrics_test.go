package web

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/server"
)

// series returns the value of the first series of metric name carrying
// every label given as k="v", and whether there is one.
func series(text, name string, labels ...string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		return v, err == nil
	}
	return 0, false
}

func TestPrometheusMetrics(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	a.ok(tokenA, "POST", "/v1/plugins?name=valid", validWasm(t), http.StatusCreated, nil)
	job := a.submit(tokenA, liveJob("valid", 2))
	// wait until both source subtasks emitted and records reached the sum
	waitFor(t, "records through the job", func() bool {
		var m server.JobMetrics
		a.ok(tokenA, "GET", "/v1/jobs/"+job.ID+"/metrics", nil, 200, &m)
		src := operator(t, m, "txns")
		return src.Subtasks[0].RecordsOut > 0 && src.Subtasks[1].RecordsOut > 0 && operator(t, m, "totals").RecordsIn > 0
	})
	text := a.ok(tokenAdmin, "GET", "/metrics", nil, 200, nil).String()
	id := `job_id="` + job.ID + `"`
	checks := []struct {
		name   string
		labels []string
		min    float64
	}{
		{"sluice_operator_records_in_total", []string{id, `operator="totals"`, `tenant="a"`}, 0},
		{"sluice_operator_records_out_total", []string{id, `operator="txns"`, `subtask="1"`}, 1},
		{"sluice_operator_bytes_out_total", []string{id, `operator="txns"`}, 1},
		{"sluice_operator_bytes_in_total", []string{id, `operator="totals"`}, 0},
		{"sluice_task_busy_time_ms_per_second", []string{id, `task="Source: txns -> valid"`, `subtask="0"`}, 0},
		{"sluice_task_idle_time_ms_per_second", []string{id, `subtask="1"`}, 0},
		{"sluice_task_back_pressured_time_ms_per_second", []string{id}, 0},
		{"sluice_task_skew", []string{id}, 0},
		{"sluice_plugin_calls_total", []string{id, `operator="valid"`, `call="open"`, `subtask="0"`}, 1},
		{"sluice_plugin_calls_total", []string{id, `operator="valid"`, `call="process"`}, 1},
		{"sluice_plugin_call_duration_seconds_count", []string{id, `operator="valid"`}, 2},
		{"sluice_plugin_call_duration_seconds_bucket", []string{id, `le="+Inf"`}, 2},
		{"sluice_plugin_instance_memory_bytes", []string{id, `operator="valid"`}, 65536},
		{"sluice_plugin_instance_restarts_total", []string{id}, 0},
		{"sluice_job_uptime_seconds", []string{id}, 0},
		{"sluice_tenant_slots", []string{`tenant="a"`}, 2},
		{"sluice_tenant_slots_quota", []string{`tenant="a"`}, 4},
		{"sluice_tenant_memory_pages", []string{`tenant="a"`}, 512},
		{"sluice_tenant_running_jobs", []string{`tenant="a"`}, 1},
		{"sluice_tenant_plugins", []string{`tenant="a"`}, 1},
		{"sluice_tenant_jobs_total", []string{`tenant="a"`, `outcome="submitted"`}, 1},
		{"sluice_http_requests_total", []string{`route="GET /v1/jobs/{id}/metrics"`, `code="200"`}, 1},
	}
	for _, c := range checks {
		v, ok := series(text, c.name, c.labels...)
		if !ok || v < c.min {
			t.Errorf("%s{%s}: %v (found %v), want at least %v", c.name, strings.Join(c.labels, ","), v, ok, c.min)
		}
	}
	if v, _ := series(text, "sluice_tenant_slots", `tenant="b"`); v != 0 {
		t.Errorf("tenant b holds %v slots", v)
	}
	// a job's series go when it ends; the tenant's counters stay
	a.ok(tokenA, "POST", "/v1/jobs/"+job.ID+"/cancel", nil, 200, nil)
	a.wait(job.ID)
	text = a.ok(tokenAdmin, "GET", "/metrics", nil, 200, nil).String()
	if strings.Contains(text, job.ID) {
		t.Errorf("series of the ended job remain")
	}
	if v, _ := series(text, "sluice_tenant_jobs_total", `tenant="a"`, `outcome="canceled"`); v != 1 {
		t.Errorf("canceled jobs of a: %v, want 1", v)
	}
	if v, ok := series(text, "sluice_tenant_slots", `tenant="a"`); !ok || v != 0 {
		t.Errorf("slots of a after the job: %v", v)
	}
}

// TestLogFloodIsCounted: a guest's log lines dropped past the kept tail
// (sandbox.md case 18) show per operator subtask in the job's metrics and
// as a Prometheus counter with the tenant and job_id labels.
func TestLogFloodIsCounted(t *testing.T) {
	hs, ss := testSettings(t)
	a := startAPI(t, hs, ss, nil)
	a.ok(tokenA, "POST", "/v1/plugins?name=poison", poisonWasm(t), http.StatusCreated, nil)
	// each {c: logs} writes 2,000 lines; the sequence keeps the job running
	job := a.submit(tokenA, `version: 1
name: flood
plugins:
  poison: { path: poison }
operators:
  - id: logs
    source: { type: elements, values: [{c: logs}, {c: logs}, {c: logs}, {c: logs}, {c: logs}] }
  - id: ticks
    source: { type: generator, preset: sequence, rate: 50 }
  - id: p
    map: poison
    input: [logs, ticks]
  - id: out
    sink: { type: collect }
`)
	var m server.JobMetrics
	waitFor(t, "dropped log lines in the metrics", func() bool {
		a.ok(tokenA, "GET", "/v1/jobs/"+job.ID+"/metrics", nil, 200, &m)
		return operator(t, m, "p").LogLinesDropped > 0
	})
	p := operator(t, m, "p")
	if len(p.Subtasks) != 1 || p.Subtasks[0].LogLinesDropped != p.LogLinesDropped {
		t.Errorf("operator p: %d dropped, subtasks %+v", p.LogLinesDropped, p.Subtasks)
	}
	text := a.ok(tokenAdmin, "GET", "/metrics", nil, 200, nil).String()
	v, ok := series(text, "sluice_operator_log_lines_dropped_total", `job_id="`+job.ID+`"`, `operator="p"`, `tenant="a"`, `subtask="0"`)
	if !ok || v < float64(p.LogLinesDropped) {
		t.Errorf("sluice_operator_log_lines_dropped_total of p: %v (found %v), want at least %d", v, ok, p.LogLinesDropped)
	}
	if v, ok := series(text, "sluice_operator_log_lines_dropped_total", `job_id="`+job.ID+`"`, `operator="ticks"`); !ok || v != 0 {
		t.Errorf("a built-in source's dropped lines: %v (found %v), want 0", v, ok)
	}
}
