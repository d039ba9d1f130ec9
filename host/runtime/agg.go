package runtime

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
)

// aggregate is a built-in keyed rolling aggregation with Flink's semantics
// (flink-semantics.md §5, Flink's SumAggregator and ComparableAggregator):
//
//   - sum, min, max keep the FIRST record seen for the key and update only
//     the field: sum adds (int + int stays int, any float makes it float),
//     min/max keep the smallest/largest value as Java's compareTo orders
//     them (numbers, NaN above all and -0.0 below 0.0; strings by UTF-16
//     code unit; booleans false before true; compareValues);
//   - min-by, max-by keep the whole record holding the extreme value, the
//     earlier one on ties, or the later one with first: false (Flink's
//     minBy(field, false): ComparableAggregator returns value2 on c == 0);
//   - count emits {<key field>: key, ..., "count": n} (the key fields of the
//     key-by, or "key" for a key-selector plugin): Flink has no count on a
//     KeyedStream, and this is what SQL's GROUP BY key, COUNT(*) gives.
//
// It emits the current aggregate of the key for every input record. In
// BATCH mode a sortedInput feeds it key by key, each key's records in
// event-time order, and emits only each key's final aggregate.
//
// State lives in the subtask's keyed state (slot 0), one cell per key: the
// heap's KeyedStore, or a cellBackend over the operator's backend.
type aggregate struct {
	kind      pipeline.Kind
	field     string
	last      bool     // min-by, max-by with first: false
	keyFields []string // count: names of the key's fields
	batchSize int

	store  cellStore
	w      abi.Writer
	tmp    []byte
	newVal []byte                     // the cell of a new key being built (insert copies it)
	seen   int64                      // records processed, for error positions
	reject func(*RecordFailure) error // the on-error; nil: fail
}

func newAggregate(kind pipeline.Kind, field string, keyFields []string, batchSize int) *aggregate {
	return &aggregate{kind: kind, field: field, keyFields: keyFields, batchSize: batchSize}
}

func (a *aggregate) Open(ctx *OpenContext) error {
	st, ok := ctx.State.(cellStore)
	if !ok {
		return fmt.Errorf("%s needs keyed input (key-by) and the host's keyed state", a.kind)
	}
	a.store, a.reject = st, ctx.Reject
	return nil
}

func (a *aggregate) Process(_ int, b []byte, count int, out Collector) error {
	rd := abi.NewReader(b, count)
	for rd.Next() {
		if err := a.record(rd.Current(), out); err != nil {
			return err
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("%s: input batch: %w", a.kind, err)
	}
	return a.flush(out)
}

// processAt is Process with each record's position among the operator's
// input records (from 1), which its errors and dead letters name: in BATCH
// mode a sortedInput feeds the records out of arrival order.
func (a *aggregate) processAt(_ int, b []byte, count int, pos []int64, out Collector) error {
	rd := abi.NewReader(b, count)
	for i := 0; rd.Next(); i++ {
		if i < len(pos) {
			a.seen = pos[i] - 1 // record counts it
		}
		if err := a.record(rd.Current(), out); err != nil {
			return err
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("%s: input batch: %w", a.kind, err)
	}
	return a.flush(out)
}

// processSplit is Process for a batch its HASH edge already split.
func (a *aggregate) processSplit(_ int, b []byte, spans []span, out Collector) error {
	var r abi.Record
	start := 0
	for _, s := range spans {
		t := b[start+1 : s.key]
		r.Time, r.HasTime = 0, false
		if t[0] != 0xc0 {
			v, err := abi.ReadInt(t)
			if err != nil {
				return fmt.Errorf("%s: input batch: %w", a.kind, err)
			}
			r.Time, r.HasTime = v, true
		}
		r.Raw = b[start:s.end:s.end]
		r.Key = b[s.key:s.value:s.value]
		if abi.IsNil(r.Key) { // never written with a span; as the parser would give it
			r.Key = nil
		}
		r.Value = b[s.value:s.end:s.end]
		start = int(s.end)
		if err := a.record(&r, out); err != nil {
			return err
		}
	}
	return a.flush(out)
}

// record folds one input record and emits the key's aggregate.
func (a *aggregate) record(r *abi.Record, out Collector) error {
	a.seen++
	c, err := a.add(r)
	if err == nil {
		err = cellErr(a.store)
		if err != nil {
			return err // the backend failed: not the record's fault
		}
	}
	if err != nil {
		if err := a.bad(r, err); err != nil {
			// the results of the records before it go downstream before
			// the failure, as Flink's operator emits each as it goes
			if ferr := a.flush(out); ferr != nil {
				return errors.Join(err, ferr)
			}
			return err
		}
		return nil
	}
	a.w.Append(r.Time, r.HasTime, r.Key, cellValue(c.val))
	if a.w.Count >= a.batchSize {
		return a.flush(out)
	}
	return nil
}

// bad applies the on-error to record r, which add refused with cause:
// a nil error means the record was skipped or dead-lettered.
func (a *aggregate) bad(r *abi.Record, cause error) error {
	if r.Key == nil {
		cause = a.keyProblem(r)
	}
	err := fmt.Errorf("%s: input record %d: %w: %s", a.kind, a.seen, cause, preview(r.Value))
	if a.reject == nil {
		return err
	}
	return a.reject(&RecordFailure{Record: r.Raw, Position: a.seen, Err: err, Cause: cause.Error()})
}

// keyProblem says why a record reached the aggregation without a key: its
// key-by edge passes records whose key it cannot read on to the
// aggregation's on-error (see edgeOut.keyless).
func (a *aggregate) keyProblem(r *abi.Record) error {
	if len(a.keyFields) == 0 {
		return errors.New("record has no key (the input edge must be a key-by)")
	}
	k := keyReader{fields: a.keyFields}
	key, err := k.next(r.Value)
	if err != nil {
		return err
	}
	if _, err := abi.KeyHash(key); err != nil {
		return fmt.Errorf("key %s: %w", preview(key), err)
	}
	return errors.New("record has no key")
}

func (a *aggregate) flush(out Collector) error {
	if a.w.Count == 0 {
		return nil
	}
	err := out.Emit(0, a.w.Buf, a.w.Count)
	a.w.Reset()
	return err
}

// Close has nothing to emit: every record emitted its aggregate.
func (a *aggregate) Close(Collector) error { return nil }

// add folds record r into its key's cell and returns the cell.
func (a *aggregate) add(r *abi.Record) (*cell, error) {
	if r.Key == nil {
		return nil, errors.New("record has no key (the input edge must be a key-by)")
	}
	c := a.store.lookup(0, r.Key)
	kg := -1
	if c != nil {
		a.store.touch(c) // changed in place below
	} else {
		var err error
		if kg, err = a.store.KeyGroup(r.Key); err != nil {
			return nil, err
		}
	}
	if a.kind == pipeline.KindCount {
		if c == nil {
			v, err := a.countValue(r.Key)
			if err != nil {
				return nil, err
			}
			c = a.store.insert(kg, 0, r.Key, v)
			a.newVal = v[:0]
		} else {
			f := cellField(c.val)
			putFixed(f, num{i: readFixed(f).i + 1})
		}
		return c, nil
	}
	raw, ok, err := abi.MapField(r.Value, a.field)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("no field %q", a.field)
	case abi.IsNil(raw):
		return nil, fmt.Errorf("field %q is null", a.field)
	}
	if c == nil {
		v, err := a.first(r, raw)
		if err != nil {
			return nil, err
		}
		a.newVal = v[:0]
		return a.store.insert(kg, 0, r.Key, v), nil
	}
	if err := a.update(c, r, raw); err != nil {
		return nil, err
	}
	return c, nil
}

// first builds the cell of a new key from its first record, in a.newVal's
// room.
func (a *aggregate) first(r *abi.Record, raw []byte) ([]byte, error) {
	off := fieldOffset(r.Value, raw)
	v := putHeader(a.newVal[:0], off)
	switch a.kind {
	case pipeline.KindMinBy, pipeline.KindMaxBy:
		if _, err := compareValues(raw, raw); err != nil {
			return nil, fmt.Errorf("field %q: %w", a.field, err)
		}
		return append(v, r.Value...), nil
	case pipeline.KindMin, pipeline.KindMax:
		if !numeric(raw) { // a string or a bool is kept as it is
			if _, err := compareValues(raw, raw); err != nil {
				return nil, fmt.Errorf("field %q: %w", a.field, err)
			}
			return append(v, r.Value...), nil
		}
	}
	n, err := readNum(raw)
	if err != nil {
		return nil, fmt.Errorf("field %q %w", a.field, err)
	}
	v = append(v, r.Value[:off]...)
	v = appendFixed(v, n)
	return append(v, r.Value[off+len(raw):]...), nil
}

// update folds the field value raw of record r into cell c.
func (a *aggregate) update(c *cell, r *abi.Record, raw []byte) error {
	f := cellField(c.val)
	if a.kind == pipeline.KindSum {
		n, err := readNum(raw)
		if err != nil {
			return fmt.Errorf("field %q %w", a.field, err)
		}
		putFixed(f, add(readFixed(f), n))
		return nil
	}
	end, err := abi.Skip(f, 0)
	if err != nil {
		return err
	}
	cur := f[:end]
	cmp, err := compareValues(raw, cur)
	if err != nil {
		return fmt.Errorf("field %q: %w", a.field, err)
	}
	better := cmp < 0
	if a.kind == pipeline.KindMax || a.kind == pipeline.KindMaxBy {
		better = cmp > 0
	}
	byRecord := a.kind == pipeline.KindMinBy || a.kind == pipeline.KindMaxBy
	if cmp == 0 && byRecord && a.last { // minBy(field, false): a tie takes the later record
		better = true
	}
	if !better { // ties keep the earlier record
		return nil
	}
	switch a.kind {
	case pipeline.KindMinBy, pipeline.KindMaxBy:
		c.val = append(c.val[:cellHeader], r.Value...)
		putHeader(c.val[:0], fieldOffset(r.Value, raw))
		return nil
	}
	if numeric(raw) && numeric(cur) {
		n, err := readNum(raw)
		if err != nil {
			return err
		}
		putFixed(f, n)
		return nil
	}
	// a string or bool field may change length: rebuild the map around
	// the new value
	off := cellOff(c.val)
	a.tmp = append(a.tmp[:0], c.val[:cellHeader+off]...)
	if numeric(raw) {
		n, _ := readNum(raw)
		a.tmp = appendFixed(a.tmp, n)
	} else {
		a.tmp = append(a.tmp, raw...)
	}
	a.tmp = append(a.tmp, f[end:]...)
	c.val = append(c.val[:0], a.tmp...)
	return nil
}

// countValue builds the cell of a new key for count: the key's fields then
// "count": 1.
func (a *aggregate) countValue(key []byte) ([]byte, error) {
	v := putHeader(a.newVal[:0], 0)
	names := a.keyFields
	if len(names) == 0 {
		names = []string{"key"}
	}
	v = abi.AppendMapHeader(v, len(names)+1)
	if len(names) == 1 {
		v = append(abi.AppendStr(v, names[0]), key...)
	} else {
		n, off, err := abi.Len(key)
		if err != nil || abi.TypeOf(key) != abi.TypeArray || n != len(names) {
			return nil, fmt.Errorf("composite key is not an array of %d fields", len(names))
		}
		for _, name := range names {
			end, err := abi.Skip(key, off)
			if err != nil {
				return nil, err
			}
			v = append(abi.AppendStr(v, name), key[off:end]...)
			off = end
		}
	}
	v = abi.AppendStr(v, pipeline.CountField)
	putHeader(v[:0], len(v)-cellHeader)
	return appendFixed(v, num{i: 1}), nil
}

// numeric reports whether the msgpack value v is an int or a float.
func numeric(v []byte) bool {
	t := abi.TypeOf(v)
	return t == abi.TypeInt || t == abi.TypeFloat
}
