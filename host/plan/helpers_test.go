package plan

import (
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
)

// job parses a pipeline whose version and name lines are implied.
func job(t *testing.T, body string) *pipeline.Pipeline {
	t.Helper()
	p, err := pipeline.Parse("t.yaml", []byte("version: 1\nname: t\n"+body), pipeline.ParseOptions{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return p
}

func mustPlan(t *testing.T, body string) *JobGraph {
	t.Helper()
	g, err := Plan(job(t, body), Options{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return g
}

func planErr(t *testing.T, body string, opts Options) string {
	t.Helper()
	_, err := Plan(job(t, body), opts)
	if err == nil {
		t.Fatalf("planned, want an error")
	}
	return err.Error()
}

func edge(t *testing.T, g *JobGraph, from, to string) *Edge {
	t.Helper()
	for _, e := range g.Edges {
		if e.From == from && e.To == to {
			return e
		}
	}
	t.Fatalf("no edge %s -> %s", from, to)
	return nil
}

func operator(t *testing.T, g *JobGraph, id string) *Operator {
	t.Helper()
	for _, op := range g.Operators {
		if op.ID == id {
			return op
		}
	}
	t.Fatalf("no operator %s", id)
	return nil
}
