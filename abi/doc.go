// Package abi is the normative contract between the sluice host and a plugin
// (a WebAssembly module): the names and signatures of every guest export and
// host import, who owns which memory, the status codes, the batch wire
// format and the key hash. It imports only the standard library so that the
// host and the Go guest SDK share one implementation of the wire format.
//
// # Version
//
// This is ABI v1. A plugin declares it by exporting the marker function
// [MarkerExport] ("sluice_abi_v1", signature () -> (), never called) and by
// importing host functions from the module [ImportModule] ("sluice_v1").
// The host checks both on the compiled module before it instantiates it, so
// a plugin built for another version fails to load with a message that names
// what differs.
//
// # Memory ownership
//
//   - The guest owns its linear memory. The host never frees guest memory
//     and never calls the guest's allocator during a host call.
//   - Input: the host asks the guest for a buffer with [ExportBuffer]
//     (buffer(size) -> ptr), writes the bytes there, then calls the export
//     that consumes them. The buffer stays the guest's; it may reuse it.
//     A guest that exports [ExportProcessIndexed] gets, in the same buffer
//     after the batch, an index of where its records and fields are
//     ([AppendIndex]), so that it need not scan the batch itself.
//   - Output: the guest calls [ImportEmit] (emit(port, ptr, len, count))
//     with bytes in its own memory; the host copies them before emit
//     returns, so the guest may overwrite them at once. A guest that knows
//     where each of its records ends may call [ImportEmitEnds] instead,
//     with those ends (count little-endian u32, also in its memory): the
//     host checks the records one by one against them ([CheckBatchEnds]).
//   - The host never keeps a view of guest memory across a call into the
//     guest (memory.grow may move it).
//   - Every (ptr, len) pair the guest passes is checked in 64-bit
//     arithmetic against the memory size; an out-of-bounds pair fails the
//     call with [StatusHost] and poisons the instance.
//
// # Batches
//
// Records travel in batches: count concatenated records, with count passed
// as an argument (never a header that would need back-patching). Each record
// is a msgpack array of three elements, the envelope:
//
//	[ event_time, key, value ]
//	  event_time: int (milliseconds since the Unix epoch) or nil
//	  key:        the record's key (any msgpack value) or nil when unkeyed
//	  value:      the record itself, by convention a msgpack map str -> any
//
// The host reads the event time and the key without decoding the value;
// for a keyBy it reads one top-level field of the value map
// ([MapField]). See [Reader] and [Writer].
//
// # Calls
//
// One call per batch. A worked example, a filter keeping amount > 0:
//
//	host: p := buffer(len(batch))           // guest returns a pointer
//	host: copy batch into memory[p:p+len]
//	host: st := process(0, p, len, 1024)    // port 0 = the main input
//	guest: for each record: if amount > 0 append it to its output buffer
//	guest: emit(0, out, outLen, kept)       // once per output port per batch
//	guest: return 0                         // StatusOK
//	host: the copied output is now the batch's result
//
// A non-zero status fails the batch: the host reads the text the guest
// passed to [ImportError] (if any) and drops any output emitted during the
// call (a batch is all-or-nothing). A trap, a Go panic that escapes, a WASI
// proc_exit or a deadline is not a status: the instance is poisoned and
// replaced.
package abi
