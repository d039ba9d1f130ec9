package runtime

import (
	"sync/atomic"

	"github.com/sluicehq/sluice/host/plan"
)

// chainOp is one operator of a chain in one subtask.
type chainOp struct {
	spec    *plan.Operator
	op      Operator // nil for a source (the subtask's source runs it)
	out     *collector
	metrics *opCounters
	st      *subtask
	opened  bool
	closed  bool
	policy  ErrorPolicy  // the operator's on-error
	dead    []byte       // scratch for a dead letter
	logs    atomic.Value // GuestLog of a plugin operator, read by Snapshot
	store   StateBackend // its keyed state; nil when not keyed
	// state is the keyed state's size for Snapshot (state_size.go);
	// hasState says it has been measured
	state    stateGauge
	hasState atomic.Bool
	gauges   atomic.Value // Gauges of a source or sink that has them, read by Snapshot
	// wmIn and wmOut are the operator's current input and output
	// watermark (Flink's currentInputWatermark, currentOutputWatermark),
	// MinWatermark before the first.
	wmIn, wmOut atomic.Int64
}

// gaugesNow are the connector's gauges, nil when it has none.
func (o *chainOp) gaugesNow() []Gauge {
	if g, ok := o.gauges.Load().(Gauges); ok {
		return g.Gauges()
	}
	return nil
}

// logDropped is the guest log lines the operator dropped, 0 for built-ins.
func (o *chainOp) logDropped() int64 {
	if gl, ok := o.logs.Load().(GuestLog); ok {
		return gl.LogLinesDropped()
	}
	return 0
}

// target is where one output edge of an operator leads: the next operator
// of the chain (a function call) or a network output.
type target struct {
	op    *chainOp // chained: call op.Process(input, ...)
	input int
	net   *edgeOut // not chained
}

// collector is an operator's Collector: port p fans out to ports[p]. A
// port without consumers (an unconsumed side output, or -1) drops what is
// emitted there, as Flink drops side outputs nobody reads.
type collector struct {
	owner *chainOp
	ports [][]target
}

// Emit implements Collector.
func (c *collector) Emit(port int, buf []byte, count int) error {
	return c.EmitEnds(port, buf, count, nil)
}

// EmitEnds implements EndsCollector: network outputs get the ends (a HASH
// edge then reads only each record's head), chained operators the batch.
func (c *collector) EmitEnds(port int, buf []byte, count int, ends []byte) error {
	if count <= 0 || port < 0 || port >= len(c.ports) || len(c.ports[port]) == 0 {
		return nil
	}
	m := c.owner.metrics
	m.recordsOut.add(int64(count))
	m.bytesOut.add(int64(len(buf)))
	for _, t := range c.ports[port] {
		var err error
		if t.op != nil {
			err = t.op.process(t.input, buf, count)
		} else if err = t.net.emit(buf, count, ends); err != nil {
			err = c.owner.fail(err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// process runs a batch through the operator, counting it.
func (o *chainOp) process(input int, buf []byte, count int) error {
	o.metrics.recordsIn.add(int64(count))
	o.metrics.bytesIn.add(int64(len(buf)))
	if err := o.op.Process(input, buf, count, o.out); err != nil {
		return o.fail(err)
	}
	if o.store != nil {
		o.measureState(false)
	}
	return nil
}

// splitProcessor is a built-in operator that also takes a batch already
// split into its records (batch.spans), saving it the parse.
type splitProcessor interface {
	processSplit(input int, buf []byte, spans []span, out Collector) error
}

// processBatch runs a batch from the network through the operator, split
// when the batch and the operator allow it.
func (o *chainOp) processBatch(input int, b *batch) error {
	sp, ok := o.op.(splitProcessor)
	spans := b.split()
	if !ok || spans == nil {
		return o.process(input, b.data, b.count)
	}
	o.metrics.recordsIn.add(int64(b.count))
	o.metrics.bytesIn.add(int64(len(b.data)))
	if err := sp.processSplit(input, b.data, spans, o.out); err != nil {
		return o.fail(err)
	}
	if o.store != nil {
		o.measureState(false)
	}
	return nil
}

// fail records err as this operator's failure unless an operator further
// down the chain failed first (its error travels back up through the
// Process calls of the operators before it, which may wrap or flatten it:
// the subtask reports the innermost cause).
func (o *chainOp) fail(err error) error {
	st := o.st
	if st.err == nil {
		if err == errStopped {
			return err
		}
		st.err = opErr(o.spec.ID, st.index, st.parallelism(), err)
	}
	return st.err
}

// portsOf maps the output edges of op to ports: 0 is the main output, each
// side-output tag read by some edge gets the next port (in edge order).
func portsOf(op *plan.Operator) (tags map[string]int, n int) {
	tags = map[string]int{"": 0}
	n = 1
	for _, e := range op.Outputs {
		if _, ok := tags[e.SideOutput]; !ok {
			tags[e.SideOutput] = n
			n++
		}
	}
	return tags, n
}
