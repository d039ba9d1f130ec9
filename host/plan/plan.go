package plan

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/partition"
)

// Options are the host's side of planning.
type Options struct {
	// Slots is the number of task slots the host offers; 0 means
	// unlimited. A job that needs more is refused.
	Slots int
	// Mode, when set, is the execution mode instead of the pipeline's
	// (Flink's -Dexecution.runtime-mode at submission), and ModeFrom says
	// who set it for the plan's mode reason ("--mode").
	Mode     pipeline.Mode
	ModeFrom string
	// StateBackend and StateDir are the host's default state backend of
	// keyed operators ("": heap) and folder for Pebble's databases; a
	// pipeline's state: overrides them.
	StateBackend string
	StateDir     string
}

// Plan turns a parsed pipeline into a job graph the way Flink's
// StreamingJobGraphGenerator and scheduler would: ship strategies, chains,
// slot sharing groups, slots, max parallelism and key-group ranges. It is
// pure: it reads no file (not even plugins), starts no goroutine and
// leaves p unchanged. Problems tied to a place in the file come back as
// pipeline.Errors, all at once.
func Plan(p *pipeline.Pipeline, opts Options) (*JobGraph, error) {
	pl := &planner{p: p, opts: opts, g: &JobGraph{Name: p.Name, Pipeline: p}, byID: map[string]*Operator{}}
	order, ok := pl.order()
	if !ok {
		return nil, pl.errs.Err()
	}
	pl.g.Mode, pl.g.ModeReason = pl.mode()
	for _, op := range order {
		pl.operator(op)
	}
	for _, op := range order {
		pl.inputs(op)
	}
	if len(pl.errs) > 0 {
		return nil, pl.errs.Err()
	}
	for _, e := range pl.g.Edges {
		pl.chain(e)
		// Flink's ALL_EXCHANGES_BLOCKING, the BATCH default: every edge
		// that is not chained is a BLOCKING result partition, FORWARD
		// included (StreamingJobGraphGenerator
		// .determineUndefinedResultPartitionType).
		e.Blocking = pl.g.Mode == pipeline.Batch && !e.Chained
	}
	pl.tasks()
	pl.slots(opts)
	pl.keyGroups()
	pl.hints()
	if err := pl.errs.Err(); err != nil {
		return nil, err
	}
	return pl.g, nil
}

type planner struct {
	p    *pipeline.Pipeline
	opts Options
	g    *JobGraph
	byID map[string]*Operator
	errs pipeline.Errors
}

func (pl *planner) errorf(pos pipeline.Pos, format string, args ...any) {
	pl.errs = append(pl.errs, &pipeline.Error{File: pl.p.File, Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// mode resolves the execution mode (flink-semantics.md §6): AUTOMATIC is
// BATCH when every source is bounded, else STREAMING; BATCH with an
// unbounded source is an error, but for one that ends with its input
// (stdin), which BATCH reads to the end (AUTOMATIC cannot know that it
// ends, so it streams). Boundedness is the connector's spec's.
func (pl *planner) mode() (pipeline.Mode, string) {
	var unbounded []*pipeline.Operator
	for _, op := range pl.p.Operators {
		if op.Kind == pipeline.KindSource && op.Source != nil && !op.Source.Bounded() {
			unbounded = append(unbounded, op)
		}
	}
	mode, from := pl.p.Mode, "set in the pipeline"
	if pl.opts.Mode != "" {
		mode, from = pl.opts.Mode, "set by "+pl.opts.ModeFrom
	}
	switch mode {
	case pipeline.Batch:
		for _, op := range unbounded {
			if op.Source.Boundedness() == spec.EndsWithInput {
				continue // asked for BATCH: read to the end of its input
			}
			by := ""
			if pl.opts.Mode != "" {
				by = " (" + from + ")"
			}
			pl.errorf(op.Source.Pos, "mode is batch%s but source '%s' is unbounded (%s): batch needs bounded sources", by, op.ID, op.Source.UnboundedWhy())
		}
		return pipeline.Batch, from
	case pipeline.Automatic:
		if len(unbounded) == 0 {
			return pipeline.Batch, "automatic: every source is bounded"
		}
		return pipeline.Streaming, fmt.Sprintf("automatic: source '%s' is unbounded", unbounded[0].ID)
	}
	if _, set := pl.p.KeyPos["mode"]; set || pl.opts.Mode != "" {
		return pipeline.Streaming, from
	}
	return pipeline.Streaming, "the default"
}

// operator plans one operator's parallelism, max parallelism and slot
// sharing group. op's inputs are planned already (topological order).
func (pl *planner) operator(spec *pipeline.Operator) {
	par := pl.p.ParallelismOf(spec) // a non-parallel source ignores the job's default, as Flink's fromElements
	// Flink: the operator's setMaxParallelism, else the job's
	// (ExecutionConfig), else the default computed from the parallelism.
	maxP := spec.MaxParallelism
	if maxP == 0 {
		maxP = pl.p.MaxParallelism
	}
	if maxP == 0 {
		maxP = partition.DefaultMaxParallelism(par)
	}
	if err := partition.ValidateParallelism(par, maxP); err != nil {
		pl.errorf(spec.Pos, "operator '%s': %s", spec.ID, strings.TrimPrefix(err.Error(), "partition: "))
	}
	op := &Operator{
		ID:               spec.ID,
		Kind:             spec.Kind,
		Parallelism:      par,
		MaxParallelism:   maxP,
		SlotSharingGroup: pl.slotSharingGroup(spec),
		Keyed:            spec.KeyBy != nil,
		Spec:             spec,
	}
	if op.Keyed {
		op.State = pl.state(spec)
	} else if spec.State != nil {
		pl.errorf(spec.State.Pos, "operator '%s': state: is for keyed operators, and '%s' has no key-by", spec.ID, spec.ID)
	}
	pl.byID[op.ID] = op
	pl.g.Operators = append(pl.g.Operators, op)
}

// slotSharingGroup is Flink's StreamGraphGenerator.determineSlotSharingGroup:
// the group set on the operator, else its inputs' group when they all
// share one, else "default".
func (pl *planner) slotSharingGroup(spec *pipeline.Operator) string {
	if spec.SlotSharingGroup != "" {
		return spec.SlotSharingGroup
	}
	group := ""
	for _, in := range spec.Inputs {
		g := pl.byID[in.Operator].SlotSharingGroup
		switch {
		case group == "":
			group = g
		case group != g:
			return DefaultSlotSharingGroup
		}
	}
	if group == "" {
		return DefaultSlotSharingGroup
	}
	return group
}

// DefaultSlotSharingGroup is the group of operators that name none and
// inherit none.
const DefaultSlotSharingGroup = "default"
