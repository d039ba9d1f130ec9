package plugin

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/bisect"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/runtime"
)

// Poison-record isolation. When a sluice_process call fails (a non-zero
// status, a trap, a deadline, a refused emit...) and the engine gave the
// operator an on-error (OpenContext.Reject), the host narrows the failure
// down to its records by bisection (package bisect): it runs each half of
// the batch again, on the same instance or, when the failure poisoned it,
// a fresh one, and splits a half that fails again until one record is
// left. Each call is all-or-nothing, so:
//
//   - skip and dead-letter: the output of every sub-batch that succeeds is
//     handed on at once, in input order, so the good records' output
//     arrives exactly once and in order; each record that fails alone goes
//     to Reject. Keyed-state writes of failed calls are undone (journal.go).
//     A record whose failure poisoned the instance counts as one crash of
//     the restart policy (restart.go); the replacements made while
//     bisecting do not.
//   - fail: the bisection finds the first record that fails alone, which
//     the job's error names (its position in the subtask's input and its
//     key); the output of the records before it is handed on first, as a
//     Flink task would have emitted it before it reached the bad record.
//     A batch in which no record fails alone (too much output, or too
//     slow, for one call) is done in the smaller calls, as under skip.
//
// A batch of n records with one bad record costs about 2·log2(n) calls.
// A call stopped at its call-timeout (or call-fuel) is not bisected: each
// half holding the runaway record would wait a whole timeout again (nine
// of them for a batch of 512); its records run one call each instead, so
// only the runaway ones wait, and one timeout is counted per such record.

// span is one record of a batch: batch[start:end].
type span struct{ start, end int }

// isolatable reports whether a failed sluice_process call may be narrowed
// down to its records.
func (o *Operator) isolatable(err error) bool {
	if o.reject == nil || o.r.ctx.Err() != nil {
		return false
	}
	var pe *PluginError
	if !errors.As(err, &pe) || (pe.Export != abi.ExportProcess && pe.Export != abi.ExportProcessIndexed && pe.Export != abi.ExportBuffer) {
		return false // e.g. the replacement instance failed to open
	}
	switch {
	case errors.Is(pe.Cause, ErrCanceled), errors.Is(pe.Cause, ErrRestartLimit):
		return false
	}
	return true
}

// slow reports whether err stopped a call at its call-timeout or budget.
func slow(err error) bool {
	var pe *PluginError
	return errors.As(err, &pe) && errors.Is(pe.Cause, ErrDeadline)
}

// isolate narrows down the failure first of a batch of count records.
func (o *Operator) isolate(input int, batch []byte, count int, out runtime.Collector, first error) error {
	o.spans = o.spans[:0]
	rd := abi.NewReader(batch, count)
	for start := 0; rd.Next(); start = rd.Offset() {
		o.spans = append(o.spans, span{start, rd.Offset()})
	}
	if rd.Err() != nil || len(o.spans) != count {
		return first // not records the host can split
	}
	// Under fail too, a batch whose every part passed in smaller calls
	// (it was too much output, or too slow, for one call) is done: each
	// record's output went on once, and no record failed to name.
	return bisect.Narrow(&narrowing{o: o, input: input, batch: batch, out: out}, 0, count, first)
}

// narrowing is the calls of one isolate, over the records o.spans of
// batch (bisect.Calls). Under fail too: a part that passes lies before the
// first record that fails alone, if any (parts run in order, and that
// record's reject ends the narrowing).
type narrowing struct {
	o     *Operator
	input int
	batch []byte
	out   runtime.Collector
	last  *instance // the instance of the last call that passed
}

func (n *narrowing) Run(lo, hi int) error {
	spans := n.o.spans
	in, err := n.o.run(n.input, n.batch[spans[lo].start:spans[hi-1].end], hi-lo)
	n.last = in
	return err
}

func (n *narrowing) Deliver() error            { return n.last.deliver(n.out) }
func (n *narrowing) Narrowable(err error) bool { return n.o.isolatable(err) }
func (n *narrowing) Slow(err error) bool       { return slow(err) }
func (n *narrowing) Reject(i int, cause error) error {
	return n.o.rejectOne(n.batch, n.o.spans[i], i, cause)
}

// rejectOne hands the record s (record idx of the batch), which failed
// alone with cause, to the on-error.
func (o *Operator) rejectOne(batch []byte, s span, idx int, cause error) error {
	var pe *PluginError
	if !errors.As(cause, &pe) {
		return cause
	}
	rec := batch[s.start:s.end]
	pos := o.seen + int64(idx) + 1
	e := *pe
	// The call held this record alone: the SDKs' "record 0: " prefix says
	// less than the position the host now names.
	if n, stripped, ok := pe.RecordIndex(); ok && n == 0 {
		e = *stripped
	}
	e.Record, e.Value = recordName(pos, rec), recordValue(rec)
	restart := e.Poisoned && o.policy != runtime.PolicyFail
	if restart {
		if err := o.r.crashed(&e); err != nil {
			return err
		}
	}
	return o.reject(&runtime.RecordFailure{
		Record: rec, Position: pos, Plugin: o.r.m.name, Err: &e,
		Cause: e.Export + ": " + e.Cause.Error(), Restart: restart,
	})
}

// recordValue is the value of record rec for errors, "" when rec does not
// parse (the host checked it before the call: it does).
func recordValue(rec []byte) string {
	r, _, err := abi.ParseRecord(rec, 0)
	if err != nil {
		return ""
	}
	return runtime.Preview(r.Value)
}

// recordName names a record for errors: `input record 37 (key "k")`.
func recordName(pos int64, rec []byte) string {
	s := fmt.Sprintf("input record %d", pos)
	r, _, err := abi.ParseRecord(rec, 0)
	if err != nil || r.Key == nil {
		return s
	}
	key, err := codec.MsgpackToJSON(nil, r.Key)
	if err != nil {
		return s
	}
	const limit = 64
	if len(key) > limit {
		key = append(key[:limit:limit], "..."...)
	}
	return s + " (key " + printable(string(key)) + ")"
}
