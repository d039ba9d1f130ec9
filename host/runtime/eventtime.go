package runtime

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/watermark"
)

// This file is event time in the engine (issue #27): watermarks generated
// at the sources, carried on the queues as messages in order with the
// data (msgWatermark, msgStatus), combined at each gate by a valve
// (host/watermark, Flink's StatusWatermarkValve) and handed down each
// chain. None of it runs in a job whose sources have no watermark
// strategy, except the end of event time each WatermarkOperator gets when
// its input ends (closeChain), and nothing here runs per record: a source
// with a strategy reads each batch's timestamps once, after emitting it.

// eventTimeOn reports whether some source of the job generates
// watermarks (STREAMING only: BATCH uses none while it runs).
func (e *Execution) eventTimeOn() bool {
	if e.job.Mode == pipeline.Batch || e.job.Pipeline == nil {
		return false
	}
	for _, op := range e.job.Operators {
		if op.Kind == pipeline.KindSource && e.job.Pipeline.WatermarksOf(op.Spec).Active() {
			return true
		}
	}
	return false
}

// now is the engine's processing time: Deps.Now, else the wall clock.
func (e *Execution) now() time.Time {
	if e.deps.Now != nil {
		return e.deps.Now()
	}
	return time.Now()
}

// sourceTime is a source subtask's watermark generation.
type sourceTime struct {
	strat    *watermark.Strategy
	gen      *watermark.Generator
	splits   *watermark.Splits // per-split generation, once the source registered a split
	interval time.Duration
	next     time.Time     // the next periodic emit is due then
	sig      chan struct{} // wakes a waiting source for a periodic emit
	epoch    time.Time     // the generator's time zero
	w        abi.Writer    // a batch restamped from a field
	ends     []byte
	pos      int64 // records seen, for errors
}

// newSourceTime is the generation of source subtask s, nil without an
// active strategy.
func (s *subtask) newSourceTime() *sourceTime {
	e := s.e
	if !e.et {
		return nil
	}
	w := e.job.Pipeline.WatermarksOf(s.ops[0].spec.Spec)
	if !w.Active() {
		return nil
	}
	now := e.now()
	t := &sourceTime{strat: &w.Strategy, gen: watermark.NewGenerator(&w.Strategy), interval: w.Interval, next: now.Add(w.Interval), epoch: now}
	if s.ck != nil {
		t.sig = s.ck.mail.signal // one mailbox: the source waits on one channel
	} else {
		t.sig = make(chan struct{}, 1)
	}
	return t
}

// timedOut is the Collector of a source with a watermark strategy: it
// stamps records from their time field when the strategy says so, hands
// each batch on, then lets the generator see its timestamps (so a
// watermark never overtakes the records it accounts for) and emits a
// watermark when one is due. It is a SourceMailbox: a waiting source that
// selects on Pending gets its periodic emits (and idleness) on time.
type timedOut struct {
	next Collector // the chain's collector, or sourceOut when checkpointing
	s    *subtask
	t    *sourceTime
}

// SplitCollector is the collector a source that reads several splits
// (a Kafka source's partitions) gets when it runs with a watermark
// strategy: it generates the watermarks per split and combines them, as
// Flink's SourceOperator does with per-split outputs (KafkaSource's
// per-partition watermarks). The source registers each split when it is
// assigned (AddSplit), emits each split's records with EmitSplit, and
// releases a split it finished (ReleaseSplit); the subtask's watermark is
// the minimum over its splits that are not idle (host/watermark.Splits).
// Records emitted with Emit count for the subtask's own generator, which
// also makes the periodic emits while no split is registered (a subtask
// given no partitions is idle after idleness). All on Run's goroutine.
type SplitCollector interface {
	Collector
	AddSplit(split string)
	ReleaseSplit(split string)
	EmitSplit(split string, port int, buf []byte, count int) error
}

var (
	_ EndsCollector  = (*timedOut)(nil)
	_ SourceMailbox  = (*timedOut)(nil)
	_ SplitCollector = (*timedOut)(nil)
)

func (o *timedOut) AddSplit(split string) {
	if o.t.splits == nil {
		o.t.splits = watermark.NewSplits(o.t.strat, o.t.gen)
	}
	o.t.splits.Add(split)
}

func (o *timedOut) ReleaseSplit(split string) {
	if o.t.splits != nil {
		o.t.splits.Release(split)
	}
}

func (o *timedOut) EmitSplit(split string, port int, buf []byte, count int) error {
	o.AddSplit(split)
	return o.emit(split, port, buf, count, nil)
}

func (o *timedOut) Emit(port int, buf []byte, count int) error {
	return o.EmitEnds(port, buf, count, nil)
}

func (o *timedOut) EmitEnds(port int, buf []byte, count int, ends []byte) error {
	return o.emit("", port, buf, count, ends)
}

// emit hands a batch on, then gives its highest timestamp to split's
// generator ("": the subtask's).
func (o *timedOut) emit(split string, port int, buf []byte, count int, ends []byte) error {
	t := o.t
	if port != 0 || count <= 0 {
		return EmitWithEnds(o.next, port, buf, count, ends)
	}
	var err error
	if t.strat.Field != "" {
		read := count
		buf, count, ends, err = o.stamp(buf, count)
		// positions count the records read, rejected ones too
		t.pos += int64(read - count)
		if err != nil {
			return err
		}
		if count == 0 {
			return o.tick()
		}
	}
	if err := EmitWithEnds(o.next, port, buf, count, ends); err != nil {
		return err
	}
	maxTs := watermark.Min // a record without a time counts as Long.MIN_VALUE, as Flink's
	rd := abi.NewReader(buf, count)
	if len(ends) == 4*count {
		rd = abi.NewReaderEnds(buf, count, ends)
	}
	for rd.Next() {
		if r := rd.Current(); r.HasTime && r.Time > maxTs {
			maxTs = r.Time
		}
	}
	t.pos += int64(count)
	// the batch's highest: the same max, one activity
	if split != "" {
		t.splits.OnEvent(split, maxTs)
	} else {
		t.gen.OnEvent(maxTs)
	}
	return o.tick()
}

// batchTimestamps is the timestamp assigner of a BATCH source whose
// watermark strategy takes each record's time from a field: BATCH runs no
// watermarks (the end of input is the end of event time), but Flink's
// BATCH execution still runs the strategy's TimestampAssigner, so windows
// and the event-time sort see the field's times. Nil otherwise.
func (s *subtask) batchTimestamps() *sourceTime {
	e := s.e
	if e.job.Mode != pipeline.Batch || e.job.Pipeline == nil {
		return nil
	}
	w := e.job.Pipeline.WatermarksOf(s.ops[0].spec.Spec)
	if w == nil || w.Invalid || w.Strategy.Field == "" {
		return nil
	}
	return &sourceTime{strat: &w.Strategy}
}

// stampedOut is the Collector of a BATCH source with a timestamp field
// (batchTimestamps): each batch restamped from the field, no watermarks.
type stampedOut struct{ o timedOut }

var (
	_ EndsCollector = (*stampedOut)(nil)
	_ SourceMailbox = (*stampedOut)(nil)
)

// Pending and Yield pass the mailbox of the collector under it (a
// checkpointing source's), if it has one: a nil channel is never ready.
func (c *stampedOut) Pending() <-chan struct{} {
	if mb, ok := c.o.next.(SourceMailbox); ok {
		return mb.Pending()
	}
	return nil
}

func (c *stampedOut) Yield() error {
	if mb, ok := c.o.next.(SourceMailbox); ok {
		return mb.Yield()
	}
	return nil
}

func (c *stampedOut) Emit(port int, buf []byte, count int) error {
	return c.EmitEnds(port, buf, count, nil)
}

func (c *stampedOut) EmitEnds(port int, buf []byte, count int, ends []byte) error {
	if port != 0 || count <= 0 {
		return EmitWithEnds(c.o.next, port, buf, count, ends)
	}
	buf, n, ends, err := c.o.stamp(buf, count)
	c.o.t.pos += int64(count)
	if err != nil || n == 0 {
		return err
	}
	return EmitWithEnds(c.o.next, port, buf, n, ends)
}

// stamp rewrites each record's event time from its time field; a record
// whose field is missing or unreadable goes to the source's on-error.
func (o *timedOut) stamp(buf []byte, count int) ([]byte, int, []byte, error) {
	t, co := o.t, o.s.ops[0]
	t.w.Reset()
	t.ends = t.ends[:0]
	rd := abi.NewReader(buf, count)
	pos := t.pos
	for rd.Next() {
		pos++
		r := rd.Current()
		ts, err := fieldTime(r.Value, t.strat.Field, t.strat.Format)
		if err != nil {
			if rerr := co.reject(&RecordFailure{Record: r.Raw, Position: pos, Err: fmt.Errorf("record %d: %w", pos, err)}); rerr != nil {
				return nil, 0, nil, co.fail(rerr)
			}
			continue
		}
		t.w.Append(ts, true, r.Key, r.Value)
		t.ends = appendEnd(t.ends, len(t.w.Buf))
	}
	if err := rd.Err(); err != nil {
		return nil, 0, nil, co.fail(err)
	}
	return t.w.Buf, t.w.Count, t.ends, nil
}

func appendEnd(b []byte, end int) []byte {
	return append(b, byte(end), byte(end>>8), byte(end>>16), byte(end>>24))
}

// fieldTime reads the event time of a record from its value's top-level
// field: an integer of epoch milliseconds, or an RFC 3339 text.
func fieldTime(value []byte, field, format string) (int64, error) {
	raw, ok, err := abi.MapField(value, field)
	switch {
	case err != nil:
		return 0, fmt.Errorf("the timestamp field %q cannot be read: the value is not a map (%v)", field, err)
	case !ok:
		return 0, fmt.Errorf("the record has no timestamp field %q", field)
	}
	if format == watermark.RFC3339 {
		s, err := abi.ReadStr(raw)
		if err != nil {
			return 0, fmt.Errorf("the timestamp field %q must be an RFC 3339 text, not %s", field, abi.TypeOf(raw))
		}
		tm, err := time.Parse(time.RFC3339Nano, string(s))
		if err != nil {
			return 0, fmt.Errorf("the timestamp field %q is not an RFC 3339 time: %q", field, s)
		}
		return tm.UnixMilli(), nil
	}
	v, err := abi.ReadInt(raw)
	if err != nil {
		return 0, fmt.Errorf("the timestamp field %q must be an integer of epoch milliseconds, not %s", field, abi.TypeOf(raw))
	}
	return v, nil
}

// Pending is ready when the source has mail or a periodic emit is due.
func (o *timedOut) Pending() <-chan struct{} { return o.t.sig }

// Yield does the source's mail (a barrier) and a due periodic emit.
func (o *timedOut) Yield() error {
	if mb, ok := o.next.(SourceMailbox); ok {
		if err := mb.Yield(); err != nil {
			return err
		}
	} else {
		select {
		case <-o.t.sig:
		default:
		}
	}
	return o.tick()
}

// tick makes the periodic emit when it is due.
func (o *timedOut) tick() error {
	t := o.t
	now := o.s.e.now()
	if now.Before(t.next) {
		return nil
	}
	t.next = now.Add(t.interval)
	if t.splits != nil && t.splits.Len() > 0 {
		return o.s.emitGenerated(t.splits.OnPeriodicEmit(now.Sub(t.epoch)))
	}
	return o.s.emitGenerated(t.gen.OnPeriodicEmit(now.Sub(t.epoch)))
}

// emitGenerated hands what the generator emitted down the source's chain.
func (s *subtask) emitGenerated(em watermark.Emit) error {
	head := s.ops[0]
	if em.Active {
		if err := head.status(false); err != nil {
			return err
		}
	}
	if em.HasWatermark {
		if err := head.watermark(em.Watermark); err != nil {
			return err
		}
	}
	if em.Idle {
		return head.status(true)
	}
	return nil
}

// watermark hands wm to the operator, then to what follows it: chained
// operators in turn, and every channel of every network output. It is
// never called with a watermark lower than one the operator saw (the
// valve and the generator never go backwards); a repeated one stops here.
func (o *chainOp) watermark(wm int64) error {
	if wm <= o.wmIn.Load() {
		return nil
	}
	o.wmIn.Store(wm)
	if w, ok := o.op.(WatermarkOperator); ok {
		if err := w.ProcessWatermark(wm, o.out); err != nil {
			return o.fail(err)
		}
	}
	o.wmOut.Store(wm)
	for _, port := range o.out.ports {
		for _, t := range port {
			var err error
			if t.op != nil {
				err = t.op.watermark(wm)
			} else if err = t.net.sendControl(message{kind: msgWatermark, wm: wm}); err != nil {
				err = o.fail(err)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// status hands an idle (or active again) status down the chain to every
// network output: operators do not see it, as in Flink.
func (o *chainOp) status(idle bool) error {
	for _, port := range o.out.ports {
		for _, t := range port {
			var err error
			if t.op != nil {
				err = t.op.status(idle)
			} else if err = t.net.sendControl(message{kind: msgStatus, idle: idle}); err != nil {
				err = o.fail(err)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// endWatermark gives operator o the end of event time when its input
// ended cleanly, before its Close: only o, whose Close may still emit into
// the operators after it; they get it in their turn.
func (o *chainOp) endWatermark() error {
	if o.wmIn.Load() == MaxWatermark {
		return nil
	}
	o.wmIn.Store(MaxWatermark)
	if w, ok := o.op.(WatermarkOperator); ok {
		if err := w.ProcessWatermark(MaxWatermark, o.out); err != nil {
			return o.fail(err)
		}
	}
	o.wmOut.Store(MaxWatermark)
	return nil
}

// stoppedAtSavepoint reports whether the subtask took the barrier of a
// stop-with-savepoint: what ends after it is not the end of the input,
// and no end of event time follows (Flink's stop-with-savepoint without
// --drain does not advance to the end of event time, or every window
// would fire before the job resumes from the savepoint and fire again).
func (s *subtask) stoppedAtSavepoint() bool { return s.ck != nil && s.ck.stopID != 0 }

// endOutputs sends the end of event time on every network output before
// its end, once the whole chain closed.
func (s *subtask) endOutputs() error {
	if !s.e.et || s.stoppedAtSavepoint() {
		return nil
	}
	for _, o := range s.outs {
		if err := o.sendControl(message{kind: msgWatermark, wm: MaxWatermark}); err != nil {
			return err
		}
	}
	return nil
}

// inputValves is a subtask's event time over its input channels: one
// valve per input of its head operator, over that input's channels (Flink's
// StatusWatermarkValve per input of a StreamTwoInputProcessor), and, for a
// two-input operator, the combination of both inputs' outputs (Flink's
// AbstractStreamOperator.processWatermark1/2 and processWatermarkStatus1/2):
// min(input 1, input 2) over the inputs that are not idle.
type inputValves struct {
	valves   []*watermark.Valve // per input
	local    []int              // per gate channel: its index at its input's valve
	input    []int              // per gate channel: its input
	combined *watermark.Combined
}

func newInputValves(inputs []int) *inputValves {
	iv := &inputValves{local: make([]int, len(inputs)), input: inputs}
	var count []int
	for c, in := range inputs {
		for len(count) <= in {
			count = append(count, 0)
		}
		iv.local[c] = count[in]
		count[in]++
	}
	for _, n := range count {
		iv.valves = append(iv.valves, watermark.NewValve(n))
	}
	if len(iv.valves) > 1 {
		iv.combined = watermark.NewCombined(len(iv.valves))
	}
	return iv
}

// watermark feeds channel c's watermark; status its status. Each returns
// what the head operator gets, in order.
func (iv *inputValves) watermark(wm int64, c int) []watermark.Output {
	return iv.through(c, iv.valves[iv.input[c]].InputWatermark(wm, iv.local[c]))
}

func (iv *inputValves) status(idle bool, c int) []watermark.Output {
	return iv.through(c, iv.valves[iv.input[c]].InputStatus(idle, iv.local[c]))
}

// through passes a valve's output on: as it is for a one-input operator,
// else through the combination, the watermark first, then the status.
func (iv *inputValves) through(c int, out watermark.Output) []watermark.Output {
	if iv.combined == nil {
		return []watermark.Output{out}
	}
	in := iv.input[c]
	var res []watermark.Output
	if out.HasWatermark {
		res = append(res, iv.combined.InputWatermark(out.Watermark, in))
	}
	if out.Idle || out.Active {
		res = append(res, iv.combined.InputStatus(out.Idle, in))
	}
	return res
}

// inputTime feeds a watermark, status or end message of channel c to the
// subtask's valves and what they let through to the chain's head.
func (s *subtask) inputTime(m message) error {
	v := s.valve
	if v == nil {
		return nil
	}
	var outs []watermark.Output
	switch m.kind {
	case msgWatermark:
		outs = v.watermark(m.wm, int(m.channel))
	case msgStatus:
		outs = v.status(m.idle, int(m.channel))
	case msgEnd:
		if s.stoppedAtSavepoint() {
			return nil // the job stops to resume: its input did not end
		}
		// an ended channel holds nothing back: active, at the end of time
		outs = append(v.status(false, int(m.channel)), v.watermark(MaxWatermark, int(m.channel))...)
	}
	for _, out := range outs {
		if err := s.valveOut(out); err != nil {
			return err
		}
	}
	return nil
}

func (s *subtask) valveOut(out watermark.Output) error {
	head := s.ops[0]
	if out.HasWatermark {
		if err := head.watermark(out.Watermark); err != nil {
			return err
		}
	}
	if out.Idle || out.Active {
		return head.status(out.Idle)
	}
	return nil
}

// watermarkLoop wakes every source subtask with a watermark strategy at
// its interval, so that one waiting for input (a rate, a poll) makes its
// periodic emits and notices its idleness. The emits themselves read
// Deps.Now: a test's clock decides when they are due.
func (e *Execution) watermarkLoop(every time.Duration, sources []*subtask) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			for _, s := range sources {
				select {
				case s.time.sig <- struct{}{}:
				default:
				}
			}
		case <-e.ctx.Done():
			return
		}
	}
}

// deferredWatermark is the end of event time a BATCH wrapper (sorted or
// held input) owes its operator: it holds its input until Close, so the
// watermark waits too.
type deferredWatermark struct {
	wm  int64
	has bool
}

func (d *deferredWatermark) hold(wm int64) { d.wm, d.has = max(d.wm, wm), true }

// give hands the held watermark to inner, when it takes watermarks.
func (d *deferredWatermark) give(inner Operator, out Collector) error {
	w, ok := inner.(WatermarkOperator)
	if !ok || !d.has {
		return nil
	}
	d.has = false
	return w.ProcessWatermark(d.wm, out)
}

// watermarkRoom is the room a gate keeps per channel for watermark and
// status messages beyond its buffers: a source sends at most one per
// interval, far slower than a consumer takes them; past it a send waits.
const watermarkRoom = 4

// timedSources are the source subtasks with a watermark strategy, and the
// shortest of their intervals.
func (e *Execution) timedSources() (time.Duration, []*subtask) {
	var every time.Duration
	var out []*subtask
	for _, sts := range e.subtasks {
		for _, s := range sts {
			if s.time != nil {
				out = append(out, s)
				if every == 0 || s.time.interval < every {
					every = s.time.interval
				}
			}
		}
	}
	return every, out
}

var (
	_ WatermarkOperator = (*sortedInput)(nil)
	_ WatermarkOperator = (*heldInput)(nil)
)
