package server

import (
	"os"
	"testing"
	"time"
)

// validWasm reads plugins/valid/valid.wasm, which make plugins builds.
func validWasm(t *testing.T) []byte {
	t.Helper()
	bin, err := os.ReadFile("../../plugins/valid/valid.wasm")
	if err != nil {
		t.Fatalf("plugin valid is not built (%v): run make plugins first (make test does)", err)
	}
	return bin
}

// TestEndedJobDropsItsPluginsAndKeepsItsRecord: once a job ends, its
// plugin host is closed and the job keeps neither its execution (which
// holds the plugin set, every module and instance) nor the host, so the
// job history holds no compiled module; status, metrics, exceptions and
// the collected output stay.
func TestEndedJobDropsItsPluginsAndKeepsItsRecord(t *testing.T) {
	s := newTestServer(t, testConfig(t))
	if _, err := s.UploadPlugin(t.Context(), tenantA, "valid", validWasm(t)); err != nil {
		t.Fatal(err)
	}
	st, err := s.Submit(t.Context(), tenantA, []byte(`version: 1
name: forever
plugins:
  valid: { path: valid }
operators:
  - id: txns
    source: { type: generator, preset: transactions, rate: 2000, seed: 7 }
  - id: valid
    filter: valid
  - id: out
    sink: { type: collect }
`))
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.job(tenantA, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	j.mu.Lock()
	h, exec := j.host, j.exec
	j.mu.Unlock()
	if h == nil || exec == nil {
		t.Fatalf("a running job with a plugin: host %v, execution %v", h, exec)
	}
	for {
		if out, _ := s.JobOutput(tenantA, st.ID, 1); out.Total > 0 {
			break
		}
		select {
		case <-exec.Done():
			t.Fatal("the job ended before any output")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := s.Cancel(tenantA, st.ID); err != nil {
		t.Fatal(err)
	}
	if end := waitEnded(t, s, tenantA, st.ID); end.State != Canceled || end.RecordsDone == 0 {
		t.Fatalf("ended %+v", end)
	}
	j.mu.Lock()
	if j.exec != nil || j.host != nil {
		t.Errorf("an ended job keeps its execution (%v) or plugin host (%v)", j.exec != nil, j.host != nil)
	}
	j.mu.Unlock()
	if _, err := h.Load(t.Context(), "again", validWasm(t)); err == nil {
		t.Error("the ended job's plugin host still loads modules: not closed")
	}
	if n := h.LiveInstances(); n != 0 {
		t.Errorf("%d plugin instances live after the job ended", n)
	}
	m, err := s.JobMetrics(tenantA, st.ID)
	if err != nil || m.State != Canceled || len(m.Plugins) == 0 || m.RecordsDone == 0 {
		t.Errorf("metrics after the end: %+v, %v", m, err)
	}
	if out, err := s.JobOutput(tenantA, st.ID, 0); err != nil || out.Total == 0 {
		t.Errorf("output after the end: %+v, %v", out, err)
	}
	if _, err := s.JobExceptions(tenantA, st.ID); err != nil {
		t.Error(err)
	}
	if got := s.Jobs(tenantA); len(got) != 1 || got[0].State != Canceled {
		t.Errorf("jobs: %+v", got)
	}
}

// TestUploadReportsTheDescribedKind: an upload answers with what the
// plugin's own sluice_describe says (as host plugin inspect does), not
// what its exports alone suggest: valid is a filter, every operator
// exports sluice_process.
func TestUploadReportsTheDescribedKind(t *testing.T) {
	s := newTestServer(t, testConfig(t))
	pi, err := s.UploadPlugin(t.Context(), tenantA, "valid", validWasm(t))
	if err != nil {
		t.Fatal(err)
	}
	if pi.Kind != "filter" || pi.SDK != "go" || pi.Keyed {
		t.Errorf("upload of valid: kind %q sdk %q keyed %v, want filter, go, false", pi.Kind, pi.SDK, pi.Keyed)
	}
	if list := s.Plugins(tenantA); len(list) != 1 || list[0].Kind != "filter" {
		t.Errorf("listed: %+v", list)
	}
}
