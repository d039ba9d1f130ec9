package runtime

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/window"
)

// windowOp is a keyed window with a built-in aggregation as its window
// function, as Flink's WindowOperator runs keyBy(...).window(assigner)
// .sum(field) (and windowAll at parallelism 1): each record is assigned
// its windows (host/window), folded into each window's aggregate as it
// arrives (Flink's ReducingState with the aggregation's reduce), and a
// window fires on its trigger: the watermark reaching its max timestamp
// (event time), the clock reaching it (processing time), every count
// records (global, purging). Sessions merge by Flink's MergingWindowSet.
// A fired window emits its aggregate with the window's bounds in two
// fields, stamped with the window's max timestamp (Flink's
// TimestampedCollector).
//
// Allowed lateness keeps an event-time window until maxTimestamp +
// lateness: each record arriving for it meanwhile fires it again with
// its contents. A record whose every window is past that goes to side
// output late when an operator reads it, else it is dropped and counted
// (numLateRecordsDropped), as Flink's sideOutputLateData.
//
// Everything is keyed state in the subtask's KeyedStore, under the
// record key's key group (window_state.go), so it checkpoints and
// rescales with the key: the contents per (key, state window), the
// pending timers per (key, window, time), the merging window set per key
// and a global window's count. The timer queue in memory is an index of
// the timer cells, rebuilt from them on open.
type windowOp struct {
	assigner   window.Assigner
	lateness   int64
	all        bool // window-all: one key for every record
	startField string
	endField   string
	agg        *aggregate // the aggregation: its cell format, first and update
	clock      func() int64
	batchSize  int

	store  cellStore
	reject func(*RecordFailure) error
	late   int // port of side output late, -1 when nothing reads it

	wm      int64 // the input watermark
	procNow int64 // the processing time timers fired up to
	timers  timerQueue
	seq     uint64
	fired   bool // every window fired at the end of input

	// the window function when it is a plugin (window_fn.go): a reduce
	// or a process-window, with nil agg
	fn      Operator
	fnKind  pipeline.Kind
	fnName  string
	fnState *windowFnState
	groups  map[string]*fnGroup // a reduce's records waiting for their call, by cell key
	order   []string            // their cell keys, first seen first
	spare   []*fnGroup          // groups of earlier batches, for reuse
	fnIn    []byte
	fnOut   fnCollector

	dropped atomic.Int64 // numLateRecordsDropped
	w       abi.Writer
	lateW   abi.Writer
	wins    []window.Window
	kbuf    []byte
	vbuf    []byte
	ebuf    []byte
	seen    int64
}

// Slots of the window operator's keyed state.
const (
	slotContents = 0 // key ++ window: the aggregate cell
	slotTimers   = 1 // key ++ domain ++ time ++ window: empty
	slotMerging  = 2 // key: the merging window set (sessions)
	slotCount    = 3 // key ++ window: a global window's count so far
)

const (
	domainEvent      byte = 'e'
	domainProcessing byte = 'p'
)

// windowAllKey is the one key of a window-all: Flink's NullByteKeySelector.
var windowAllKey = []byte{0x00}

// newWindowOp makes the window of spec; fn is its function when that is
// a plugin (a reduce or a process-window), nil for a built-in
// aggregation.
func newWindowOp(spec *pipeline.Operator, keyFields []string, batchSize int, fn Operator) (*windowOp, error) {
	w := spec.Window
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	a := window.Assigner{Type: window.Type(w.Type), Size: ms(w.Size), Slide: ms(w.Slide), Offset: ms(w.Offset),
		Gap: ms(w.Gap), Count: w.Count, EventTime: w.Time == pipeline.TimeEvent}
	if w.Type == pipeline.WindowGlobal {
		a.Type = window.GlobalT
	}
	if err := a.Check(); err != nil {
		return nil, err
	}
	o := &windowOp{assigner: a, lateness: ms(w.AllowedLateness), all: w.All, startField: w.StartField, endField: w.EndField,
		batchSize: batchSize, clock: func() int64 { return time.Now().UnixMilli() },
		wm: MinWatermark, procNow: math.MinInt64}
	if fn != nil {
		o.fn, o.fnKind, o.fnName = fn, spec.Kind, spec.Plugin
		return o, nil
	}
	o.agg = newAggregate(spec.Kind, spec.Field, keyFields, batchSize)
	o.agg.last = spec.Last
	return o, nil
}

func (o *windowOp) Open(ctx *OpenContext) error {
	st, ok := ctx.State.(cellStore)
	if !ok {
		return errors.New("a window needs the host's keyed state")
	}
	o.store, o.reject, o.late = st, ctx.Reject, -1
	if ctx.Port != nil {
		o.late = ctx.Port(pipeline.LateTag)
	}
	if o.fn != nil {
		if err := o.openFn(ctx); err != nil {
			return err
		}
	}
	// the timers restored with the state
	start, end := st.KeyGroups()
	for kg := start; kg <= end; kg++ {
		st.Range(kg, slotTimers, func(k string, _ []byte) bool {
			n := len(k)
			ts := int64(binary.BigEndian.Uint64([]byte(k[n-24 : n-16])))
			o.seq++
			heap.Push(&o.timers, timerEntry{ts: ts, domain: k[n-25], kg: kg, key: k, seq: o.seq})
			return true
		})
	}
	return nil
}

// Gauges reports numLateRecordsDropped, as Flink's WindowOperator counts it.
func (o *windowOp) Gauges() []Gauge {
	return []Gauge{{Name: "numLateRecordsDropped", Value: float64(o.dropped.Load())}}
}

func (o *windowOp) Process(_ int, b []byte, count int, out Collector) error {
	if err := o.advanceProcessing(o.clock(), out); err != nil {
		return err
	}
	rd := abi.NewReader(b, count)
	for rd.Next() {
		o.seen++
		r := rd.Current()
		if err := o.record(r, out); err != nil {
			if err := o.bad(r, err); err != nil {
				return errors.Join(err, o.flush(out))
			}
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("window: input batch: %w", err)
	}
	if err := o.settle(); err != nil {
		return err
	}
	if err := o.advanceProcessing(o.procNow, out); err != nil { // timers already due
		return err
	}
	return o.flush(out)
}

// ProcessWatermark fires the event-time timers up to wm (Flink's
// InternalTimerServiceImpl.advanceWatermark), and the processing-time ones
// the clock passed.
func (o *windowOp) ProcessWatermark(wm int64, out Collector) error {
	if wm > o.wm {
		o.wm = wm
	}
	if err := o.advance(domainEvent, o.wm, out); err != nil {
		return err
	}
	if err := o.advanceProcessing(o.clock(), out); err != nil {
		return err
	}
	if wm == MaxWatermark {
		o.fired = true
	}
	return o.flush(out)
}

// Close ends the input: the watermark jumps to the end of time, so every
// event-time window fires once more than it had (BATCH, or a bounded
// stream), and every processing-time window fires with what it holds, as
// Flink's BATCH execution fires every timer at the end of input. A global
// window's partial count does not fire (Flink's count trigger).
func (o *windowOp) Close(out Collector) error {
	if o.fn != nil {
		defer o.fn.Close(nil) // its output is the windows': it only releases
	}
	if out == nil || o.store == nil {
		return nil
	}
	if err := o.settle(); err != nil {
		return err
	}
	if !o.fired {
		o.fired = true
		o.wm = MaxWatermark
		if err := o.advance(domainEvent, MaxWatermark, out); err != nil {
			return err
		}
	}
	if err := o.advance(domainProcessing, math.MaxInt64, out); err != nil {
		return err
	}
	return o.flush(out)
}

func (o *windowOp) advanceProcessing(now int64, out Collector) error {
	if o.assigner.EventTime || o.assigner.Type == window.GlobalT || now < o.procNow {
		return nil
	}
	o.procNow = now
	return o.advance(domainProcessing, now, out)
}

// advance fires the timers of domain up to t, earliest first.
func (o *windowOp) advance(domain byte, t int64, out Collector) error {
	var skipped []timerEntry
	defer func() {
		for _, e := range skipped {
			heap.Push(&o.timers, e)
		}
	}()
	for o.timers.Len() > 0 && o.timers[0].ts <= t {
		e := heap.Pop(&o.timers).(timerEntry)
		if e.domain != domain {
			skipped = append(skipped, e)
			continue
		}
		if o.store.lookup(slotTimers, []byte(e.key)) == nil {
			continue // deleted
		}
		o.store.deleteKG(e.kg, slotTimers, []byte(e.key))
		k := []byte(e.key)
		n := len(k)
		key := k[:n-25]
		w := window.Window{Start: int64(binary.BigEndian.Uint64(k[n-16:])), End: int64(binary.BigEndian.Uint64(k[n-8:]))}
		if err := o.onTimer(e.kg, key, w, e.ts, domain, out); err != nil {
			return err
		}
		if o.w.Count >= o.batchSize {
			if err := o.flush(out); err != nil {
				return err
			}
		}
	}
	return nil
}

// onTimer is WindowOperator.onEventTime / onProcessingTime.
func (o *windowOp) onTimer(kg int, key []byte, w window.Window, ts int64, domain byte, out Collector) error {
	stateW := w
	var ms *window.MergingSet
	if o.assigner.Merging() {
		var err error
		if ms, err = o.mergingSet(key); err != nil {
			return err
		}
		sw, ok := ms.StateWindow(w)
		if !ok {
			return nil // merged away: its timer is stale
		}
		stateW = sw
	}
	// EventTimeTrigger / ProcessingTimeTrigger: FIRE at the max timestamp
	if ts == w.MaxTimestamp() {
		if err := o.settle(); err != nil {
			return err
		}
		if c := o.store.lookup(slotContents, o.cellKey(key, stateW)); c != nil {
			if err := o.fire(key, w, c.val); err != nil {
				return err
			}
		}
	}
	eventCleanup := domain == domainEvent && o.assigner.IsEventTime()
	procCleanup := domain == domainProcessing && !o.assigner.IsEventTime()
	if (eventCleanup || procCleanup) && ts == o.cleanupTime(w) {
		o.store.deleteKG(kg, slotContents, o.cellKey(key, stateW))
		o.deleteTimer(kg, key, domain, w.MaxTimestamp(), w) // the trigger's clear
		if ms != nil {
			if err := ms.RetireWindow(w); err != nil {
				return err
			}
			return o.saveMergingSet(kg, key, ms)
		}
	}
	return nil
}

// record assigns r to its windows and folds it in (WindowOperator
// .processElement).
func (o *windowOp) record(r *abi.Record, out Collector) error {
	key := r.Key
	if o.all {
		key = windowAllKey
	}
	if key == nil {
		return errors.New("record has no key (the input edge must be a key-by)")
	}
	kg, err := o.store.KeyGroup(key)
	if err != nil {
		return err
	}
	ts := o.procNow
	switch {
	case o.assigner.Type == window.GlobalT:
		ts = 0
	case o.assigner.EventTime:
		if !r.HasTime {
			return errors.New("record has no event time (Flink: Record has Long.MIN_VALUE timestamp (= no timestamp marker)): an event-time window needs timestamps, which a source's watermarks assign")
		}
		ts = r.Time
	}
	var raw []byte
	if o.agg != nil && o.agg.kind != pipeline.KindCount {
		f, ok, err := abi.MapField(r.Value, o.agg.field)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("no field %q", o.agg.field)
		case abi.IsNil(f):
			return fmt.Errorf("field %q is null", o.agg.field)
		}
		raw = f
	}
	o.wins = o.assigner.Assign(ts, o.wins[:0])
	skipped := true
	if o.assigner.Merging() {
		ms, err := o.mergingSet(key)
		if err != nil {
			return err
		}
		for _, w := range o.wins {
			actual, m := ms.AddWindow(w)
			if m != nil {
				if err := o.merge(kg, key, m); err != nil {
					return err
				}
			}
			if o.windowLate(actual) {
				if err := ms.RetireWindow(actual); err != nil {
					return err
				}
				continue
			}
			skipped = false
			stateW, _ := ms.StateWindow(actual)
			if err := o.fold(kg, key, stateW, r, raw); err != nil {
				return err
			}
			if err := o.onElement(kg, key, actual, stateW, out); err != nil {
				return err
			}
			o.registerCleanup(kg, key, actual)
		}
		if err := o.saveMergingSet(kg, key, ms); err != nil {
			return err
		}
	} else {
		for _, w := range o.wins {
			if o.windowLate(w) {
				continue
			}
			skipped = false
			if err := o.fold(kg, key, w, r, raw); err != nil {
				return err
			}
			if err := o.onElement(kg, key, w, w, out); err != nil {
				return err
			}
			o.registerCleanup(kg, key, w)
		}
	}
	if skipped && o.assigner.IsEventTime() && satAdd(ts, o.lateness) <= o.wm {
		if o.late >= 0 {
			o.lateW.AppendRaw(r.Raw)
		} else {
			o.dropped.Add(1)
		}
	}
	if o.w.Count >= o.batchSize {
		return o.flush(out)
	}
	return nil
}

// onElement is the trigger's onElement for window w, whose contents are
// in stateW.
func (o *windowOp) onElement(kg int, key []byte, w, stateW window.Window, out Collector) error {
	switch {
	case o.assigner.Type == window.GlobalT: // PurgingTrigger.of(CountTrigger.of(n))
		ck := o.cellKey(key, w)
		var n int64
		if c := o.store.lookup(slotCount, ck); c != nil {
			n = int64(binary.BigEndian.Uint64(c.val))
		}
		n++
		if n >= o.assigner.Count {
			if err := o.settle(); err != nil {
				return err
			}
			c := o.store.lookup(slotContents, ck)
			if c != nil {
				if err := o.fire(key, w, c.val); err != nil {
					return err
				}
			}
			o.store.deleteKG(kg, slotContents, ck)
			o.store.deleteKG(kg, slotCount, ck)
			return nil
		}
		return o.store.putKG(kg, slotCount, ck, binary.BigEndian.AppendUint64(o.vbuf[:0], uint64(n)))
	case o.assigner.EventTime: // EventTimeTrigger
		if w.MaxTimestamp() <= o.wm {
			if err := o.settle(); err != nil {
				return err
			}
			if c := o.store.lookup(slotContents, o.cellKey(key, stateW)); c != nil {
				return o.fire(key, w, c.val)
			}
			return nil
		}
		return o.registerTimer(kg, key, domainEvent, w.MaxTimestamp(), w)
	default: // ProcessingTimeTrigger
		return o.registerTimer(kg, key, domainProcessing, w.MaxTimestamp(), w)
	}
}

// merge is the MergeFunction of WindowOperator: the trigger's onMerge on
// the result, the merged windows' triggers and cleanup timers cleared,
// and their state windows folded into the one kept.
func (o *windowOp) merge(kg int, key []byte, m *window.Merge) error {
	if o.assigner.IsEventTime() && satAdd(m.Result.MaxTimestamp(), o.lateness) <= o.wm {
		return fmt.Errorf("the end timestamp of an event-time window cannot become earlier than the current watermark by merging (current watermark %d, window %s)", o.wm, m.Result)
	}
	domain := domainProcessing
	now := o.procNow
	if o.assigner.EventTime {
		domain, now = domainEvent, o.wm
	}
	if m.Result.MaxTimestamp() > now {
		if err := o.registerTimer(kg, key, domain, m.Result.MaxTimestamp(), m.Result); err != nil {
			return err
		}
	}
	for _, w := range m.Merged {
		o.deleteTimer(kg, key, domain, w.MaxTimestamp(), w)
		o.deleteTimer(kg, key, domain, o.cleanupTime(w), w)
	}
	if o.fn != nil {
		if err := o.settle(); err != nil {
			return err
		}
		return o.mergeFn(kg, key, m)
	}
	// mergeNamespaces: merged = reduce(s1, s2, ...), target = reduce(target, merged)
	var merged []byte
	for _, sw := range m.MergedStateWindows {
		ck := o.cellKey(key, sw)
		c := o.store.lookup(slotContents, ck)
		if c == nil {
			continue
		}
		if merged == nil {
			merged = append([]byte(nil), c.val...)
		} else {
			mc := &cell{val: merged}
			if err := o.combine(mc, c.val); err != nil {
				return err
			}
			merged = mc.val
		}
		o.store.deleteKG(kg, slotContents, ck)
	}
	if merged == nil {
		return nil
	}
	tk := o.cellKey(key, m.StateWindow)
	if t := o.store.lookup(slotContents, tk); t != nil {
		o.store.touch(t)
		return o.combine(t, merged)
	}
	return o.store.putKG(kg, slotContents, tk, merged)
}

// combine folds the aggregate src into the cell t: the aggregation's
// reduce of two partial results, t first.
func (o *windowOp) combine(t *cell, src []byte) error {
	switch o.agg.kind {
	case pipeline.KindCount, pipeline.KindSum:
		f := cellField(t.val)
		putFixed(f, add(readFixed(f), readFixed(cellField(src))))
		return nil
	}
	sf := cellField(src)
	end, err := abi.Skip(sf, 0)
	if err != nil {
		return err
	}
	r := abi.Record{Value: cellValue(src)}
	return o.agg.update(t, &r, sf[:end])
}

// fold adds record r to the contents of (key, stateW).
func (o *windowOp) fold(kg int, key []byte, stateW window.Window, r *abi.Record, raw []byte) error {
	if o.fn != nil {
		return o.foldFn(kg, key, stateW, r)
	}
	ck := o.cellKey(key, stateW)
	c := o.store.lookup(slotContents, ck)
	if c != nil {
		o.store.touch(c) // changed in place below
	}
	if o.agg.kind == pipeline.KindCount {
		if c != nil {
			f := cellField(c.val)
			putFixed(f, num{i: readFixed(f).i + 1})
			return nil
		}
		var v []byte
		if o.all {
			v = putHeader(o.agg.newVal[:0], 0)
			v = abi.AppendStr(abi.AppendMapHeader(v, 1), pipeline.CountField)
			putHeader(v[:0], len(v)-cellHeader)
			v = appendFixed(v, num{i: 1})
		} else {
			var err error
			if v, err = o.agg.countValue(key); err != nil {
				return err
			}
		}
		o.agg.newVal = v[:0]
		return o.store.putKG(kg, slotContents, ck, v)
	}
	if c != nil {
		return o.agg.update(c, r, raw)
	}
	v, err := o.agg.first(r, raw)
	if err != nil {
		return err
	}
	o.agg.newVal = v[:0]
	return o.store.putKG(kg, slotContents, ck, v)
}

// emit writes the aggregate cell c of window w: its map with the window's
// bounds, stamped with w's max timestamp.
func (o *windowOp) emit(key []byte, w window.Window, c []byte) error {
	return o.emitValue(key, w, cellValue(c))
}

// emitValue writes the map m as window w's output: without fields named
// as the bounds' fields, then the bounds, stamped with w's max timestamp.
func (o *windowOp) emitValue(key []byte, w window.Window, m []byte) error {
	n, off, err := abi.Len(m)
	if err != nil {
		return fmt.Errorf("window: aggregate: %w", err)
	}
	v := o.vbuf[:0]
	keep := 0
	body := o.ebuf[:0]
	for i := 0; i < n; i++ {
		kend, err := abi.Skip(m, off)
		if err != nil {
			return err
		}
		vend, err := abi.Skip(m, kend)
		if err != nil {
			return err
		}
		if name, err := abi.ReadStr(m[off:kend]); err == nil && (string(name) == o.startField || string(name) == o.endField) {
			off = vend
			continue
		}
		body = append(body, m[off:vend]...)
		keep++
		off = vend
	}
	v = abi.AppendMapHeader(v, keep+2)
	v = append(v, body...)
	o.ebuf = body
	v = abi.AppendInt(abi.AppendStr(v, o.startField), w.Start)
	v = abi.AppendInt(abi.AppendStr(v, o.endField), w.End)
	o.vbuf = v
	outKey := key
	if o.all {
		outKey = nil
	}
	o.w.Append(w.MaxTimestamp(), true, outKey, v)
	return nil
}

func (o *windowOp) flush(out Collector) error {
	if o.w.Count > 0 {
		err := out.Emit(0, o.w.Buf, o.w.Count)
		o.w.Reset()
		if err != nil {
			return err
		}
	}
	if o.lateW.Count > 0 {
		err := out.Emit(o.late, o.lateW.Buf, o.lateW.Count)
		o.lateW.Reset()
		return err
	}
	return nil
}

// bad applies the on-error to a record the window cannot take.
func (o *windowOp) bad(r *abi.Record, cause error) error {
	kind := string(o.fnKind) + " " + o.fnName
	if o.agg != nil {
		kind = string(o.agg.kind)
		if r.Key == nil && !o.all {
			cause = o.agg.keyProblem(r)
		}
	}
	err := fmt.Errorf("window %s: input record %d: %w: %s", kind, o.seen, cause, preview(r.Value))
	if o.reject == nil {
		return err
	}
	return o.reject(&RecordFailure{Record: r.Raw, Position: o.seen, Err: err, Cause: cause.Error()})
}

// windowLate is isWindowLate: an event-time window past its cleanup time.
func (o *windowOp) windowLate(w window.Window) bool {
	return o.assigner.IsEventTime() && o.cleanupTime(w) <= o.wm
}

// cleanupTime is when w's state goes: max timestamp + allowed lateness
// for event time (Long.MAX_VALUE on overflow), the max timestamp for
// processing time.
func (o *windowOp) cleanupTime(w window.Window) int64 {
	if o.assigner.IsEventTime() {
		return satAdd(w.MaxTimestamp(), o.lateness)
	}
	return w.MaxTimestamp()
}

func (o *windowOp) registerCleanup(kg int, key []byte, w window.Window) {
	t := o.cleanupTime(w)
	if t == math.MaxInt64 || o.assigner.Type == window.GlobalT {
		return // the global window is never cleaned up
	}
	if t == w.MaxTimestamp() {
		return // no lateness: the trigger's timer at the max timestamp is the same timer
	}
	domain := domainProcessing
	if o.assigner.IsEventTime() {
		domain = domainEvent
	}
	_ = o.registerTimer(kg, key, domain, t, w)
}

func (o *windowOp) timerKey(key []byte, domain byte, ts int64, w window.Window) []byte {
	k := append(o.kbuf[:0], key...)
	k = append(k, domain)
	k = binary.BigEndian.AppendUint64(k, uint64(ts))
	k = binary.BigEndian.AppendUint64(k, uint64(w.Start))
	k = binary.BigEndian.AppendUint64(k, uint64(w.End))
	o.kbuf = k
	return k
}

// registerTimer adds a timer, once per (key, window, time) as Flink's
// timer queue holds it.
func (o *windowOp) registerTimer(kg int, key []byte, domain byte, ts int64, w window.Window) error {
	k := o.timerKey(key, domain, ts, w)
	if o.store.lookup(slotTimers, k) != nil {
		return nil
	}
	if err := o.store.putKG(kg, slotTimers, k, nil); err != nil {
		return err
	}
	o.seq++
	heap.Push(&o.timers, timerEntry{ts: ts, domain: domain, kg: kg, key: string(k), seq: o.seq})
	return nil
}

func (o *windowOp) deleteTimer(kg int, key []byte, domain byte, ts int64, w window.Window) {
	o.store.deleteKG(kg, slotTimers, o.timerKey(key, domain, ts, w)) // its queue entry is skipped
}

func (o *windowOp) cellKey(key []byte, w window.Window) []byte {
	k := append(o.kbuf[:0], key...)
	k = binary.BigEndian.AppendUint64(k, uint64(w.Start))
	k = binary.BigEndian.AppendUint64(k, uint64(w.End))
	o.kbuf = k
	return k
}

func (o *windowOp) mergingSet(key []byte) (*window.MergingSet, error) {
	c := o.store.lookup(slotMerging, key)
	if c == nil {
		return window.NewMergingSet(), nil
	}
	return window.DecodeMergingSet(c.val)
}

func (o *windowOp) saveMergingSet(kg int, key []byte, ms *window.MergingSet) error {
	if ms.Len() == 0 {
		o.store.deleteKG(kg, slotMerging, key)
		return nil
	}
	return o.store.putKG(kg, slotMerging, key, ms.Encode(nil))
}

// satAdd is a + b, Long.MAX_VALUE past it (Flink's cleanupTime guard).
func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// timerEntry is a timer in the queue: an index over the timer cells.
type timerEntry struct {
	ts     int64
	seq    uint64
	domain byte
	kg     int
	key    string // the timer cell's key
}

type timerQueue []timerEntry

func (q timerQueue) Len() int { return len(q) }
func (q timerQueue) Less(i, j int) bool {
	if q[i].ts != q[j].ts {
		return q[i].ts < q[j].ts
	}
	return q[i].seq < q[j].seq
}
func (q timerQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *timerQueue) Push(x any)   { *q = append(*q, x.(timerEntry)) }
func (q *timerQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

var _ WatermarkOperator = (*windowOp)(nil)
