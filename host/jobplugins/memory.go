package jobplugins

import (
	"fmt"

	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/plugin"
)

// BudgetError refuses a job whose plugin instances could together use
// more linear memory than its budget, before it starts.
type BudgetError struct {
	Job       string
	Instances int
	Pages     uint32 // per instance (the memory limit), 64 KiB pages
	Budget    uint64 // bytes
	Setting   string // where the budget comes from, e.g. "setting job-memory"
}

func (e *BudgetError) Error() string {
	per := uint64(e.Pages) * 65536
	return fmt.Sprintf("job %q needs %d plugin instances × %s = %s of plugin memory, above its budget of %s (%s): lower the parallelism of plugin operators or memory-pages",
		e.Job, e.Instances, plugin.SizeText(per), plugin.SizeText(per*uint64(e.Instances)), plugin.SizeText(e.Budget), e.Setting)
}

// JobInstances counts the plugin instances a job makes: one per subtask
// of each plugin operator, and one per upstream subtask of each edge with
// a key-selector or custom-partitioner plugin.
func JobInstances(g *plan.JobGraph) int {
	n := 0
	par := map[string]int{}
	for _, op := range g.Operators {
		par[op.ID] = op.Parallelism
		if op.Kind.UsesPlugin() {
			n += op.Parallelism
		}
	}
	for _, e := range g.Edges {
		if e.KeyPlugin != "" || e.CustomPlugin != "" {
			n += par[e.From]
		}
	}
	return n
}

// CheckJobMemory refuses job g when its plugin instances, each allowed
// pages of linear memory, could together pass budget bytes; a budget of 0
// is no budget. setting names where the budget comes from.
func CheckJobMemory(g *plan.JobGraph, pages uint32, budget uint64, setting string) error {
	n := JobInstances(g)
	if budget == 0 || uint64(n)*uint64(pages)*65536 <= budget {
		return nil
	}
	return &BudgetError{Job: g.Name, Instances: n, Pages: pages, Budget: budget, Setting: setting}
}
