// Package runtime executes a planned job graph on one machine: one
// goroutine per subtask, chained operators calling each other directly,
// bounded queues of record batches between tasks, partitioners applied per
// record, back-pressure, a clean end of stream and metrics per subtask.
package runtime

// This file is the contract between the engine and what it runs: built-in
// operators implement Operator directly, and host/plugin adapts Wasm
// plugin instances to it (host/plugin imports runtime, never the reverse).

import (
	"time"

	"github.com/sluicehq/sluice/host/pipeline"
)

// Operator processes record batches for one subtask. The engine calls it
// from one goroutine only: Open once, Process for each input batch, then
// Close once at the end of the input (or after an error, to release
// resources, with out possibly nil).
type Operator interface {
	Open(ctx *OpenContext) error
	// Process consumes count records (abi wire format: concatenated
	// [event_time, key, value] envelopes) that arrived on input (0, or 1
	// for a co-operator's second input). batch is only valid during the
	// call. Output goes to out before Process returns.
	Process(input int, batch []byte, count int, out Collector) error
	// Close ends the input. A keyed operator in batch mode emits its final
	// results here. out is nil when the job is being torn down after an
	// error: release resources only.
	Close(out Collector) error
}

// Collector receives an operator's output.
type Collector interface {
	// Emit hands count records (abi wire format) to output port (0 is the
	// main output; side outputs get ports from OpenContext.Port). The
	// collector copies what it keeps: buf may be reused once Emit returns.
	Emit(port int, buf []byte, count int) error
}

// EndsCollector is a Collector that also takes where each record of a
// batch ends: ends holds count little-endian uint32, the i-th the offset
// in buf just past record i (abi.ImportEmitEnds's layout). What it
// routes by key then reads each record's head instead of walking the
// whole record to find where the next one starts. A producer that knows
// the ends — it wrote the records, or the host checked them against the
// ends a plugin gave (abi.CheckBatchEnds) — calls EmitEnds when its
// collector has it. Never pass ends nothing checked: a value that is not
// the one msgpack value its end says would go unnoticed. The collector
// copies what it keeps, ends included.
type EndsCollector interface {
	Collector
	EmitEnds(port int, buf []byte, count int, ends []byte) error
}

// EmitWithEnds emits on out with the ends when out takes them.
func EmitWithEnds(out Collector, port int, buf []byte, count int, ends []byte) error {
	if ec, ok := out.(EndsCollector); ok && len(ends) == 4*count {
		return ec.EmitEnds(port, buf, count, ends)
	}
	return out.Emit(port, buf, count)
}

// OpenContext is what an operator learns when it opens: Flink's
// RuntimeContext.
type OpenContext struct {
	Operator       string // operator id
	Subtask        int    // 0-based
	Parallelism    int
	MaxParallelism int
	Config         map[string]any // the operator's config: from the pipeline
	// KeyGroupStart/End: the inclusive key-group range of this subtask
	// when the operator is keyed.
	KeyGroupStart, KeyGroupEnd int
	// State is the host-managed keyed state of this subtask; nil for an
	// unkeyed operator.
	State KeyedState
	// Port returns the output port of a side-output tag ("" is 0, the main
	// output). Tags that nothing consumes return -1: records emitted there
	// are dropped, as Flink drops unconsumed side outputs.
	Port func(tag string) int
	// Kind is the operator's kind as the pipeline uses it (map, filter,
	// ...): a plugin's output is held to it (a map emits one record per
	// input record).
	Kind pipeline.Kind
	// OnError is the operator's error policy (the pipeline's on-error).
	OnError ErrorPolicy
	// Reject applies OnError to one record the operator cannot process:
	// it returns the error to fail with (PolicyFail), or nil once the
	// record was counted and skipped or sent to the dead-letter output.
	// Nil outside the engine: every failure fails.
	Reject func(*RecordFailure) error

	idle *counter // a source's idle time (AddIdle); nil outside the engine
}

// AddIdle counts d as time the source spent waiting for its next record
// (a rate limit, a read that blocked): idle time, as Flink counts a source
// waiting for input, not busy time. Only sources call it; outside the
// engine it does nothing.
func (c *OpenContext) AddIdle(d time.Duration) {
	if c != nil && c.idle != nil && d > 0 {
		c.idle.add(int64(d))
	}
}

// GuestLog is implemented by operators that run guest code whose stdout
// and stderr are capped: LogLinesDropped is how many lines fell off the
// kept tail so far. It is called from any goroutine.
type GuestLog interface {
	LogLinesDropped() int64
}

// KeyedState is keyed state held by the host, stored per key group so that
// later work can checkpoint it and rescale by moving whole key groups.
// key is the msgpack-encoded record key; slot separates independent state
// values of one operator. Values are copied in and out.
type KeyedState interface {
	Get(slot int, key []byte, dst []byte) (val []byte, ok bool, err error)
	Put(slot int, key, val []byte) error
	Delete(slot int, key []byte) error
}

// Plugins creates plugin-backed parts of a job. host/plugin implements it;
// tests may use fakes. Each call returns a new instance owned by one
// subtask.
type Plugins interface {
	// Operator returns an operator for the plugin-backed operator opID
	// (map, filter, flat-map, process, reduce, co-map, co-process) for the
	// given subtask.
	Operator(opID, plugin string, subtask int) (Operator, error)
	// Partitioner returns a custom partitioner instance of plugin for the
	// upstream subtask of edge from -> to.
	Partitioner(plugin string, from, to string, subtask int) (CustomPartitioner, error)
	// KeySelector returns a key-selector instance of plugin.
	KeySelector(plugin string, from, to string, subtask int) (KeySelector, error)
}

// CustomPartitioner is a user partitioner (Flink's Partitioner<K>): for
// each of count records (abi wire format, the envelope key set to the
// partitioning key) it writes a channel to out[i]. Values outside [0, n)
// are returned as they are: the engine reports them as errors.
type CustomPartitioner interface {
	Partition(batch []byte, count, n int, out []int32) error
	Close() error
}

// KeySelector extracts the key of each of count records: it returns the
// keys as count concatenated msgpack values.
type KeySelector interface {
	Keys(batch []byte, count int, dst []byte) ([]byte, error)
	Close() error
}
