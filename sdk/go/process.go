package sdk

import (
	"errors"
	"strconv"

	"github.com/sluicehq/sluice/abi"
)

// process implements sluice_process: every record of the batch through
// the registered operator, then one emit per output port (and one more
// each time a port's buffer reaches flushAt).
func (e *engine) process(port int32, batch []byte, count int32) error {
	return e.run(port, batch, count, nil, nil)
}

// processIndexed implements sluice_process_indexed: process, with where
// the records and their fields are read from the host's batch index
// instead of found by scanning (see abi.ExportProcessIndexed).
func (e *engine) processIndexed(port int32, batch []byte, count int32, index []byte) error {
	recs, fields, err := readIndex(index, count)
	if err != nil {
		return err
	}
	return e.run(port, batch, count, recs, fields)
}

// run is process: with recs (the host's index) or without (split).
func (e *engine) run(port int32, batch []byte, count int32, recs []indexRecord, fields []abi.FlatField) error {
	op := reg.op
	if op == nil {
		return errNoOperator
	}
	if op.kind == abi.KindPartitioner {
		return unsupported("sluice_process: a partitioner is called through sluice_partition")
	}
	if port != 0 && !(port == 1 && op.kind == abi.KindCoMap) {
		return unsupported("sluice_process: a " + string(op.kind) + " has no input port " + strconv.Itoa(int(port)))
	}
	if count < 0 {
		return &Error{Status: abi.StatusMalformed, Text: "sluice_process: negative count"}
	}
	e.beginCall()
	e.inCall = true
	// The kind is a string: compare it once per batch, not per record (a
	// string switch is several calls in a Go wasm guest).
	code := codeOf(op.kind)
	if code == codeProcessWindow {
		if err := e.processWindow(op, batch, count); err != nil {
			return err
		}
		e.inCall, e.cur = false, nil
		return e.flush()
	}
	v, off := &e.in, 0
	e.cur = v
	if recs != nil && (code == codeFilter || code == codeMap || code == codeFlatMap || code == codeProcess) {
		// an indexed batch, the common case: a loop of its own per kind
		var err error
		switch code {
		case codeFilter:
			err = e.filterIndexed(op.filterFn, batch, recs, fields)
		case codeMap:
			err = e.mapIndexed(op.mapFn, batch, recs, fields)
		case codeFlatMap:
			err = eachIndexed(e, op.flatMapFn, batch, recs, fields)
		default:
			err = eachIndexed(e, op.processFn, batch, recs, fields)
		}
		if err != nil {
			return err
		}
		e.inCall, e.cur = false, nil
		return e.flush()
	}
	// the other kinds, and batches that come without the host's index
	// (a host indexes what it can: these are mostly malformed ones, whose
	// split says where)
	for i := 0; i < int(count); i++ {
		var end int
		var err error
		if recs != nil {
			end = v.fromIndex(batch, &recs[i], fields)
		} else {
			if off >= len(batch) {
				return e.batchError(batch, count)
			}
			if end, err = v.split(batch, off); err != nil {
				return &Error{Status: abi.StatusMalformed, Text: "sluice_process: " + err.Error()}
			}
		}
		off, e.idx = end, i
		if err := e.one(op, code, port, Record{v}); err != nil || e.err != nil || e.arena.used != 0 {
			if err := e.settle(i, err); err != nil {
				return err
			}
		}
	}
	if recs == nil && off != len(batch) {
		return e.batchError(batch, count)
	}
	e.inCall, e.cur = false, nil
	return e.flush()
}

// eachIndexed is run's loop over an indexed batch for a flat map or a
// process function (c is their Emitter or Context), and filterIndexed and
// mapIndexed for the other two: loops of their own, because a Go wasm
// guest keeps a loop's variables in memory, and run's loop, which serves
// every kind and both inputs, cost ~20 ns a record more with nothing in it
// (plugins/langtest/testdata/double-go-raw, the floor, is one such loop).
func eachIndexed[C Emitter | Context](e *engine, fn func(Record, C) error, batch []byte, recs []indexRecord, fields []abi.FlatField) error {
	v := &e.in
	var c C
	for i := range recs {
		v.fromIndex(batch, &recs[i], fields)
		e.idx = i
		if err := fn(Record{v}, c); err != nil || e.err != nil || e.arena.used != 0 {
			if err := e.settle(i, err); err != nil {
				return err
			}
		}
	}
	return nil
}

// filterIndexed keeps neighbouring kept records as one run of the batch,
// copied to the output with one append when the run ends (e.emit's path,
// inlined): an append costs 25-40 ns in a Go wasm guest, and half the
// records of a typical filter have a kept neighbour.
func (e *engine) filterIndexed(fn func(Record) (bool, error), batch []byte, recs []indexRecord, fields []abi.FlatField) error {
	v, o := &e.in, &e.outs[0]
	start, end := 0, 0 // kept records not copied yet: batch[start:end]
	for i := range recs {
		r := &recs[i]
		v.fromIndex(batch, r, fields)
		e.idx = i
		keep, err := fn(Record{v})
		if err == nil && keep {
			if !v.edited() {
				if int(r.start) != end {
					o.w.Buf = append(o.w.Buf, batch[start:end]...)
					start = int(r.start)
				}
				end = int(r.end)
				o.w.Count++
			} else {
				o.w.Buf = append(o.w.Buf, batch[start:end]...)
				start, end = 0, 0
				e.emit(0, Record{v})
			}
		}
		if err != nil || e.err != nil || e.arena.used != 0 {
			if err := e.settle(i, err); err != nil {
				return err
			}
		}
	}
	o.w.Buf = append(o.w.Buf, batch[start:end]...)
	return nil
}

func (e *engine) mapIndexed(fn func(Record) (Record, error), batch []byte, recs []indexRecord, fields []abi.FlatField) error {
	v := &e.in
	for i := range recs {
		v.fromIndex(batch, &recs[i], fields)
		e.idx = i
		out, err := fn(Record{v})
		if err == nil {
			if out.v == nil {
				err = errors.New("map returned the zero Record")
			} else {
				e.emit(0, out)
			}
		}
		if err != nil || e.err != nil || e.arena.used != 0 {
			if err := e.settle(i, err); err != nil {
				return err
			}
		}
	}
	return nil
}

// settle ends the step of record i when it did not simply succeed: the
// first error of the call or of its emits, prefixed with the record, and
// the views it made released.
func (e *engine) settle(i int, err error) error {
	if err == nil {
		err = e.err
	}
	if e.arena.used != 0 {
		e.arena.release()
	}
	if err != nil {
		return prefixed("record "+strconv.Itoa(i)+": ", err, abi.StatusUser)
	}
	return nil
}

// batchError is the error of a batch whose records do not add up to its
// count and size: abi's reader words it, with the offset.
func (e *engine) batchError(batch []byte, count int32) error {
	rd := abi.NewReader(batch, int(count))
	for rd.Next() {
	}
	err := rd.Err()
	if err == nil { // cannot happen: split and abi agree on every record
		err = errors.New("the batch does not hold its count of records")
	}
	return &Error{Status: abi.StatusMalformed, Text: "sluice_process: " + err.Error()}
}

var errNoOperator = &Error{Status: abi.StatusUnsupported, Text: "no operator registered: call sdk.Map, sdk.Filter, ... from an init function"}

func unsupported(text string) error { return &Error{Status: abi.StatusUnsupported, Text: text} }

// opCode is an operator kind as a small integer, for per-record switches.
type opCode uint8

const (
	codeOther opCode = iota
	codeFilter
	codeMap
	codeCoMap
	codeFlatMap
	codeProcess
	codeReduce
	codeKeySelector
	codeProcessWindow
)

func codeOf(k abi.Kind) opCode {
	switch k {
	case abi.KindFilter:
		return codeFilter
	case abi.KindMap:
		return codeMap
	case abi.KindCoMap:
		return codeCoMap
	case abi.KindFlatMap:
		return codeFlatMap
	case abi.KindProcess:
		return codeProcess
	case abi.KindReduce:
		return codeReduce
	case abi.KindKeySelector:
		return codeKeySelector
	case abi.KindProcessWindow:
		return codeProcessWindow
	}
	return codeOther
}

// one runs the operator, of kind code, on one input record.
func (e *engine) one(op *Operator, code opCode, port int32, r Record) error {
	switch code {
	case codeFilter:
		keep, err := op.filterFn(r)
		if err == nil && keep {
			e.emit(0, r)
		}
		return err
	case codeMap, codeCoMap:
		fn := op.mapFn
		if port == 1 {
			fn = op.map2Fn
		}
		out, err := fn(r)
		if err != nil {
			return err
		}
		if out.v == nil {
			return errors.New("map returned the zero Record")
		}
		e.emit(0, out)
		return nil
	case codeFlatMap:
		return op.flatMapFn(r, Emitter{})
	case codeProcess:
		return op.processFn(r, Context{})
	case codeReduce:
		return e.reduce(op, r)
	case codeKeySelector:
		return e.selectKey(op, r)
	}
	return unsupported("operator kind " + string(op.kind))
}

// selectKey appends the key of r (a raw msgpack value) to the main output:
// a key selector's output is count concatenated keys, not envelopes.
func (e *engine) selectKey(op *Operator, r Record) error {
	k, err := op.keyFn(r)
	if err != nil {
		return err
	}
	if !k.Exists() || k.IsNil() {
		return errors.New("key selector returned a nil key")
	}
	w := &e.outs[0].w
	w.Buf = append(w.Buf, k.raw...)
	w.Count++
	return nil
}
