package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/window"
)

// A window whose function is a Wasm plugin, Flink's
// window(assigner).reduce(ReduceFunction) and .process(ProcessWindowFunction):
//
// reduce: the plugin is an ordinary keyed reduce plugin. Its keyed state
// is the window's: the plugin's slot 0 of the record key is, during a
// call, the contents cell of (key, window) in the window operator's
// store (windowFnState), Flink's ReducingState under the window's
// namespace. The records of one input batch are grouped by (key, state
// window), in arrival order within each group, and each group is one
// call (the plugin reduces them one by one into the window's
// accumulator, as Flink's ReducingState.add does). The plugin's running
// output is dropped: a window emits its accumulator when it fires. A
// session merge feeds the merged windows' accumulators to the plugin as
// records of the kept window (Flink's mergeNamespaces with the reduce).
//
// process: the window holds every record it was given (Flink's
// ListState of the window's contents: a 4-byte count and the records'
// envelopes, abi wire format), and on firing calls the plugin once with a
// batch whose first record is the window (abi.WindowHeader) and whose
// others are the contents, in arrival order: ProcessWindowFunction
// .process(key, context.window(), elements, out). What it emits is the
// window's output: each record a map, given the window's bounds in the
// start and end fields, the window's key and its max timestamp, as the
// built-in aggregations emit theirs.
//
// Either way the window's contents are the window operator's keyed
// state, under the record key's key group: they checkpoint and rescale
// with the built-in windows' (window_state.go).

// windowFnState is the keyed state a window's reduce plugin sees: its
// slot 0 of the current record key is the contents cell of (key, state
// window) that the call runs for.
type windowFnState struct {
	o   *windowOp
	kg  int
	key []byte
	w   window.Window
	set bool
}

func (s *windowFnState) check(slot int, key []byte) error {
	switch {
	case !s.set:
		return errors.New("a window's reduce plugin has keyed state only while it reduces a window's records")
	case slot != 0:
		return fmt.Errorf("a window's reduce plugin keeps its accumulator in state slot 0, and slot %d was used (Flink's ReduceFunction in a window keeps no state of its own)", slot)
	case !bytes.Equal(key, s.key):
		return errors.New("a window's reduce plugin used the state of a key other than the record's")
	}
	return nil
}

func (s *windowFnState) Get(slot int, key []byte, dst []byte) ([]byte, bool, error) {
	if err := s.check(slot, key); err != nil {
		return nil, false, err
	}
	c := s.o.store.lookup(slotContents, s.o.cellKey(s.key, s.w))
	if c == nil {
		return nil, false, nil
	}
	return append(dst[:0], c.val...), true, nil
}

func (s *windowFnState) Put(slot int, key, val []byte) error {
	if err := s.check(slot, key); err != nil {
		return err
	}
	if len(val) > abi.MaxStateValue {
		return fmt.Errorf("a state value of %d bytes is longer than the limit of %d", len(val), abi.MaxStateValue)
	}
	return s.o.store.putKG(s.kg, slotContents, s.o.cellKey(s.key, s.w), val)
}

func (s *windowFnState) Delete(slot int, key []byte) error {
	if err := s.check(slot, key); err != nil {
		return err
	}
	s.o.store.deleteKG(s.kg, slotContents, s.o.cellKey(s.key, s.w))
	return nil
}

// fnGroup is the records of one input batch for one (key, state window)
// of a reduce plugin, waiting for their call.
type fnGroup struct {
	kg  int
	key []byte
	w   window.Window
	rec abi.Writer
}

// openFn opens the window's plugin function with the window operator's
// context: its own keyed state for a reduce (windowFnState), none for a
// process, and no side outputs.
func (o *windowOp) openFn(ctx *OpenContext) error {
	fc := *ctx
	fc.Port = func(tag string) int {
		if tag == "" {
			return 0
		}
		return -1
	}
	fc.Reject = nil
	fc.OnError = PolicyFail
	if o.fnKind == pipeline.KindReduce {
		o.fnState = &windowFnState{o: o}
		fc.State = o.fnState
	} else {
		fc.State = nil
	}
	o.groups = map[string]*fnGroup{}
	return o.fn.Open(&fc)
}

// foldFn adds r to (key, stateW): to its reduce group, or to the list
// of a process window's contents.
func (o *windowOp) foldFn(kg int, key []byte, stateW window.Window, r *abi.Record) error {
	ck := o.cellKey(key, stateW)
	if o.fnKind == pipeline.KindReduce {
		g := o.groups[string(ck)]
		if g == nil {
			if n := len(o.spare); n > 0 { // a group of an earlier batch, its buffers kept
				g, o.spare = o.spare[n-1], o.spare[:n-1]
			} else {
				g = &fnGroup{}
			}
			g.kg, g.key, g.w = kg, append(g.key[:0], key...), stateW
			g.rec.Reset()
			o.groups[string(ck)] = g
			o.order = append(o.order, string(ck))
		}
		if o.all {
			g.rec.AppendRecordWithKey(*r, windowAllKey) // Flink's NullByteKeySelector: the plugin's state has a key
		} else {
			g.rec.AppendRaw(r.Raw)
		}
		return nil
	}
	return o.store.appendRecords(kg, slotContents, ck, r.Raw, 1)
}

// settle runs the waiting reduce groups: before anything reads a
// window's contents, and at the end of each input batch (so a checkpoint
// barrier, which comes between batches, finds none).
func (o *windowOp) settle() error {
	if len(o.order) == 0 {
		return nil
	}
	defer func() {
		for _, g := range o.groups {
			o.spare = append(o.spare, g)
		}
		clear(o.groups)
		o.order = o.order[:0]
	}()
	for _, ck := range o.order {
		g := o.groups[ck]
		if err := o.reduceInto(g.kg, g.key, g.w, g.rec.Buf, g.rec.Count); err != nil {
			return err
		}
	}
	return nil
}

// reduceInto calls the reduce plugin over count records (envelopes) for
// the accumulator of (key, w).
func (o *windowOp) reduceInto(kg int, key []byte, w window.Window, b []byte, count int) error {
	s := o.fnState
	s.kg, s.key, s.w, s.set = kg, key, w, true
	err := o.fn.Process(0, b, count, discardCollector{})
	s.set = false
	if err != nil {
		return fmt.Errorf("window reduce plugin %q, window %s: %w", o.fnName, w, err)
	}
	return nil
}

// fire emits window w of key from its contents c.
func (o *windowOp) fire(key []byte, w window.Window, c []byte) error {
	switch {
	case o.fn == nil:
		return o.emit(key, w, c)
	case o.fnKind == pipeline.KindReduce:
		v := c
		if abi.TypeOf(c) == abi.TypeArray { // the SDKs keep the accumulator's envelope
			rd := abi.NewReader(c, 1)
			if !rd.Next() {
				return fmt.Errorf("window reduce plugin %q: the accumulator of window %s is not a record: %v", o.fnName, w, rd.Err())
			}
			v = rd.Current().Value
		}
		return o.emitValue(key, w, v)
	}
	return o.process(key, w, c)
}

// process calls the process-window plugin over window w's contents c: a
// batch of the window's header and its records.
func (o *windowOp) process(key []byte, w window.Window, c []byte) error {
	if len(c) < 4 {
		return fmt.Errorf("window %s: contents of %d bytes", w, len(c))
	}
	n := int(binary.BigEndian.Uint32(c))
	hk := key
	if o.all {
		hk = nil
	}
	in := abi.AppendWindowHeader(o.fnIn[:0], hk, w.Start, w.End)
	in = append(in, c[4:]...)
	o.fnIn = in
	o.fnOut.o, o.fnOut.key, o.fnOut.w = o, key, w
	if err := o.fn.Process(0, in, n+1, &o.fnOut); err != nil {
		return fmt.Errorf("window process plugin %q, window %s of %d records: %w", o.fnName, w, n, err)
	}
	return o.fnOut.err
}

// fnCollector takes a process-window plugin's output: each record's
// value, with the window's bounds, key and max timestamp.
type fnCollector struct {
	o   *windowOp
	key []byte
	w   window.Window
	err error
}

func (c *fnCollector) Emit(port int, b []byte, count int) error {
	if port != 0 {
		return nil // a side output nothing reads
	}
	rd := abi.NewReader(b, count)
	for rd.Next() {
		v := rd.Current().Value
		if abi.TypeOf(v) != abi.TypeMap {
			return fmt.Errorf("window process plugin %q emitted a %s: a window's output record is a map, which gets the window's bounds in %q and %q", c.o.fnName, abi.TypeOf(v).Phrase(), c.o.startField, c.o.endField)
		}
		if err := c.o.emitValue(c.key, c.w, v); err != nil {
			return err
		}
	}
	return rd.Err()
}

type discardCollector struct{}

func (discardCollector) Emit(int, []byte, int) error { return nil }

// mergeFn is mergeNamespaces for a plugin function: the merged windows'
// accumulators reduced into the kept one's (reduce), or their records
// added to its list (process).
func (o *windowOp) mergeFn(kg int, key []byte, m *window.Merge) error {
	var batch abi.Writer
	for _, sw := range m.MergedStateWindows {
		ck := o.cellKey(key, sw)
		c := o.store.lookup(slotContents, ck)
		if c == nil {
			continue
		}
		if o.fnKind == pipeline.KindReduce {
			v := c.val
			if abi.TypeOf(v) == abi.TypeArray {
				batch.AppendRaw(v)
			} else {
				batch.Append(0, false, key, v)
			}
		} else if len(c.val) > 4 {
			batch.Buf = append(batch.Buf, c.val[4:]...)
			batch.Count += int(binary.BigEndian.Uint32(c.val))
		}
		o.store.deleteKG(kg, slotContents, ck)
	}
	if batch.Count == 0 {
		return nil
	}
	if o.fnKind == pipeline.KindReduce {
		return o.reduceInto(kg, key, m.StateWindow, batch.Buf, batch.Count)
	}
	return o.store.appendRecords(kg, slotContents, o.cellKey(key, m.StateWindow), batch.Buf, batch.Count)
}
