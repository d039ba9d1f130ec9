package plan

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/host/pipeline"
)

// chain decides whether edge e is fused into its upstream's task, by the
// seven conditions of Flink's StreamingJobGraphGenerator.isChainable
// (flink-semantics.md §3). An unchained edge records every condition it
// breaks, in the order of §3, joined by "; ".
//
// Batch mode changes no condition: Flink still chains FORWARD edges in
// BATCH execution (arePartitionerAndExchangeModeChainable accepts a
// ForwardPartitioner whose exchange mode is not BATCH, and the default mode
// is UNDEFINED). What batch mode changes is the exchange of every edge left
// unchained, FORWARD included: it is BLOCKING (see Plan).
func (pl *planner) chain(e *Edge) {
	up, down := pl.byID[e.From], pl.byID[e.To]
	var why []string
	if n := len(down.Inputs); n != 1 { // 1
		why = append(why, fmt.Sprintf("downstream has %d inputs", n))
	}
	if !pl.p.Chaining { // 2
		why = append(why, "chaining disabled for the job")
	}
	if up.SlotSharingGroup != down.SlotSharingGroup { // 3
		why = append(why, fmt.Sprintf("slot sharing groups differ (%s vs %s)", up.SlotSharingGroup, down.SlotSharingGroup))
	}
	if up.Spec.DisableChaining { // 4
		why = append(why, fmt.Sprintf("operator '%s' has chaining: false", up.ID))
	}
	if down.Spec.DisableChaining { // 5
		why = append(why, fmt.Sprintf("operator '%s' has chaining: false", down.ID))
	} else if down.Spec.StartNewChain {
		why = append(why, fmt.Sprintf("operator '%s' starts a new chain", down.ID))
	}
	if up.Parallelism != down.Parallelism { // 6
		why = append(why, fmt.Sprintf("parallelism differs (%d vs %d)", up.Parallelism, down.Parallelism))
	}
	if e.ShipStrategy != Forward { // 7
		why = append(why, fmt.Sprintf("ship strategy is %s, not FORWARD", e.ShipStrategy))
	}
	e.Chained = len(why) == 0
	e.Reason = strings.Join(why, "; ")
}

// tasks groups chained operators into tasks. Every operator without a
// chained input heads a task; since a chained edge's downstream has one
// input, a chain is a tree hanging from its head. Tasks follow the
// topological order of their heads.
func (pl *planner) tasks() {
	for _, op := range pl.g.Operators {
		if len(op.Inputs) == 1 && op.Inputs[0].Chained {
			continue
		}
		t := &Task{
			Index:            len(pl.g.Tasks),
			Parallelism:      op.Parallelism,
			SlotSharingGroup: op.SlotSharingGroup,
		}
		t.Name = pl.chainName(op, t)
		pl.g.Tasks = append(pl.g.Tasks, t)
	}
}

// chainName assigns op and its chained successors to t and returns their
// name as Flink's createChainedName builds it: "a -> b", and
// "a -> (b, c)" where the chain forks.
func (pl *planner) chainName(op *Operator, t *Task) string {
	op.Task = t.Index
	t.Operators = append(t.Operators, op.ID)
	name := op.ID
	switch op.Kind { // as Flink's StreamGraphGenerator names them
	case pipeline.KindSource:
		name = "Source: " + op.ID
	case pipeline.KindSink:
		name = "Sink: " + op.ID
	}
	var next []string
	for _, e := range op.Outputs {
		if e.Chained {
			next = append(next, pl.chainName(pl.byID[e.To], t))
		}
	}
	switch len(next) {
	case 0:
		return name
	case 1:
		return name + " -> " + next[0]
	}
	return name + " -> (" + strings.Join(next, ", ") + ")"
}
