package plan

import (
	"fmt"

	"github.com/sluicehq/sluice/host/pipeline"
)

// hints adds the advice a senior Flink engineer would give on this plan,
// in topological order of the operator each is about.
func (pl *planner) hints() {
	for _, op := range pl.g.Operators {
		pl.statelessAfterHash(op)
		pl.unevenKeyGroups(op)
		for _, e := range op.Inputs {
			pl.parallelismRedistribution(e, op)
			pl.globalIdle(e, op)
		}
	}
}

func (pl *planner) hint(op string, format string, args ...any) {
	pl.g.Hints = append(pl.g.Hints, Hint{Operator: op, Text: fmt.Sprintf(format, args...)})
}

// statelessAfterHash: a map, filter or flat-map placed right after a HASH
// edge keeps no keyed state, so the shuffle in front of it buys nothing
// there; running it before the key-by shuffles less data (a filter drops
// records before they cross the network) and lets it chain upstream.
func (pl *planner) statelessAfterHash(op *Operator) {
	if !op.Keyed || !op.Kind.Stateless() {
		return
	}
	gain := "it then chains with its upstream and the shuffle moves to the operator that needs the key"
	if op.Kind == pipeline.KindFilter {
		gain = "records it drops then never cross the network"
	}
	pl.hint(op.ID, "operator '%s' is a stateless %s right after a HASH edge: place it before the key-by; %s",
		op.ID, op.Kind, gain)
}

// unevenKeyGroups: when the parallelism does not divide the max
// parallelism, subtasks own different numbers of key groups.
func (pl *planner) unevenKeyGroups(op *Operator) {
	p, m := op.Parallelism, op.MaxParallelism
	if !op.Keyed || m%p == 0 {
		return
	}
	lower, higher := p, p
	for m%lower != 0 {
		lower--
	}
	for higher <= m && m%higher != 0 {
		higher++
	}
	pl.hint(op.ID, "operator '%s': parallelism %d does not divide max parallelism %d, so its subtasks own %d or %d key groups: "+
		"uneven load even for uniform keys (parallelism %d or %d divides it)",
		op.ID, p, m, m/p, m/p+1, lower, higher)
}

// parallelismRedistribution: an edge that is REBALANCE only because the
// parallelism changes.
func (pl *planner) parallelismRedistribution(e *Edge, down *Operator) {
	if !defaultRedistribution(e, down) {
		return
	}
	up := pl.byID[e.From]
	pl.hint(down.ID, "edge %s -> %s is REBALANCE only because parallelism changes (%d to %d): the two cannot chain and every record "+
		"crosses between tasks; give both the same parallelism to keep the edge FORWARD, or write partition: rescale for a local, pointwise exchange",
		e.From, e.To, up.Parallelism, down.Parallelism)
}

// globalIdle: GLOBAL sends every record to subtask 0.
func (pl *planner) globalIdle(e *Edge, down *Operator) {
	if e.ShipStrategy != Global || down.Parallelism == 1 {
		return
	}
	pl.hint(down.ID, "edge %s -> %s is GLOBAL: every record goes to subtask 0 of '%s' and its other %d subtasks stay idle; give it parallelism 1",
		e.From, e.To, down.ID, down.Parallelism-1)
}
