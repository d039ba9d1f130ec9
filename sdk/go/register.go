package sdk

import "github.com/sluicehq/sluice/abi"

// Registration functions. Call exactly one of them from an init function
// of the plugin's main package; the host runs init functions when it calls
// the module's _initialize export, before any other export.

// Map registers a map: one output record per input record. Returning the
// input record, edited or not, is the cheapest; the zero Record is an error.
func Map(fn func(Record) (Record, error)) *Operator {
	need(fn == nil, "Map")
	return register(&Operator{kind: abi.KindMap, mapFn: fn})
}

// Filter registers a filter: the records for which fn returns true pass,
// unchanged.
func Filter(fn func(Record) (bool, error)) *Operator {
	need(fn == nil, "Filter")
	return register(&Operator{kind: abi.KindFilter, filterFn: fn})
}

// FlatMap registers a flat map: fn emits zero or more records per input.
func FlatMap(fn func(Record, Emitter) error) *Operator {
	need(fn == nil, "FlatMap")
	return register(&Operator{kind: abi.KindFlatMap, flatMapFn: fn})
}

// Process registers a process function: it emits to the main output with
// ctx.Emit and to side outputs (declared with Outputs) with ctx.EmitTo.
func Process(fn func(Record, Context) error) *Operator {
	need(fn == nil, "Process")
	return register(&Operator{kind: abi.KindProcess, processFn: fn})
}

// KeyedProcess registers a process function on a keyed stream: ctx.State
// reads and writes host-managed state scoped to the record's key.
func KeyedProcess(fn func(Record, Context) error) *Operator {
	need(fn == nil, "KeyedProcess")
	return register(&Operator{kind: abi.KindProcess, keyed: true, processFn: fn})
}

// Reduce registers a keyed reduce, as Flink's KeyedStream.reduce: the
// first record of a key is stored and emitted as it is; each later record
// r gives fn(acc, r), which is stored (keyed state slot 0) and emitted.
// The emitted record carries the input's key and event time.
func Reduce(fn func(acc, r Record) (Record, error)) *Operator {
	need(fn == nil, "Reduce")
	return register(&Operator{kind: abi.KindReduce, keyed: true, reduceFn: fn})
}

// CoMap registers a co-map over two connected inputs: map1 maps records of
// input 0, map2 those of input 1, into one output.
func CoMap(map1, map2 func(Record) (Record, error)) *Operator {
	need(map1 == nil || map2 == nil, "CoMap")
	return register(&Operator{kind: abi.KindCoMap, mapFn: map1, map2Fn: map2})
}

// Partitioner registers a custom partitioner (Flink's Partitioner): for a
// record's key it returns a channel in [0, n). An index outside that range
// is reported by the host as an error, never wrapped.
func Partitioner(fn func(key Key, n int) int) *Operator {
	need(fn == nil, "Partitioner")
	return register(&Operator{kind: abi.KindPartitioner, partFn: fn})
}

// KeySelector registers a key selector: it returns the key of a record
// (for example r.Get("country").Key(), which copies nothing). A nil or
// missing key is an error, as in Flink.
func KeySelector(fn func(Record) (Key, error)) *Operator {
	need(fn == nil, "KeySelector")
	return register(&Operator{kind: abi.KindKeySelector, keyFn: fn})
}

// OnOpen registers a hook run once per instance by sluice_open, before the
// first record, with the operator's config and place in the job. An error
// fails open with abi.StatusConfig unless it is an *Error with another
// status.
func OnOpen(fn func(OpenContext) error) { reg.onOpen = fn }

// OnClose registers a hook run once by sluice_close at the end of input.
func OnClose(fn func() error) { reg.onClose = fn }

// OnFinish registers a hook run once at the end of input, before OnClose,
// that may still emit: Flink's StreamOperator.finish. A local
// pre-aggregator flushes its partial results here.
func OnFinish(fn func(Emitter) error) { reg.onFinish = fn }

// need panics at registration when a function is missing.
func need(missing bool, what string) {
	if missing {
		panic("sluice sdk: " + what + " needs a non-nil function")
	}
}
