// Package hostcall is the SDK's only contact with the host: the ABI v1 host
// imports (emit, port, error, state_get, state_put, state_del) behind a
// slice-based API, and the table of guest entry points that lets the native
// test harness call the SDK the way a host would.
//
// Under GOOS=wasip1 the functions call the real //go:wasmimport imports of
// module sluice_v1. Natively they call Fake, an in-process host that
// sdk/go/sdktest installs; with no Fake they panic with a hint.
package hostcall

// Exports are the SDK's implementations of the ABI exports, with pointers
// already turned into slices. The SDK fills Guest in natively (under wasip1
// the real //go:wasmexport functions call the same code), so the native
// harness drives an operator exactly as the host drives a module.
type Exports struct {
	// NewInstance forgets all per-instance state, as a fresh wasm instance
	// would start (the registered operator stays).
	NewInstance func()
	// Open is sluice_open with the config already in a slice.
	Open func(config []byte, subtask, parallelism, maxParallelism int32) int32
	// Process is sluice_process.
	Process func(port int32, batch []byte, count int32) int32
	// ProcessIndexed is sluice_process_indexed: index is abi.AppendIndex
	// of the batch, 4-byte aligned in memory.
	ProcessIndexed func(port int32, batch []byte, count int32, index []byte) int32
	// Partition is sluice_partition.
	Partition func(batch []byte, count, n int32) int32
	// Close is sluice_close.
	Close func() int32
	// Describe is sluice_describe.
	Describe func() int32
	// Snapshot is sluice_snapshot.
	Snapshot func() int32
	// Restore is sluice_restore with the element already in a slice.
	Restore func(element []byte) int32
	// OnTimer is sluice_on_timer with the key already in a slice.
	OnTimer func(kind int32, ts int64, key []byte) int32
}

// Guest holds the SDK's entry points (set natively by package sdk).
var Guest Exports
