package runtime

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
)

// sortedInput runs a keyed operator (a built-in aggregation, reduce, keyed
// process or co-process) in BATCH mode as Flink's sorted inputs do: it
// holds the whole input, grouped by key, and when the input ends feeds the
// operator key by key (key groups in order, keys in the order first seen),
// each key's records in event-time order as Flink's sort orders them (its
// comparators compare the key, then the timestamp; a record without one
// counts as Long.MIN_VALUE); a co-operator's two inputs are merged by time,
// as Flink's MultiInputSortingDataInput does, input 0 first on equal times;
// records of equal time on one input stay in arrival order. So for records
// with distinct times the "first record" an aggregation keeps is the key's
// earliest, whatever order parallel sources delivered them in. An
// aggregation or a reduce then emits only the final value of each key, the
// last record it emitted for the key, stamped with Long.MAX_VALUE as
// Flink's BatchGroupedReduceOperator stamps its finals. Other kinds emit
// what they emit.
//
// The input is held in memory (Flink sorts with spilling to disk): BATCH
// jobs are bounded, and the memory is the size of the input.
type sortedInput struct {
	inner     Operator
	kind      pipeline.Kind
	batchSize int
	// keyless: a record without a key goes to the operator at once (a
	// built-in aggregation's key-by hands on the records whose key it could
	// not read, for its on-error); otherwise it is an error
	keyless bool
	at      positioned // inner, when it takes records' positions
	window  bool       // inner is a window: it emits what its windows fire, not a final per key
	arrived [2]int64   // records received per input: the next one's position - 1

	store  *KeyedStore
	groups [][]*keyRun // by key group - start, keys in first-seen order
	index  map[string]*keyRun

	last    lastRecord
	w       abi.Writer
	scratch []byte            // a run of one input's records, in feeding order, when sorting moved them
	pos     []int64           // their positions
	wm      deferredWatermark // given after the held input, in Close
}

// ProcessWatermark holds wm until the held input was fed (BATCH: the end
// of event time comes when the input ended, after its records).
func (s *sortedInput) ProcessWatermark(wm int64, _ Collector) error {
	s.wm.hold(wm)
	return nil
}

// positioned is an operator that takes each record's position among its
// input's records (from 1) with a batch: an aggregation names it in its
// errors and dead letters, and the sort feeds records out of arrival order.
type positioned interface {
	processAt(input int, b []byte, count int, pos []int64, out Collector) error
}

// keyRun is one key's held records, both inputs, in arrival order.
type keyRun struct {
	recs      []byte
	held      []heldRecord
	unordered bool // some record sorts before one that arrived earlier
}

type heldRecord struct {
	t          int64 // event time, math.MinInt64 for none
	pos        int64 // position among its input's records, from 1
	start, end int   // in keyRun.recs
	input      int
}

// compare orders records for feeding: time, then input 0 first.
func (h heldRecord) compare(o heldRecord) int {
	if c := cmp.Compare(h.t, o.t); c != 0 {
		return c
	}
	return cmp.Compare(h.input, o.input)
}

func newSortedInput(inner Operator, kind pipeline.Kind, batchSize int) *sortedInput {
	s := &sortedInput{inner: inner, kind: kind, batchSize: batchSize, index: map[string]*keyRun{},
		keyless: isAggregation(kind)}
	s.at, _ = inner.(positioned)
	return s
}

// isAggregation reports whether kind is a built-in keyed aggregation.
func isAggregation(kind pipeline.Kind) bool {
	switch kind {
	case pipeline.KindSum, pipeline.KindMin, pipeline.KindMax, pipeline.KindMinBy, pipeline.KindMaxBy, pipeline.KindCount:
		return true
	}
	return false
}

// finalOnly reports whether the operator emits only each key's final value
// in BATCH mode: a reduce or an aggregation.
func (s *sortedInput) finalOnly() bool {
	return !s.window && (s.kind == pipeline.KindReduce || isAggregation(s.kind))
}

func (s *sortedInput) Open(ctx *OpenContext) error {
	st, ok := ctx.State.(*KeyedStore)
	if !ok {
		return errors.New("batch mode: a keyed operator needs the host's keyed state")
	}
	s.store = st
	start, end := st.KeyGroups()
	s.groups = make([][]*keyRun, max(end-start+1, 0))
	return s.inner.Open(ctx)
}

func (s *sortedInput) Process(input int, b []byte, count int, out Collector) error {
	if input < 0 || input > 1 {
		return fmt.Errorf("input %d out of range", input)
	}
	rd := abi.NewReader(b, count)
	for rd.Next() {
		r := rd.Record()
		s.arrived[input]++
		if r.Key == nil {
			if s.keyless { // the aggregation applies its on-error to it
				if err := s.process(input, r.Raw, 1, []int64{s.arrived[input]}, out); err != nil {
					return err
				}
				continue
			}
			return errors.New("batch mode: record has no key (the input edge must be a key-by)")
		}
		run := s.index[string(r.Key)]
		if run == nil {
			kg, err := s.store.KeyGroup(r.Key)
			if err != nil {
				return err
			}
			run = &keyRun{}
			s.index[string(r.Key)] = run
			start, _ := s.store.KeyGroups()
			s.groups[kg-start] = append(s.groups[kg-start], run)
		}
		h := heldRecord{t: math.MinInt64, pos: s.arrived[input], start: len(run.recs), input: input}
		if r.HasTime {
			h.t = r.Time
		}
		run.recs = append(run.recs, r.Raw...)
		h.end = len(run.recs)
		if n := len(run.held); n > 0 && h.compare(run.held[n-1]) < 0 {
			run.unordered = true
		}
		run.held = append(run.held, h)
	}
	return rd.Err()
}

// process hands the operator count records of one input with their
// positions, when it takes them.
func (s *sortedInput) process(input int, b []byte, count int, pos []int64, out Collector) error {
	if s.at != nil {
		return s.at.processAt(input, b, count, pos, out)
	}
	return s.inner.Process(input, b, count, out)
}

// Close feeds the held input key by key, then closes the operator.
func (s *sortedInput) Close(out Collector) error {
	if out == nil {
		return s.inner.Close(nil)
	}
	s.last.out = out
	for gi, runs := range s.groups {
		for _, run := range runs {
			if err := s.feed(run, out); err != nil {
				return errors.Join(err, s.inner.Close(nil))
			}
		}
		s.groups[gi] = nil // let the key group's records go
	}
	s.index = nil
	if err := s.flush(out); err != nil {
		return errors.Join(err, s.inner.Close(nil))
	}
	if err := s.wm.give(s.inner, out); err != nil {
		return errors.Join(err, s.inner.Close(nil))
	}
	return s.inner.Close(out)
}

// feed hands the operator one key's records in feeding order, in batches
// of consecutive records of one input.
func (s *sortedInput) feed(run *keyRun, out Collector) error {
	var col Collector = out
	if s.finalOnly() {
		s.last.has = false
		col = &s.last
	}
	if run.unordered {
		slices.SortStableFunc(run.held, heldRecord.compare)
	}
	for i := 0; i < len(run.held); {
		input, first := run.held[i].input, i
		s.scratch, s.pos = s.scratch[:0], s.pos[:0]
		for ; i < len(run.held) && run.held[i].input == input && len(s.pos) < s.batchSize; i++ {
			h := run.held[i]
			if run.unordered { // in arrival order, consecutive records are consecutive bytes
				s.scratch = append(s.scratch, run.recs[h.start:h.end]...)
			}
			s.pos = append(s.pos, h.pos)
		}
		b := s.scratch
		if !run.unordered {
			b = run.recs[run.held[first].start:run.held[i-1].end]
		}
		if err := s.process(input, b, len(s.pos), s.pos, col); err != nil {
			return err
		}
	}
	run.recs, run.held = nil, nil
	if s.finalOnly() && s.last.has {
		r, _, err := abi.ParseRecord(s.last.rec, 0)
		if err != nil {
			return err
		}
		s.w.Append(math.MaxInt64, true, r.Key, r.Value) // Flink's BatchGroupedReduceOperator: Long.MAX_VALUE
		if s.w.Count >= s.batchSize {
			return s.flush(out)
		}
	}
	return nil
}

func (s *sortedInput) flush(out Collector) error {
	if s.w.Count == 0 {
		return nil
	}
	err := out.Emit(0, s.w.Buf, s.w.Count)
	s.w.Reset()
	return err
}

// lastRecord keeps the last record emitted on the main output and passes
// side outputs through.
type lastRecord struct {
	out Collector
	rec []byte
	has bool
}

func (l *lastRecord) Emit(port int, buf []byte, count int) error {
	if port != 0 {
		return l.out.Emit(port, buf, count)
	}
	off := 0
	for i := 0; i < count; i++ {
		end, err := abi.Skip(buf, off)
		if err != nil {
			return err
		}
		if i == count-1 {
			l.rec = append(l.rec[:0], buf[off:end]...)
			l.has = true
		}
		off = end
	}
	return nil
}
