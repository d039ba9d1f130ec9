package sdk

import (
	"errors"
	"strconv"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
)

// engine is the state of the running instance. A wasm instance runs one
// call at a time on one goroutine, so there is exactly one, eng.
type engine struct {
	inbuf   []byte   // the buffer handed out by sluice_buffer
	outs    []output // 0 is the main output, i+1 the i-th declared side output
	in      view     // the input record being processed, reused for each
	arena   arena    // views of the records made during the current input record
	winRecs []Record // a process-window call's records
	cur     *view    // the input record being processed
	idx     int      // cur's index in the batch
	inCall  bool     // inside process: NewRecord uses the arena
	err     error    // first error met by Emit during the current record
	states  [][]byte // read buffer per keyed-state slot
	tmp     []byte   // scratch for encoding state values
	cfg     openState
	// the timer firing (sluice_on_timer): its key, and its time when
	// records emitted carry it
	timerKey     []byte
	timerTime    int64
	hasTimerTime bool
}

// output is one output port's buffer, handed to the host with one emit at
// the end of a call and whenever it reaches flushAt.
type output struct {
	port     int32
	resolved bool // port asked from the host (side outputs only)
	w        abi.Writer
}

var eng engine

// newInstance forgets everything but the registration, as a fresh wasm
// instance would.
func (e *engine) newInstance() { *e = engine{} }

// beginCall prepares the output buffers for the registered operator.
func (e *engine) beginCall() {
	n := 1
	if reg.op != nil {
		n += len(reg.op.outputs)
	}
	for len(e.outs) < n {
		e.outs = append(e.outs, output{})
	}
	e.outs = e.outs[:n]
	e.outs[0].resolved = true // port 0, the main output
	for i := range e.outs {
		e.outs[i].w.Reset()
	}
	e.arena.release()
	e.cur, e.err = nil, nil
}

// endCall drops what a failed or finished call left behind.
func (e *engine) endCall() {
	e.inCall, e.cur = false, nil
	e.arena.release()
	for i := range e.outs {
		o := &e.outs[i]
		if cap(o.w.Buf) > maxKeptOutput {
			o.w.Buf = nil // let one huge batch's buffer go
		}
		o.w.Reset()
	}
}

// maxKeptOutput is the largest output buffer kept between calls.
const maxKeptOutput = 8 << 20

// emit appends r to output out; errors are kept for the end of the record.
func (e *engine) emit(out int, r Record) {
	if !e.inCall {
		panic("sluice sdk: Emit called outside of an operator call")
	}
	if r.v == nil {
		e.keep(errors.New("emitted the zero Record"))
		return
	}
	o := &e.outs[out]
	if !o.resolved {
		o.port, o.resolved = hostcall.Port(reg.op.outputs[out-1]), true
	}
	if o.port < 0 {
		return // nothing consumes this side output: dropped, as in Flink
	}
	v := r.v
	switch {
	case !v.edited():
		o.w.Buf = append(o.w.Buf, v.raw...)
	case v.raw != nil && !v.dirty && appendSplice(&o.w.Buf, v, len(v.raw)-len(v.value)):
		// one field set on an indexed fixmap, without the call through
		// appendRecord (a call costs 10-20 ns in a Go wasm guest)
	default:
		var err error
		if o.w.Buf, err = appendRecord(o.w.Buf, v); err != nil {
			e.keep(err)
			return
		}
	}
	o.w.Count++
	if len(o.w.Buf) >= flushAt {
		if err := e.flushOut(o); err != nil {
			e.keep(err)
		}
	}
}

// flushAt is the size at which an output buffer goes to the host before the
// call ends: a guest's memory then does not grow with its batch (a process
// emitting 10,000 records to two outputs ran a Go guest out of its 16 MiB
// with every record held until the end of the call).
const flushAt = 1 << 20

func (e *engine) keep(err error) {
	if e.err == nil {
		e.err = err
	}
}

// flush hands every non-empty output buffer to the host, one emit each.
func (e *engine) flush() error {
	for i := range e.outs {
		if err := e.flushOut(&e.outs[i]); err != nil {
			return err
		}
	}
	return nil
}

// flushOut hands o's records to the host, if it has any.
func (e *engine) flushOut(o *output) error {
	if o.w.Count == 0 || o.port < 0 {
		return nil
	}
	if st := abi.Status(hostcall.Emit(o.port, o.w.Buf, int32(o.w.Count))); st != abi.StatusOK {
		return &Error{Status: st, Text: "emit on port " + strconv.Itoa(int(o.port)) + ": " + st.String()}
	}
	o.w.Reset()
	return nil
}
