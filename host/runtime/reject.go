package runtime

import (
	"unicode/utf8"

	"github.com/sluicehq/sluice/abi"
)

// reject applies co's on-error to a record it could not process: under
// fail it returns the failure, under skip it counts the record, under
// dead-letter it counts it and emits a dead letter on the operator's
// dead-letter side output (dropped when nothing reads it). It is
// OpenContext.Reject, called from the subtask's goroutine.
func (o *chainOp) reject(f *RecordFailure) error {
	m := o.metrics
	switch o.policy {
	case PolicySkip:
		m.skipped.add(1)
	case PolicyDeadLetter:
		m.deadLettered.add(1)
		port, ok := o.deadPort()
		if !ok {
			break
		}
		o.dead = appendDeadLetter(o.dead[:0], f, o.spec.ID, o.st.index)
		if err := o.out.Emit(port, o.dead, 1); err != nil {
			return err
		}
	default:
		return f.err()
	}
	if f.Restart {
		m.restarts.add(1)
	}
	return nil
}

// deadPort is the port of co's dead-letter side output, when some edge
// reads it.
func (o *chainOp) deadPort() (int, bool) {
	tags, _ := portsOf(o.spec)
	p, ok := tags[DeadLetterTag]
	return p, ok
}

// appendDeadLetter appends the dead letter of f: an envelope with the
// original record's event time and key, whose value is the map
//
//	{"error": text, "plugin": name, "operator": id, "subtask": index,
//	 "position": n, "input": path, "line": n, "record": value}
//
// (plugin, position, input and line only when known; subtask is the
// 0-based index, as Flink's subtask index; record is the original value,
// or the line as read when the input was not a record).
func appendDeadLetter(b []byte, f *RecordFailure, operator string, subtask int) []byte {
	var rec abi.Record
	hasRec := false
	if f.Record != nil {
		if r, end, err := abi.ParseRecord(f.Record, 0); err == nil && end == len(f.Record) {
			rec, hasRec = r, true
		}
	}
	n := 4 // error, operator, subtask, record
	if f.Plugin != "" {
		n++
	}
	if f.Position > 0 {
		n++
	}
	if f.Input != "" {
		n++
	}
	if f.Line > 0 {
		n++
	}
	var v []byte
	v = abi.AppendMapHeader(v, n)
	v = abi.AppendStr(abi.AppendStr(v, "error"), f.cause())
	if f.Plugin != "" {
		v = abi.AppendStr(abi.AppendStr(v, "plugin"), f.Plugin)
	}
	v = abi.AppendStr(abi.AppendStr(v, "operator"), operator)
	v = abi.AppendInt(abi.AppendStr(v, "subtask"), int64(subtask))
	if f.Position > 0 {
		v = abi.AppendInt(abi.AppendStr(v, "position"), f.Position)
	}
	if f.Input != "" {
		v = abi.AppendStr(abi.AppendStr(v, "input"), f.Input)
	}
	if f.Line > 0 {
		v = abi.AppendInt(abi.AppendStr(v, "line"), int64(f.Line))
	}
	v = abi.AppendStr(v, "record")
	switch {
	case hasRec:
		v = append(v, rec.Value...)
	case f.Record != nil: // not an envelope: keep the bytes
		v = abi.AppendBin(v, f.Record)
	case utf8.Valid(f.Raw):
		v = abi.AppendStrBytes(v, f.Raw)
	default:
		v = abi.AppendBin(v, f.Raw)
	}
	if hasRec {
		return abi.AppendEnvelope(b, rec.Time, rec.HasTime, rec.Key, v)
	}
	return abi.AppendEnvelope(b, 0, false, nil, v)
}
