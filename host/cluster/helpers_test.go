package cluster

import (
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
)

// planFile plans one of the example pipelines in configs/.
func planFile(t *testing.T, name string) *plan.JobGraph {
	t.Helper()
	p, err := pipeline.ParseFile("../../configs/"+name+".yaml", pipeline.ParseOptions{PluginRoots: []string{"../.."}})
	if err != nil {
		t.Fatalf("lint: %v", err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return g
}

// planBody plans a pipeline whose version and name lines are implied.
func planBody(t *testing.T, body string) *plan.JobGraph {
	t.Helper()
	p, err := pipeline.Parse("t.yaml", []byte("version: 1\nname: t\n"+body), pipeline.ParseOptions{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return g
}

func layout(t *testing.T, g *plan.JobGraph, cfg Config) *Layout {
	t.Helper()
	l, err := Plan(g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
