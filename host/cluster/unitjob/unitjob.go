// Package unitjob turns one unit of a cluster layout (host/cluster) into
// a job this instance runs by itself: the unit's stage as a pipeline of
// parallelism 1 whose crossing edges are Kafka sources and sinks of the
// internal topics the planner names, reading and writing exactly the
// partitions the unit owns. The engine runs it as any job, with its own
// checkpoints in the job's shared storage (<job>-s<stage>-<unit>), so a
// unit that moves to another instance is restored there from its last
// completed checkpoint.
//
// A unit job's operators are the stage's, each running as the subtask
// the unit stands for: subtask p of P (the unit count) in a partition
// stage, the unit's own subtask in a subtask stage, so a real source reads
// what that subtask of the whole job reads (a Kafka source: the
// partitions Flink's KafkaSourceEnumerator gives it) and a real sink
// writes as that subtask.
package unitjob

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/cluster"
	"github.com/sluicehq/sluice/host/connector/kafka"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// TransactionTimeout is the timeout of an internal topic's
// transactions: a killed unit's open transaction blocks read_committed
// readers of its partitions until its new owner aborts it on restore, or
// the broker does after this long.
const TransactionTimeout = time.Minute

// Job is one unit's job.
type Job struct {
	Unit string // its id, s<stage>/<index>
	// Name is the unit job's name, its checkpoints' folder under the
	// job's storage: <job>-s<stage>-<index>.
	Name     string
	Pipeline *pipeline.Pipeline
	// Topics are the internal topics it reads or writes, with their
	// partition counts.
	Topics map[string]int

	virtual map[string][2]int // operator id -> the (subtask, parallelism) it runs as
	sinks   map[string]kafka.SinkConfig
}

// Name is the unit job name of unit id of job: its checkpoints' folder.
func Name(job, unit string) string { return job + "-" + strings.ReplaceAll(unit, "/", "-") }

// Build makes the job of unit id of layout l, planned from p (g is p's
// plan). With exactlyOnce (the job checkpoints exactly-once), an internal
// topic is written in one Kafka transaction per checkpoint of the unit,
// committed when the checkpoint completes (the Kafka sink's exactly-once
// delivery, its transactional ids "sluice.<unit job>.out<edge>-0-<n>"),
// and read read_committed; otherwise written at-least-once. It refuses what it does not run yet: CUSTOM and GLOBAL edges
// across instances, a crossing edge inside one stage, and a subtask unit
// that runs more than one subtask of an operator (RESCALE).
func Build(p *pipeline.Pipeline, g *plan.JobGraph, l *cluster.Layout, id string, exactlyOnce bool) (*Job, error) {
	u, ok := l.Unit(id)
	if !ok {
		return nil, fmt.Errorf("cluster: job %s has no unit %s", l.Job, id)
	}
	st := l.Stages[u.Stage]
	in := map[string]bool{}
	for _, op := range st.Operators {
		in[op] = true
	}
	byID := map[string]*plan.Operator{}
	for _, op := range g.Operators {
		byID[op.ID] = op
	}
	specs := map[string]*pipeline.Operator{}
	for _, op := range p.Operators {
		specs[op.ID] = op
	}
	j := &Job{Unit: id, Name: Name(l.Job, id), Topics: map[string]int{}, virtual: map[string][2]int{}, sinks: map[string]kafka.SinkConfig{}}
	for _, op := range st.Operators {
		if st.UnitKind == "partition" {
			j.virtual[op] = [2]int{u.Index, len(st.Units)}
			continue
		}
		subs := u.Subtasks[op]
		if len(subs) != 1 {
			return nil, fmt.Errorf("cluster: unit %s runs subtasks %v of '%s': a unit of more than one subtask of an operator (a RESCALE edge) is not run across instances yet", id, subs, op)
		}
		j.virtual[op] = [2]int{subs[0], byID[op].Parallelism}
	}
	brokers := strings.Join(l.Brokers, ",")
	var sources, ops, sinks []*pipeline.Operator
	used := make([]bool, len(l.Edges))
	for _, name := range st.Operators {
		c := *specs[name]
		c.Parallelism, c.MaxParallelism = 1, byID[name].MaxParallelism
		c.Inputs = append([]pipeline.Input(nil), c.Inputs...)
		for i, inp := range c.Inputs {
			k := findEdge(l, used, inp.Operator, inp.SideOutput, name)
			if k < 0 {
				return nil, fmt.Errorf("cluster: unit %s: no edge %s -> %s in the layout", id, inp.Operator, name)
			}
			e := l.Edges[k]
			if !e.Crosses {
				continue
			}
			if err := supported(e); err != nil {
				return nil, err
			}
			part := 0 // broadcast: partition 0, in full
			if e.Assigned {
				part = j.virtual[name][0]
			}
			if part >= e.Partitions {
				return nil, fmt.Errorf("cluster: unit %s reads partition %d of %s, which has %d", id, part, e.Topic, e.Partitions)
			}
			src := fmt.Sprintf("cluster-in-%d", k)
			j.virtual[src] = [2]int{kafka.SplitOwner(e.Topic, int32(part), e.Partitions), e.Partitions}
			j.Topics[e.Topic] = e.Partitions
			opts := map[string]any{"brokers": brokers, "topics": []any{e.Topic}, "format": string(kafka.FormatMsgpack)}
			if exactlyOnce {
				opts["isolation"] = string(kafka.ReadCommitted)
			}
			sources = append(sources, &pipeline.Operator{ID: src, Kind: pipeline.KindSource, Parallelism: 1,
				MaxParallelism: byID[name].MaxParallelism,
				Source:         &pipeline.Connector{Type: "kafka", Options: opts}})
			c.Inputs[i] = pipeline.Input{Operator: src, Partition: inp.Partition}
		}
		ops = append(ops, &c)
	}
	for k, e := range l.Edges {
		if !e.Crosses || !in[e.From] {
			continue
		}
		if in[e.To] {
			return nil, fmt.Errorf("cluster: edge %s -> %s crosses instances inside stage %d: not run across instances yet", e.From, e.To, u.Stage)
		}
		if err := supported(e); err != nil {
			return nil, err
		}
		sink := fmt.Sprintf("cluster-out-%d", k)
		j.Topics[e.Topic] = e.Partitions
		op := &pipeline.Operator{ID: sink, Kind: pipeline.KindSink, Parallelism: 1,
			Inputs: []pipeline.Input{{Operator: e.From, SideOutput: e.SideOutput}},
			Sink:   &pipeline.Connector{Type: "kafka", Options: map[string]any{"brokers": brokers, "topic": e.Topic}}}
		cfg := kafka.SinkConfig{Operator: sink, Connection: kafka.Connection{Brokers: l.Brokers}, Topic: e.Topic,
			ValueFormat: kafka.FormatMsgpack, Delivery: kafka.DeliveryAtLeastOnce}
		if exactlyOnce {
			cfg.Delivery = kafka.DeliveryExactlyOnce
			cfg.TransactionalIDPrefix = fmt.Sprintf("sluice.%s.out%d", j.Name, k)
			cfg.TransactionTimeout = TransactionTimeout
		}
		if e.ShipStrategy == plan.Hash {
			down := specs[e.To]
			op.KeyBy = down.KeyBy
			op.MaxParallelism = byID[e.To].MaxParallelism
			cfg.KeyGroups = kafka.KeyGroupPartitioning{MaxParallelism: byID[e.To].MaxParallelism, Partitions: e.Partitions}
		}
		j.sinks[sink] = cfg
		j.virtual[sink] = [2]int{0, 1}
		sinks = append(sinks, op)
	}
	up := *p
	up.Name, up.Parallelism = j.Name, 1
	up.Operators = append(append(sources, ops...), sinks...)
	j.Pipeline = &up
	return j, nil
}

// findEdge is the first edge from -> to (of side output side) not taken
// yet.
func findEdge(l *cluster.Layout, used []bool, from, side, to string) int {
	for k, e := range l.Edges {
		if !used[k] && e.From == from && e.SideOutput == side && e.To == to {
			used[k] = true
			return k
		}
	}
	return -1
}

func supported(e cluster.Edge) error {
	switch e.ShipStrategy {
	case plan.Hash, plan.Rebalance, plan.Shuffle, plan.Broadcast:
		return nil
	}
	return fmt.Errorf("cluster: edge %s -> %s (%s) across instances is not run yet: only HASH, REBALANCE, SHUFFLE and BROADCAST are", e.From, e.To, e.ShipStrategy)
}

// Connectors builds the unit job's sources and sinks: the internal
// topics' sinks here, everything else by inner, each as the subtask the
// unit stands for.
func (j *Job) Connectors(inner runtime.Connectors) runtime.Connectors {
	return &connectors{inner: inner, job: j}
}

type connectors struct {
	inner runtime.Connectors
	job   *Job
}

func (c *connectors) Source(spec *pipeline.Operator, subtask, parallelism int) (runtime.Source, error) {
	v, ok := c.job.virtual[spec.ID]
	if !ok || subtask != 0 || parallelism != 1 {
		return nil, fmt.Errorf("cluster: unit %s: source %q subtask %d of %d is not the unit's", c.job.Unit, spec.ID, subtask, parallelism)
	}
	return c.inner.Source(spec, v[0], v[1])
}

func (c *connectors) Sink(spec *pipeline.Operator, subtask, parallelism int) (runtime.Operator, error) {
	v, ok := c.job.virtual[spec.ID]
	if !ok || subtask != 0 || parallelism != 1 {
		return nil, fmt.Errorf("cluster: unit %s: sink %q subtask %d of %d is not the unit's", c.job.Unit, spec.ID, subtask, parallelism)
	}
	if cfg, ok := c.job.sinks[spec.ID]; ok {
		s, err := kafka.NewSink(cfg, 0, 1)
		if err != nil {
			return nil, err
		}
		return internalSink{s}, nil
	}
	return c.inner.Sink(spec, v[0], v[1])
}

func (c *connectors) Bounded(spec *pipeline.Connector) bool { return c.inner.Bounded(spec) }

// internalSink is an internal topic's sink as the engine takes it (as
// host/connector's kafkaSink): at-least-once, flushed at each checkpoint.
type internalSink struct{ *kafka.Sink }

func (s internalSink) SnapshotState(id checkpoint.ID) (checkpoint.SubtaskState, error) {
	split, union, err := s.Sink.SnapshotState(id)
	return checkpoint.SubtaskState{Split: split, Union: union}, err
}

func (internalSink) NotifyCheckpointAborted(checkpoint.ID) {}
