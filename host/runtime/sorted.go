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
// operator key by key (key groups in order, keys in the order first seen;
// for a co-operator the key's records of input 0, then of input 1), each
// key's records in event-time order as Flink's sort orders them (its
// comparators compare the key, then the timestamp; a record without one
// counts as Long.MIN_VALUE), records of equal time in arrival order. So the
// "first record" an aggregation keeps is the key's earliest, whatever order
// parallel sources delivered them in. An aggregation or a reduce then
// emits only the final value of each key: the last record it emitted for
// the key. Other kinds emit what they emit.
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

	store  *KeyedStore
	groups [][]*keyRun // by key group - start, keys in first-seen order
	index  map[string]*keyRun

	last lastRecord
	w    abi.Writer
}

type keyRun struct {
	recs      [2][]byte // envelopes per input
	counts    [2]int
	latest    [2]int64 // the latest event time held (math.MinInt64 for none)
	unordered [2]bool  // a record came with an earlier time than one before it
}

func newSortedInput(inner Operator, kind pipeline.Kind, batchSize int) *sortedInput {
	return &sortedInput{inner: inner, kind: kind, batchSize: batchSize, index: map[string]*keyRun{},
		keyless: isAggregation(kind)}
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
func (s *sortedInput) finalOnly() bool { return s.kind == pipeline.KindReduce || isAggregation(s.kind) }

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
		if r.Key == nil {
			if s.keyless { // the aggregation applies its on-error to it
				if err := s.inner.Process(input, r.Raw, 1, out); err != nil {
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
		t := int64(math.MinInt64)
		if r.HasTime {
			t = r.Time
		}
		if run.counts[input] == 0 || t > run.latest[input] {
			run.latest[input] = t
		} else if t < run.latest[input] {
			run.unordered[input] = true
		}
		run.recs[input] = append(run.recs[input], r.Raw...)
		run.counts[input]++
	}
	return rd.Err()
}

// inTimeOrder returns the n envelopes in b ordered by event time, stably.
func inTimeOrder(b []byte, n int) ([]byte, error) {
	type at struct {
		t          int64
		start, end int
	}
	recs := make([]at, 0, n)
	rd := abi.NewReader(b, n)
	for start := 0; rd.Next(); start = rd.Offset() {
		r := rd.Current()
		t := int64(math.MinInt64)
		if r.HasTime {
			t = r.Time
		}
		recs = append(recs, at{t, start, rd.Offset()})
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(recs, func(x, y at) int { return cmp.Compare(x.t, y.t) })
	out := make([]byte, 0, len(b))
	for _, r := range recs {
		out = append(out, b[r.start:r.end]...)
	}
	return out, nil
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
	return s.inner.Close(out)
}

func (s *sortedInput) feed(run *keyRun, out Collector) error {
	var col Collector = out
	if s.finalOnly() {
		s.last.has = false
		col = &s.last
	}
	for input := 0; input < 2; input++ {
		b, n := run.recs[input], run.counts[input]
		if run.unordered[input] {
			var err error
			if b, err = inTimeOrder(b, n); err != nil {
				return err
			}
		}
		for off := 0; n > 0; {
			end, k := off, 0
			for ; k < n && k < s.batchSize; k++ {
				var err error
				if end, err = abi.Skip(b, end); err != nil {
					return err
				}
			}
			if err := s.inner.Process(input, b[off:end], k, col); err != nil {
				return err
			}
			off, n = end, n-k
		}
		run.recs[input] = nil
	}
	if s.finalOnly() && s.last.has {
		s.w.AppendRaw(s.last.rec)
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
