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
		pl.shipStrategy(e, up, down, spec, spec.InputPartition(i))
		up.Outputs = append(up.Outputs, e)
		down.Inputs = append(down.Inputs, e)
		pl.g.Edges = append(pl.g.Edges, e)
	}
}

// shipStrategy sets the edge's strategy: HASH for key-by, the partition
// given (part: the input's own or the operator's), else FORWARD between
// equal parallelisms and REBALANCE otherwise (Flink
// StreamGraph.addEdgeInternal).
func (pl *planner) shipStrategy(e *Edge, up, down *Operator, spec *pipeline.Operator, part *pipeline.PartitionSpec) {
	switch {
	case spec.KeyBy != nil:
		e.ShipStrategy = Hash
		e.KeyFields = append([]string(nil), spec.KeyBy.Fields...)
		e.KeyPlugin = spec.KeyBy.Plugin
	case part != nil && part.Strategy == "custom":
		e.written = true
		e.ShipStrategy = Custom
		e.CustomPlugin = part.Plugin
		e.CustomKeys = part.Keys
	case part != nil:
		e.written = true
		e.ShipStrategy = strings.ToUpper(part.Strategy)
		if e.ShipStrategy == Forward && up.Parallelism != down.Parallelism {
			err := partition.ForwardParallelismError(up.ID, up.Parallelism, down.ID, down.Parallelism)
			pl.errorf(part.Pos, "%s", err.Error())
		}
	default:
		e.ShipStrategy = partition.DefaultName(up.Parallelism, down.Parallelism)
	}
}

// defaultRedistribution reports whether the edge is REBALANCE only
// because no partitioning was given and the parallelism changes.
func defaultRedistribution(e *Edge, down *Operator) bool {
	return e.ShipStrategy == Rebalance && !e.written
}
