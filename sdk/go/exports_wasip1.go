//go:build wasip1

package sdk

// The ABI v1 guest exports (see abi.Export*). Importing the SDK is enough
// for a plugin to export all of them; the names must match package abi, a
// native test checks them.

//go:wasmexport sluice_abi_v1
func exportMarker() {}

//go:wasmexport sluice_buffer
func exportBuffer(size int32) int32 { return int32(eng.buffer(size)) }

//go:wasmexport sluice_open
func exportOpen(ptr, n, subtask, parallelism, maxParallelism int32) int32 {
	cfg, ok := eng.input(uintptr(uint32(ptr)), n)
	if !ok {
		return badInput("sluice_open")
	}
	return guestOpen(cfg, subtask, parallelism, maxParallelism)
}

//go:wasmexport sluice_process
func exportProcess(port, ptr, n, count int32) int32 {
	batch, ok := eng.input(uintptr(uint32(ptr)), n)
	if !ok {
		return badInput("sluice_process")
	}
	return guestProcess(port, batch, count)
}

//go:wasmexport sluice_process_indexed
func exportProcessIndexed(port, ptr, n, count, indexPtr, indexLen int32) int32 {
	batch, ok := eng.input(uintptr(uint32(ptr)), n)
	if !ok {
		return badInput("sluice_process_indexed")
	}
	index, ok := eng.input(uintptr(uint32(indexPtr)), indexLen)
	if !ok {
		return badInput("sluice_process_indexed")
	}
	return guestProcessIndexed(port, batch, count, index)
}

//go:wasmexport sluice_partition
func exportPartition(ptr, n, count, channels int32) int32 {
	batch, ok := eng.input(uintptr(uint32(ptr)), n)
	if !ok {
		return badInput("sluice_partition")
	}
	return guestPartition(batch, count, channels)
}

//go:wasmexport sluice_close
func exportClose() int32 { return guestClose() }

//go:wasmexport sluice_describe
func exportDescribe() int32 { return guestDescribe() }

//go:wasmexport sluice_snapshot
func exportSnapshot() int32 { return guestSnapshot() }

//go:wasmexport sluice_restore
func exportRestore(ptr, n int32) int32 {
	element, ok := eng.input(uintptr(uint32(ptr)), n)
	if !ok {
		return badInput("sluice_restore")
	}
	return guestRestore(element)
}

//go:wasmexport sluice_on_timer
func exportOnTimer(kind int32, ts int64, ptr, n int32) int32 {
	key, ok := eng.input(uintptr(uint32(ptr)), n)
	if !ok {
		return badInput("sluice_on_timer")
	}
	return guestOnTimer(kind, ts, key)
}
