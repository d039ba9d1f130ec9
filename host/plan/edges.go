package plan

import (
	"strings"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/partition"
)

// inputs creates the edges into op, one per input in input order, and
// picks each edge's ship strategy (flink-semantics.md §2).
func (pl *planner) inputs(spec *pipeline.Operator) {
	down := pl.byID[spec.ID]
	for i, in := range spec.Inputs {
		up := pl.byID[in.Operator]
		e := &Edge{From: up.ID, To: down.ID, SideOutput: in.SideOutput}
		if spec.Kind.IsCoOperator() {
			e.InputIndex = i
		}
		pl.shipStrategy(e, up, down, spec)
		up.Outputs = append(up.Outputs, e)
		down.Inputs = append(down.Inputs, e)
		pl.g.Edges = append(pl.g.Edges, e)
	}
}

// shipStrategy sets the edge's strategy: HASH for key-by, the partition
// given, else FORWARD between equal parallelisms and REBALANCE otherwise
// (Flink StreamGraph.addEdgeInternal).
func (pl *planner) shipStrategy(e *Edge, up, down *Operator, spec *pipeline.Operator) {
	switch {
	case spec.KeyBy != nil:
		e.ShipStrategy = Hash
		e.KeyFields = append([]string(nil), spec.KeyBy.Fields...)
		e.KeyPlugin = spec.KeyBy.Plugin
	case spec.Partition != nil && spec.Partition.Strategy == "custom":
		e.ShipStrategy = Custom
		e.CustomPlugin = spec.Partition.Plugin
		e.CustomKeys = spec.Partition.Keys
	case spec.Partition != nil:
		e.ShipStrategy = strings.ToUpper(spec.Partition.Strategy)
		if e.ShipStrategy == Forward && up.Parallelism != down.Parallelism {
			err := partition.ForwardParallelismError(up.ID, up.Parallelism, down.ID, down.Parallelism)
			pl.errorf(spec.Partition.Pos, "%s", err.Error())
		}
	default:
		e.ShipStrategy = partition.DefaultName(up.Parallelism, down.Parallelism)
	}
}

// defaultRedistribution reports whether the edge is REBALANCE only
// because no partitioning was given and the parallelism changes.
func defaultRedistribution(e *Edge, down *Operator) bool {
	return e.ShipStrategy == Rebalance && down.Spec.KeyBy == nil && down.Spec.Partition == nil
}
