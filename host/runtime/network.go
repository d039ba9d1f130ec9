package runtime

import (
	"fmt"
	"hash/fnv"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/partition"
)

// build lays out the job before anything runs: a subtask per task and
// index, a chainOp per operator and subtask, each operator's collector
// (chained edges are calls, the others network outputs), and the channels
// and input gates between tasks. Plugin and connector instances are made
// later, by each subtask in its own goroutine.
func (e *Execution) build() error {
	job := e.job
	byID := make(map[string]*plan.Operator, len(job.Operators))
	for _, op := range job.Operators {
		byID[op.ID] = op
	}
	if err := checkChannels(job, byID); err != nil {
		return err
	}
	chains := make(map[string][]*chainOp, len(job.Operators))
	e.subtasks = make([][]*subtask, len(job.Tasks))
	for ti, t := range job.Tasks {
		if t.Parallelism < 1 || len(t.Operators) == 0 {
			return fmt.Errorf("runtime: task %q has parallelism %d and %d operators", t.Name, t.Parallelism, len(t.Operators))
		}
		sts := make([]*subtask, t.Parallelism)
		for i := range sts {
			st := &subtask{e: e, task: t, index: i, metrics: &taskCounters{}}
			st.total.Store(-1)
			for _, id := range t.Operators {
				op := byID[id]
				if op == nil {
					return fmt.Errorf("runtime: task %q names unknown operator %q", t.Name, id)
				}
				if op.Parallelism != t.Parallelism {
					return fmt.Errorf("runtime: operator %q has parallelism %d in task %q of parallelism %d", id, op.Parallelism, t.Name, t.Parallelism)
				}
				co := &chainOp{spec: op, metrics: &opCounters{}, st: st, policy: policyOf(op)}
				co.wmIn.Store(MinWatermark)
				co.wmOut.Store(MinWatermark)
				st.ops = append(st.ops, co)
				chains[id] = append(chains[id], co)
			}
			if st.ops[0].spec.Kind != pipeline.KindSource {
				st.gate = &gate{}
			}
			sts[i] = st
		}
		e.subtasks[ti] = sts
	}
	e.hot = map[*plan.Edge][]*hotKeys{}
	for _, op := range job.Operators {
		tags, n := portsOf(op)
		for i, co := range chains[op.ID] {
			co.out = &collector{owner: co, ports: make([][]target, n)}
			for _, edge := range op.Outputs {
				var t target
				if edge.Chained {
					down := chains[edge.To]
					if len(down) != len(chains[op.ID]) {
						return fmt.Errorf("runtime: chained edge %s -> %s joins unequal parallelisms", edge.From, edge.To)
					}
					t = target{op: down[i], input: edge.InputIndex}
				} else {
					out, err := e.newEdgeOut(edge, i, byID)
					if err != nil {
						return err
					}
					co.st.outs = append(co.st.outs, out)
					e.outs = append(e.outs, out)
					t = target{net: out}
				}
				p := tags[edge.SideOutput]
				co.out.ports[p] = append(co.out.ports[p], t)
			}
		}
	}
	for _, sts := range e.subtasks {
		for _, st := range sts {
			if g := st.gate; g != nil {
				// room for every buffer of every channel plus its end (and
				// a few barriers or cancel markers in flight, when
				// checkpointing: beyond, a send waits)
				room := e.opts.QueueCapacity + 1
				if e.ckpt != nil {
					room += barrierRoom
				}
				if e.et {
					room += watermarkRoom
					st.valve = newInputValves(g.inputs)
				}
				g.queue = make(chan message, len(g.inputs)*room)
				if e.ckpt != nil && e.ckpt.unaligned {
					g.prio = make(chan message, len(g.inputs)*barrierRoom)
				}
			}
			if e.ckpt != nil {
				st.ck = &subtaskCheckpoint{mail: mailbox{signal: make(chan struct{}, 1)}}
				if g := st.gate; g != nil {
					st.ck.align = newAligner(e.ckpt.mode, len(g.inputs))
					st.ck.stash = make([][]message, len(g.inputs))
				}
			}
			if st.gate == nil {
				st.time = st.newSourceTime() // after st.ck: it shares its mailbox
			}
		}
	}
	return nil
}

// maxChannels bounds the channels between a job's tasks. An all-to-all
// edge has upstream × downstream channels, and each downstream gate keeps
// room for every buffer of each of its channels: memory grows with the
// square of the parallelism (4096 × 4096 took 8.8 GB), so a job past the
// bound is refused before anything is allocated. 2^20 channels take about
// 0.6 GB.
const maxChannels = 1 << 20

// checkChannels refuses a job whose edges need more than maxChannels
// channels, naming the edge that needs the most.
func checkChannels(job *plan.JobGraph, byID map[string]*plan.Operator) error {
	total, worst, worstN := 0, (*plan.Edge)(nil), 0
	for _, edge := range job.Edges {
		from, to := byID[edge.From], byID[edge.To]
		if edge.Chained || from == nil || to == nil {
			continue
		}
		n := from.Parallelism * to.Parallelism
		if partition.IsPointwise(edge.ShipStrategy) {
			n = max(from.Parallelism, to.Parallelism)
		}
		if total += n; n > worstN {
			worst, worstN = edge, n
		}
	}
	if total <= maxChannels {
		return nil
	}
	from, to := byID[worst.From], byID[worst.To]
	return fmt.Errorf("the job needs %d channels between its tasks, more than the %d one host runs (each needs memory, and an all-to-all edge needs upstream × downstream of them): edge %s -> %s (%s) alone needs %d × %d; lower the parallelism of %q or %q",
		total, maxChannels, worst.From, worst.To, worst.ShipStrategy, from.Parallelism, to.Parallelism, worst.From, worst.To)
}

// newEdgeOut makes upstream subtask i's output into a non-chained edge:
// its channels (pointwise or all-to-all) and how it routes records.
func (e *Execution) newEdgeOut(edge *plan.Edge, i int, byID map[string]*plan.Operator) (*edgeOut, error) {
	from, to := byID[edge.From], byID[edge.To]
	if from == nil || to == nil {
		return nil, fmt.Errorf("runtime: edge %s -> %s names an unknown operator", edge.From, edge.To)
	}
	down := e.subtasks[to.Task]
	if down[0].ops[0].spec != to {
		return nil, fmt.Errorf("runtime: edge %s -> %s is not chained but %q does not start its task", edge.From, edge.To, edge.To)
	}
	s, t := from.Parallelism, to.Parallelism
	st := e.subtasks[from.Task][i]
	o := &edgeOut{
		edge: edge, subtask: i, parallel: s,
		batchSize: e.opts.BatchSize, batchBytes: e.opts.BatchBytes,
		done: e.ctx.Done(), blocked: &st.metrics.backPressured,
		chans: make([]*channel, t),
	}
	first, end := 0, t
	if partition.IsPointwise(edge.ShipStrategy) {
		first, end = partition.PointwiseTargets(i, s, t)
	}
	for d := first; d < end; d++ {
		o.chans[d] = newChannel(down[d].gate, edge.InputIndex, e.opts.QueueCapacity, e.opts.BatchBytes)
	}
	// Each edge draws its own random stream (REBALANCE, SHUFFLE), as each
	// of Flink's partitioner instances does: two such edges leaving one
	// subtask must not start at the same channel and move in step.
	cfg := partition.Config{Upstream: i, UpstreamParallelism: s, DownstreamParallelism: t, MaxParallelism: to.MaxParallelism, Seed: edgeSeed(e.opts.Seed, edge)}
	var err error
	switch edge.ShipStrategy {
	case plan.Hash:
		o.route = routeHash
		o.keys = &keyReader{fields: edge.KeyFields, plugin: edge.KeyPlugin}
		if len(edge.KeyFields) == 0 && edge.KeyPlugin == "" {
			return nil, fmt.Errorf("runtime: HASH edge %s -> %s has no key", edge.From, edge.To)
		}
		o.hot = newHotKeys(uint64(e.opts.Seed) ^ uint64(i+1)*0x9e3779b97f4a7c15 ^ uint64(len(e.outs)))
		e.hot[edge] = append(e.hot[edge], o.hot)
		if o.part, err = partition.New(plan.Hash, cfg); err == nil {
			o.memo = newHashMemo(o.part)
		}
		builtin := to.Kind.IsAggregation() || to.Kind == pipeline.KindCount
		o.keyless = edge.KeyPlugin == "" && builtin && policyOf(to) != PolicyFail
		o.spans = builtin && e.job.Mode != pipeline.Batch // a BATCH aggregation's sorted input holds records, not spans
	case plan.Custom:
		o.route = routeCustom
		o.keys = &keyReader{fields: edge.CustomKeys}
		o.hot = newHotKeys(uint64(e.opts.Seed) ^ uint64(i+1)*0x9e3779b97f4a7c15 ^ uint64(len(e.outs)))
		e.hot[edge] = append(e.hot[edge], o.hot)
		if edge.CustomPlugin == "" || len(edge.CustomKeys) == 0 {
			return nil, fmt.Errorf("runtime: CUSTOM edge %s -> %s needs a partitioner plugin and a key field", edge.From, edge.To)
		}
	case plan.Broadcast:
		o.route = routeAll
	case plan.Global:
		o.route, o.one = routeOne, o.chans[0]
	default:
		if end-first == 1 {
			o.route, o.one = routeOne, o.chans[first]
		} else {
			o.route = routePerRecord
			o.part, err = partition.New(edge.ShipStrategy, cfg)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("runtime: edge %s -> %s: %w", edge.From, edge.To, err)
	}
	return o, nil
}

// edgeSeed is the job's seed mixed with the edge's ends and input, so
// that every edge has a stream of its own and the same job draws the
// same streams on every run.
func edgeSeed(seed int64, edge *plan.Edge) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d", edge.From, edge.SideOutput, edge.To, edge.InputIndex)
	return seed ^ int64(h.Sum64())
}
