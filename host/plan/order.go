package plan

import (
	"container/heap"

	"github.com/sluicehq/sluice/host/pipeline"
)

// order returns the operators in topological order: sources first, then
// by file order among operators whose inputs are all placed. It reports
// inputs that name no operator and cycles, which the parser refuses but a
// hand-built pipeline may hold.
func (pl *planner) order() ([]*pipeline.Operator, bool) {
	ops := pl.p.Operators
	if len(ops) == 0 {
		pl.errorf(pl.p.Pos, "the pipeline has no operators")
		return nil, false
	}
	index := make(map[string]int, len(ops))
	for i, op := range ops {
		if _, dup := index[op.ID]; dup || op.ID == "" {
			pl.errorf(op.Pos, "operator id %q is empty or not unique", op.ID)
			continue
		}
		index[op.ID] = i
	}
	pending := make([]int, len(ops)) // inputs not yet placed
	readers := make([][]int, len(ops))
	for i, op := range ops {
		if op.Kind != pipeline.KindSource && len(op.Inputs) == 0 {
			pl.errorf(op.Pos, "operator '%s' is a %s with no input", op.ID, op.Kind)
		}
		for _, in := range op.Inputs {
			up, ok := index[in.Operator]
			if !ok {
				pl.errorf(in.Pos, "operator '%s' reads %q, which is not an operator of this pipeline", op.ID, in.Operator)
				continue
			}
			pending[i]++
			readers[up] = append(readers[up], i)
		}
	}
	if len(pl.errs) > 0 {
		return nil, false
	}
	ready := &byPriority{ops: ops}
	for i := range ops {
		if pending[i] == 0 {
			heap.Push(ready, i)
		}
	}
	order := make([]*pipeline.Operator, 0, len(ops))
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		order = append(order, ops[i])
		for _, r := range readers[i] {
			if pending[r]--; pending[r] == 0 {
				heap.Push(ready, r)
			}
		}
	}
	if len(order) < len(ops) {
		for i, op := range ops {
			if pending[i] > 0 {
				pl.errorf(op.Pos, "operator '%s' is on a cycle or reads from one", op.ID)
			}
		}
		return nil, false
	}
	return order, true
}

// byPriority is a min-heap of operator indexes: sources before other
// operators, then file order.
type byPriority struct {
	ops []*pipeline.Operator
	idx []int
}

func (h *byPriority) Len() int { return len(h.idx) }
func (h *byPriority) Less(a, b int) bool {
	sa := h.ops[h.idx[a]].Kind == pipeline.KindSource
	sb := h.ops[h.idx[b]].Kind == pipeline.KindSource
	if sa != sb {
		return sa
	}
	return h.idx[a] < h.idx[b]
}
func (h *byPriority) Swap(a, b int) { h.idx[a], h.idx[b] = h.idx[b], h.idx[a] }
func (h *byPriority) Push(x any)    { h.idx = append(h.idx, x.(int)) }
func (h *byPriority) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}
