package plugin

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

// Operator adapts instances of a plugin to runtime.Operator for one
// subtask (map, filter, flat-map, process, reduce, co-map, co-process).
// The wasm instance is made in Open and replaced after a call poisons it.
type Operator struct {
	r      runner
	config map[string]any
	closed bool

	// the on-error (runtime.OpenContext): a failed batch is narrowed
	// down to its bad records when reject is set (see isolate.go)
	policy runtime.ErrorPolicy
	reject func(*runtime.RecordFailure) error
	seen   int64         // records processed, for positions in errors
	spans  []span        // scratch: the records of a failed batch
	index  []byte        // scratch: the batch index (abi.AppendIndex)
	kind   pipeline.Kind // as the pipeline uses it: holds the output's count (checkCount)
	// accept is checkCount of the call in run, whose input holds calling
	// records, as the runner's accept
	accept  func(*instance) error
	calling int
	// clock is the deterministic TTL clock when a state slot has a TTL
	// and the plugin has no real clock (statekinds_open.go); nil otherwise
	clock *eventClock
	// tm holds the timers and the clocks of a plugin that imports the
	// timer calls (timers.go); nil otherwise
	tm *timeEnv
}

var (
	_ runtime.Operator               = (*Operator)(nil)
	_ runtime.WatermarkOperator      = (*Operator)(nil)
	_ runtime.ProcessingTimeOperator = (*Operator)(nil)
)

// NewOperator returns an operator over m for operator id opID. config is
// used when the OpenContext carries none. Calls into the guest run under
// ctx (each with its own deadline).
func (m *Module) NewOperator(ctx context.Context, opID string, config map[string]any) *Operator {
	return &Operator{r: runner{m: m, ctx: ctx, who: target{operator: opID}, logDropped: new(atomic.Int64)}, config: config}
}

// LogLinesDropped is how many lines of guest stdout and stderr fell off
// the kept tails (runtime.GuestLog); safe from any goroutine.
func (o *Operator) LogLinesDropped() int64 { return o.r.logDropped.Load() }

// Open instantiates the plugin and calls sluice_open with the operator's
// config (a msgpack map), subtask, parallelism and max parallelism.
func (o *Operator) Open(oc *runtime.OpenContext) error {
	if oc.Operator != "" {
		o.r.who.operator = oc.Operator
	}
	o.r.who.subtask, o.r.who.parallelism = oc.Subtask, oc.Parallelism
	o.r.env = env{state: oc.State, port: oc.Port}
	o.policy, o.reject, o.kind = oc.OnError, oc.Reject, oc.Kind
	_, batched := oc.State.(runtime.CallBatcher)
	if oc.State != nil && (batched || o.reject != nil && o.policy != runtime.PolicyFail) {
		// good records of a failed batch run again: their state writes
		// must count once; a batching store applies each call's writes
		// at once, whatever the policy
		o.r.journal = newJournal(oc.State)
		o.r.env.state = o.r.journal
	}
	cfg := oc.Config
	if cfg == nil {
		cfg = o.config
	}
	cfg, err := o.openState(oc, cfg)
	if err != nil {
		return o.errorf(abi.ExportOpen, "%w", err)
	}
	if err := o.openTime(oc); err != nil {
		return o.errorf(abi.ExportOpen, "%w", err)
	}
	b, err := encodeConfig(cfg)
	if err != nil {
		return o.errorf(abi.ExportOpen, "%w", err)
	}
	if _, ok := o.r.m.bin.export(abi.ExportProcess); !ok {
		return o.errorf(abi.ExportOpen, "the plugin is a partitioner (it has no %s), not an operator", abi.ExportProcess)
	}
	return o.r.open(openArgs{config: b, subtask: int32(oc.Subtask), parallelism: int32(oc.Parallelism), maxParallelism: int32(oc.MaxParallelism)})
}

// Process writes the batch into the guest's buffer, calls sluice_process
// and hands the output to out only when the call succeeds.
func (o *Operator) Process(input int, batch []byte, count int, out runtime.Collector) error {
	if o.closed {
		return o.errorf(abi.ExportProcess, "the operator was %w", errClosed)
	}
	if !o.r.opened {
		return o.errorf(abi.ExportProcess, "the operator is not open")
	}
	if count == 0 && len(batch) == 0 {
		return nil
	}
	if count < 0 || count > 1<<31-1 {
		return o.errorf(abi.ExportProcess, "a batch count of %d", count)
	}
	defer func() { o.seen += int64(count) }()
	if o.clock != nil {
		o.clock.advance(batch, count)
	}
	in, err := o.run(input, batch, count)
	if err != nil {
		if o.isolatable(err) {
			return o.isolate(input, batch, count, out, err)
		}
		return err
	}
	if err := in.deliver(out); err != nil {
		return err
	}
	return o.fireProcessing(out) // the clock may have passed some: the deterministic one moved with the batch
}

// run calls sluice_process over count records of batch; the output stays
// in the instance. An output its kind does not allow fails the call before
// its keyed-state writes stand (they are undone, as for any failed call:
// the records are run again when the batch is narrowed to the bad one).
func (o *Operator) run(input int, batch []byte, count int) (*instance, error) {
	if o.accept == nil { // made once: a closure a call would allocate a batch
		o.accept = func(in *instance) error { return o.checkCount(in, o.calling) }
	}
	o.calling, o.r.accept = count, o.accept
	in, err := o.call(input, batch, count)
	o.r.accept = nil
	return in, err
}

// checkCount holds a call's output to the operator's kind, as Flink's
// function types hold theirs: a map (and a co-map) emits one record for
// each input record, a filter at most its input records. A plugin that
// emits any number is a flat-map or a process; one that said it was a map
// and emitted two or none for a record would change the job's counts
// without a word.
func (o *Operator) checkCount(in *instance, count int) error {
	emitted := 0
	for _, s := range in.c.emits {
		emitted += s.count
	}
	export := abi.ExportProcess
	switch {
	case (o.kind == pipeline.KindMap || o.kind == pipeline.KindCoMap) && emitted != count:
		return in.fail(export, fmt.Errorf("%w: a %s emits one record for each input record, and this call emitted %d for %d (a plugin that emits any number is a flat-map)",
			ErrMalformedOutput, o.kind, emitted, count))
	case o.kind == pipeline.KindFilter && emitted > count:
		return in.fail(export, fmt.Errorf("%w: a filter emits at most the records it is given, and this call emitted %d for %d (a plugin that emits more is a flat-map)",
			ErrMalformedOutput, emitted, count))
	}
	return nil
}

// call is run without the check of the output's count.
func (o *Operator) call(input int, batch []byte, count int) (*instance, error) {
	if in, err := o.r.get(); err == nil && in.has(expProcessIndexed) {
		// the guest takes a batch index (abi.ExportProcessIndexed); a batch
		// that cannot be indexed is malformed, and the guest's own scanner
		// answers it through sluice_process
		if o.index, err = abi.AppendIndex(o.index[:0], batch, count); err == nil {
			return o.r.callWith(in, expProcessIndexed, outRecords, batch, o.index, func(s []uint64, ptr, idx uint32) {
				s[0], s[1], s[2], s[3] = uint64(uint32(input)), uint64(ptr), uint64(len(batch)), uint64(count)
				s[4], s[5] = uint64(idx), uint64(len(o.index))
			})
		}
	}
	return o.r.call(expProcess, outRecords, batch, func(s []uint64, ptr uint32) {
		s[0], s[1], s[2], s[3] = uint64(uint32(input)), uint64(ptr), uint64(len(batch)), uint64(count)
	})
}

// Close calls sluice_close when the plugin exports it (a keyed reduce
// emits its final results there) and releases the instance. With a nil
// out (teardown after an error) it only releases.
func (o *Operator) Close(out runtime.Collector) error {
	if o.closed {
		return nil
	}
	o.closed = true
	defer o.r.drop()
	if out == nil || !o.r.opened {
		return nil
	}
	if err := o.endTimers(out); err != nil {
		return err
	}
	in, err := o.r.get()
	if err != nil {
		return err
	}
	if !in.has(expClose) {
		return nil
	}
	if _, err := in.invoke(expClose, outRecords); err != nil {
		return err
	}
	return in.deliver(out)
}

// Output returns the tails of the guest's stdout and stderr, escaped for
// showing (PrintableLog); a PluginError quotes its stderr tail.
func (o *Operator) Output() (stdout, stderr string) {
	stdout, stderr = o.r.output()
	return PrintableLog(stdout), PrintableLog(stderr)
}

func (o *Operator) errorf(export, format string, args ...any) error {
	return &PluginError{
		Plugin: o.r.m.name, Operator: o.r.who.operator, Subtask: o.r.who.subtask, Parallelism: o.r.who.parallelism,
		Export: export, Cause: fmt.Errorf(format, args...),
	}
}

// errClosed is returned by adapters used after Close.
var errClosed = errors.New("used after Close")
