package runtime

import (
	"errors"
	"fmt"
	"maps"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/partition"
)

// makeOperator creates the instance of co for this subtask: a source or
// sink from the connectors, a built-in aggregation, or a plugin operator
// (a keyed one of either wrapped for sorted input in BATCH mode).
func (s *subtask) makeOperator(co *chainOp) error {
	e, spec := s.e, co.spec
	p := spec.Parallelism
	batchMode := e.job.Mode == pipeline.Batch
	switch spec.Kind {
	case pipeline.KindSource:
		src, err := e.deps.Connectors.Source(spec.Spec, s.index, p)
		if err != nil {
			return err
		}
		s.source = src
		if g, ok := src.(Gauges); ok {
			co.gauges.Store(g)
		}
	case pipeline.KindSink:
		op, err := e.deps.Connectors.Sink(spec.Spec, s.index, p)
		if err != nil {
			return err
		}
		co.op = op
		if g, ok := op.(Gauges); ok {
			co.gauges.Store(g)
		}
	case pipeline.KindSum, pipeline.KindMin, pipeline.KindMax, pipeline.KindMinBy, pipeline.KindMaxBy, pipeline.KindCount:
		var keyFields []string
		if len(spec.Inputs) > 0 {
			keyFields = spec.Inputs[0].KeyFields
		}
		if spec.Spec.Window != nil { // a window with the aggregation as its function (window.go)
			w, err := newWindowOp(spec.Spec, keyFields, e.opts.BatchSize, nil)
			if err != nil {
				return fmt.Errorf("window: %w", err)
			}
			co.op = w
			co.gauges.Store(w)
			if batchMode && !spec.Spec.Window.All { // key by key, in event-time order, then the end of time
				s := newSortedInput(w, spec.Kind, e.opts.BatchSize)
				s.window = true
				co.op = s
			}
			break
		}
		agg := newAggregate(spec.Kind, spec.Spec.Field, keyFields, e.opts.BatchSize)
		agg.last = spec.Spec.Last
		co.op = agg
		if batchMode { // key by key, each key's records in time order: the first record is the earliest
			co.op = newSortedInput(co.op, spec.Kind, e.opts.BatchSize)
		}
	default:
		if e.deps.Plugins == nil {
			return fmt.Errorf("%s plugin %q: the host has no plugin runtime", spec.Kind, spec.Spec.Plugin)
		}
		op, err := e.deps.Plugins.Operator(spec.ID, spec.Spec.Plugin, s.index)
		if err != nil {
			return err
		}
		if op == nil {
			return fmt.Errorf("%s plugin %q: no operator returned", spec.Kind, spec.Spec.Plugin)
		}
		if gl, ok := op.(GuestLog); ok {
			co.logs.Store(gl)
		}
		if spec.Spec.Window != nil { // a window with the plugin as its function (window_fn.go)
			w, err := newWindowOp(spec.Spec, nil, e.opts.BatchSize, op)
			if err != nil {
				return fmt.Errorf("window: %w", err)
			}
			co.op = w
			co.gauges.Store(w)
			if batchMode && !spec.Spec.Window.All {
				s := newSortedInput(w, spec.Kind, e.opts.BatchSize)
				s.window = true
				co.op = s
			}
			break
		}
		if batchMode && spec.Keyed {
			op = newSortedInput(op, spec.Kind, e.opts.BatchSize)
		}
		co.op = op
	}
	if _, sorted := co.op.(*sortedInput); !sorted && co.op != nil && blockingInput(spec.Inputs) {
		co.op = newHeldInput(co.op)
	}
	return nil
}

// openContext is what co learns when it opens.
func (s *subtask) openContext(co *chainOp) (*OpenContext, error) {
	spec := co.spec
	ctx := &OpenContext{
		Operator:       spec.ID,
		Subtask:        s.index,
		Parallelism:    spec.Parallelism,
		MaxParallelism: spec.MaxParallelism,
		Config:         s.config(spec),
		OnError:        co.policy,
		Reject:         co.reject,
		Kind:           spec.Kind,
	}
	if spec.Keyed || (spec.Spec != nil && spec.Spec.Window != nil) { // a window-all keeps keyed state under one key
		start, end := partition.KeyGroupRange(spec.MaxParallelism, spec.Parallelism, s.index)
		if s.index < len(spec.KeyGroups) {
			start, end = spec.KeyGroups[s.index].Start, spec.KeyGroups[s.index].End
		}
		ctx.KeyGroupStart, ctx.KeyGroupEnd = start, end
		st, err := s.openState(spec, start, end)
		if err != nil {
			return nil, err
		}
		if !spec.Kind.UsesPlugin() { // a built-in's cells, on a backend that keeps copies
			if cb := newCellBackend(st); cb != nil {
				st = cb
			}
		}
		ctx.State = st
		co.store = st
	}
	tags, _ := portsOf(spec)
	ctx.Port = func(tag string) int {
		if p, ok := tags[tag]; ok {
			return p
		}
		return -1
	}
	return ctx, nil
}

// openState opens the keyed state of spec's subtask over key groups
// [start, end] on the operator's backend (plan.Operator.State): the heap,
// held to the state-memory limit, or one Deps.StateBackends opens.
func (s *subtask) openState(spec *plan.Operator, start, end int) (StateBackend, error) {
	switch b := spec.State.Backend; b {
	case "", pipeline.BackendHeap:
		st := NewKeyedStore(spec.MaxParallelism, start, end)
		st.SetLimit(s.e.opts.StateBytes)
		st.SetTracking(s.e.ckpt != nil && !s.e.opts.FullCheckpoints)
		return st, nil
	default:
		if s.e.deps.StateBackends == nil {
			return nil, fmt.Errorf("keyed state on the %s backend: the host has none", b)
		}
		return s.e.deps.StateBackends.Open(BackendRequest{
			Job: s.e.job.Name, Operator: spec.ID, Subtask: s.index, Parallelism: spec.Parallelism, MaxParallelism: spec.MaxParallelism,
			Start: start, End: end, State: spec.State,
		})
	}
}

// config is a plugin operator's configuration: the plugin's config from
// the plugins: section, overridden key by key by the operator's own.
func (s *subtask) config(spec *plan.Operator) map[string]any {
	own := spec.Spec.Config
	p := s.e.job.Pipeline
	if p == nil || spec.Spec.Plugin == "" || p.Plugins[spec.Spec.Plugin] == nil || len(p.Plugins[spec.Spec.Plugin].Config) == 0 {
		return own
	}
	merged := maps.Clone(p.Plugins[spec.Spec.Plugin].Config)
	maps.Copy(merged, own)
	return merged
}

// makeEdgePlugins creates the key selector or custom partitioner instance
// of a network output.
func (s *subtask) makeEdgePlugins(o *edgeOut) error {
	e, edge := s.e, o.edge
	if o.route != routeCustom && (o.keys == nil || o.keys.plugin == "") {
		return nil
	}
	if e.deps.Plugins == nil {
		return errors.New("the edge needs a plugin but the host has no plugin runtime")
	}
	if o.route == routeHash {
		sel, err := e.deps.Plugins.KeySelector(o.keys.plugin, edge.From, edge.To, s.index)
		if err != nil {
			return fmt.Errorf("key-selector plugin %q of %q: %w", o.keys.plugin, edge.To, err)
		}
		o.keys.sel = sel
		return nil
	}
	cp, err := e.deps.Plugins.Partitioner(edge.CustomPlugin, edge.From, edge.To, s.index)
	if err != nil {
		return fmt.Errorf("custom partitioner plugin %q of %q: %w", edge.CustomPlugin, edge.To, err)
	}
	o.user = cp
	o.custom, err = partition.NewCustom(cp, len(o.chans))
	return err
}
