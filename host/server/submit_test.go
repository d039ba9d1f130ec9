package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const sumPipeline = `version: 1
name: sums
mode: batch
parallelism: 2
operators:
  - id: src
    parallelism: 1
    source:
      type: elements
      values:
        - {k: a, v: 1}
        - {k: b, v: 10}
        - {k: a, v: 2}
        - {k: b, v: 20}
        - {k: a, v: 3}
  - id: total
    key-by: k
    sum: v
  - id: out
    sink: {type: collect}
`

func TestSubmitRunsToTheCollectSink(t *testing.T) {
	s := newTestServer(t, testConfig(t))
	st, err := s.Submit(t.Context(), tenantA, []byte(sumPipeline))
	if err != nil {
		t.Fatal(err)
	}
	end := waitEnded(t, s, tenantA, st.ID)
	if end.State != Finished {
		t.Fatalf("state %s, error %q", end.State, end.Error)
	}
	out, err := s.JobOutput(tenantA, st.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range out.Records {
		var v struct {
			K string
			V float64
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatal(err)
		}
		got[v.K] = v.V
	}
	if got["a"] != 6 || got["b"] != 30 || len(got) != 2 {
		t.Fatalf("output %v, want a=6 b=30 (records %+v)", got, out.Records)
	}
	if !strings.Contains(string(mustPlan(t, s, st.ID)), `"required_slots": 2`) {
		t.Error("plan does not say 2 slots")
	}
}

func mustPlan(t *testing.T, s *Server, id string) []byte {
	t.Helper()
	b, err := s.Plan(tenantA, id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTooLargeToPlanRefusedBeforePlanning: a pipeline asking for more
// subtasks or operators than the server plans is refused at its
// parallelism line before the planner allocates (14,000 operators at
// parallelism 32768 took 11 GB to plan before the slots quota refused it).
func TestTooLargeToPlanRefusedBeforePlanning(t *testing.T) {
	s := newTestServer(t, testConfig(t))
	var b strings.Builder
	b.WriteString("version: 1\nname: wide\nparallelism: 32768\nmax-parallelism: 32768\noperators:\n  - { id: src, source: { type: generator, preset: sequence, count: 1 } }\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "  - { id: m%d, key-by: n, sum: n }\n", i)
	}
	b.WriteString("  - { id: out, sink: { type: discard } }\n")
	_, err := s.Submit(t.Context(), tenantA, []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "3:1: 1376256 subtasks (operator src alone has 32768): this server plans at most 1048576; lower the parallelism") {
		t.Fatalf("err = %v", err)
	}
	b.Reset()
	b.WriteString("version: 1\nname: many\noperators:\n  - { id: src, source: { type: generator, preset: sequence, count: 1 } }\n")
	for i := 0; i < maxOperators; i++ {
		fmt.Fprintf(&b, "  - { id: m%d, key-by: n, sum: n }\n", i)
	}
	if _, err := s.Submit(t.Context(), tenantA, []byte(b.String())); err == nil || !strings.Contains(err.Error(), "1001 operators: this server plans at most 1000") {
		t.Fatalf("err = %v", err)
	}
}

// TestSubmitRefusesOnlySources: a pipeline of sources alone is a lint
// problem at its operators: line, as the CLI refuses it.
func TestSubmitRefusesOnlySources(t *testing.T) {
	s := newTestServer(t, testConfig(t))
	_, err := s.Submit(t.Context(), tenantA, []byte("version: 1\nname: p\noperators:\n  - { id: src, source: { type: generator, preset: sequence, count: 3 } }\n"))
	var e *Error
	if !errors.As(err, &e) || e.Code != Invalid || len(e.Problems) != 1 || e.Problems[0].Line != 3 || !strings.Contains(e.Problems[0].Message, "the pipeline has only sources") {
		t.Fatalf("%v (%+v)", err, e)
	}
}
