package sdk

import (
	"strconv"

	"github.com/sluicehq/sluice/abi"
)

// Window is the window a ProcessWindow function is called for: its
// bounds in epoch milliseconds (End exclusive) and its key.
type Window struct {
	Start, End int64
	key        []byte
}

// MaxTimestamp is End - 1, the window's last millisecond (Flink's
// TimeWindow.maxTimestamp), the time its output records carry.
func (w Window) MaxTimestamp() int64 { return w.End - 1 }

// Key is the window's key: the key-by key of its records (nil raw bytes
// for a window-all).
func (w Window) Key() Key { return Key{Value{w.key}} }

// ProcessWindow registers a process-window function, Flink's
// ProcessWindowFunction: when a window fires, fn gets the window (its
// bounds and key) and every record the window holds, in arrival order,
// and emits the window's output with out.Emit. Each output record is a
// map; the host gives it the window's bounds (in the fields the
// pipeline's window names, window_start and window_end by default), the
// window's key and its max timestamp. The pipeline runs it as
//
//   - id: top
//     key-by: auction
//     window: { type: tumbling, size: 10s }
//     process: top-bids
//
// The records are valid during the call only (Clone one to keep it).
func ProcessWindow(fn func(w Window, elements []Record, out Emitter) error) *Operator {
	need(fn == nil, "ProcessWindow")
	return register(&Operator{kind: abi.KindProcessWindow, windowFn: fn})
}

// processWindow is run for a process-window: the batch is the window's
// header record (abi.AppendWindowHeader) and its records.
func (e *engine) processWindow(op *Operator, batch []byte, count int32) error {
	if count < 1 {
		return &Error{Status: abi.StatusMalformed, Text: "sluice_process: a process-window call has no window header record"}
	}
	h, end, err := abi.ParseRecord(batch, 0)
	if err != nil {
		return &Error{Status: abi.StatusMalformed, Text: "sluice_process: window header: " + err.Error()}
	}
	start, wend, err := abi.ReadWindowHeader(h.Value)
	if err != nil {
		return &Error{Status: abi.StatusMalformed, Text: "sluice_process: " + err.Error()}
	}
	w := Window{Start: start, End: wend, key: h.Key}
	recs := e.winRecs[:0]
	off := end
	for i := 1; i < int(count); i++ {
		v := e.arena.get()
		if off >= len(batch) {
			return e.batchError(batch, count)
		}
		if off, err = v.split(batch, off); err != nil {
			return &Error{Status: abi.StatusMalformed, Text: "sluice_process: record " + strconv.Itoa(i) + ": " + err.Error()}
		}
		recs = append(recs, Record{v})
	}
	if off != len(batch) {
		return e.batchError(batch, count)
	}
	e.winRecs = recs
	err = op.windowFn(w, recs, Emitter{})
	clear(recs)
	e.arena.release()
	if err == nil {
		err = e.err
	}
	if err != nil {
		return prefixed("window ["+strconv.FormatInt(start, 10)+", "+strconv.FormatInt(wend, 10)+"): ", err, abi.StatusUser)
	}
	return nil
}
