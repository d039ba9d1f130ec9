package sdk

import "github.com/sluicehq/sluice/abi"

// Emitter collects the output of a FlatMap. Records are encoded into the
// output buffer when emitted, so a record may be edited and emitted again.
type Emitter struct{}

// Emit sends r to the main output.
func (Emitter) Emit(r Record) { eng.emit(0, r) }

// Context is what a Process or KeyedProcess function gets with each
// record: emission to the main and side outputs, the key and, for a
// KeyedProcess, the keyed state.
type Context struct{}

// Emit sends r to the main output.
func (Context) Emit(r Record) { eng.emit(0, r) }

// EmitTo sends r to the side output tag, which must have been declared
// with Operator.Outputs ("" is the main output). Records sent to a side
// output that nothing in the pipeline consumes are dropped, as in Flink.
func (Context) EmitTo(tag string, r Record) {
	i := -1
	if reg.op != nil {
		i = reg.op.output(tag)
	}
	if i < 0 {
		eng.keep(&Error{Status: abi.StatusUser, Text: "EmitTo(\"" + tag + "\"): undeclared side output; declare it with .Outputs(\"" + tag + "\")"})
		return
	}
	eng.emit(i, r)
}

// Key returns the key of the record being processed.
func (Context) Key() Key {
	if eng.cur == nil {
		if eng.timerKey != nil { // in OnTimer: the timer's key
			return Key{Value{eng.timerKey}}
		}
		return Key{}
	}
	return Key{Value{eng.cur.keyRaw()}}
}

// State returns keyed-state slot slot for the current key (KeyedProcess
// only; other operators get errors from its methods).
func (Context) State(slot int) State { return State{slot: slot} }
