// Package sdk is the Go guest SDK of sluice: it turns a few lines of Go
// into a sluice operator plugin, a WebAssembly module built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o op.wasm .
//
// A plugin is a main package that registers one operator from an init
// function. In a c-shared wasip1 module main is never called: the host
// calls the _initialize export once, which initialises the Go runtime and
// runs every package's init functions (the plugin's included) before it
// returns; only then may it call the ABI exports (an export called before
// _initialize traps with "wasmexport function called before runtime
// initialization"):
//
//	package main
//
//	import sdk "github.com/sluicehq/sluice/sdk/go"
//
//	func init() {
//		sdk.Filter(func(r sdk.Record) (bool, error) { return r.Int("amount") > 0, nil })
//	}
//
//	func main() {}
//
// Registration functions: Map, Filter, FlatMap, Process and KeyedProcess
// (side outputs with Context.EmitTo, keyed state with Context.State),
// Reduce (keyed), CoMap, Partitioner and KeySelector; OnOpen and OnClose
// hooks get the operator's config and place in the job.
//
// # Records
//
// A Record is a view over the msgpack bytes the host sent: getters such
// as r.Int("amount") scan them in place, and setters such as
// r.SetInt("amount", 2*a) record an edit that is applied when the record
// is written to the output buffer (fields keep their order, new ones go
// last); a number or bool set over a value of the same encoded size is
// written in place, which an operator cannot tell from an edit (a Value
// read with Get before keeps the old value). Neither reflects nor
// allocates in steady state. A Record is valid
// only during the call it was given to; Clone keeps one longer. Package
// structs decodes a record into a Go struct, slower, for convenience.
//
// A Record is a handle on one view, not a value: setters (Set*, Delete)
// change r in place and return r itself for chaining, so after
// r2 := r.SetInt("n", 1), r and r2 are the same record. Emit writes the
// record as it is at that moment, and a later setter changes r, not what
// was emitted: in
//
//	out.Emit(r.SetStr("a", "1"))
//	out.Emit(r.SetStr("b", "2"))
//
// the second record has both a and b. To emit variants of one input,
// Clone first, which copies r with its edits so far:
//
//	out.Emit(r.Clone().SetStr("a", "1"))
//	out.Emit(r.Clone().SetStr("b", "2"))
//
// # What the SDK does for the host
//
// Importing the package exports the whole ABI v1 (package abi):
// sluice_abi_v1, sluice_buffer, sluice_open, sluice_process,
// sluice_partition, sluice_close and sluice_describe, whatever the kind
// (calls that do not fit the kind return abi.StatusUnsupported). Every
// export recovers panics into abi.StatusUser with the panic text and
// where the plugin's code panicked ("panic: assignment to entry in nil
// map (at main.go:12 in main.init.func1)"), sends error text through the error import, writes each output port into one
// buffer handed to the host with one emit at the end of the call and
// whenever it reaches 1 MiB, and yields
// (runtime.Gosched) after each call so the garbage collector runs.
//
// # Testing
//
// Natively (without GOOS=wasip1) the host imports go to an in-process
// fake: package sdktest runs a registered operator over records written
// as JSON or Go maps and returns its output per port, so plugins are
// unit-tested with go test.
package sdk
