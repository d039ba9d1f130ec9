package jobplugins

import (
	"errors"
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
)

// TestCheckJobMemory counts one instance per plugin operator subtask and
// per upstream subtask of an edge plugin, and refuses a job past its
// budget with the numbers.
func TestCheckJobMemory(t *testing.T) {
	src := `version: 1
name: wide
plugins:
  p: { path: p.wasm }
  ks: { path: ks.wasm }
operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 }, parallelism: 4 }
  - { id: m, map: p, parallelism: 4 }
  - { id: r, reduce: p, key-by: { plugin: ks }, parallelism: 8 }
  - { id: out, sink: { type: discard } }
`
	p, err := pipeline.Parse("wide.yaml", []byte(src), pipeline.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := JobInstances(g); n != 16 { // m 4, r 8, key selector 4 (m's subtasks)
		t.Fatalf("JobInstances = %d, want 16", n)
	}
	if err := CheckJobMemory(g, 256, 256<<20, "setting job-memory"); err != nil {
		t.Errorf("16 × 16 MiB within 256 MiB: %v", err)
	}
	err = CheckJobMemory(g, 256, 255<<20, "setting job-memory")
	var be *BudgetError
	if !errors.As(err, &be) || err.Error() != `job "wide" needs 16 plugin instances × 16 MiB = 256 MiB of plugin memory, above its budget of 255 MiB (setting job-memory): lower the parallelism of plugin operators or memory-pages` {
		t.Errorf("over budget: %v", err)
	}
	if err := CheckJobMemory(g, 256, 0, "x"); err != nil {
		t.Errorf("no budget: %v", err)
	}
}
