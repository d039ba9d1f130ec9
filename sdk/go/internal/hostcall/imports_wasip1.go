//go:build wasip1

package hostcall

import "unsafe"

// The ABI v1 host imports (see abi.ImportModule and abi.Import*). The
// names must match package abi; a native test checks them.

//go:wasmimport sluice_v1 emit
func emit(port int32, ptr unsafe.Pointer, n int32, count int32) int32

//go:wasmimport sluice_v1 port
func port(ptr unsafe.Pointer, n int32) int32

//go:wasmimport sluice_v1 error
func hostError(ptr unsafe.Pointer, n int32)

//go:wasmimport sluice_v1 state_get
func stateGet(slot int32, keyPtr unsafe.Pointer, keyLen int32, bufPtr unsafe.Pointer, bufCap int32) int32

//go:wasmimport sluice_v1 state_put
func statePut(slot int32, keyPtr unsafe.Pointer, keyLen int32, valPtr unsafe.Pointer, valLen int32) int32

//go:wasmimport sluice_v1 state_del
func stateDel(slot int32, keyPtr unsafe.Pointer, keyLen int32) int32

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

// Emit hands count records in buf to the host on an output port.
func Emit(p int32, buf []byte, count int32) int32 {
	return emit(p, ptr(buf), int32(len(buf)), count)
}

// Port returns the output port of a side-output tag.
func Port(tag string) int32 {
	return port(unsafe.Pointer(unsafe.StringData(tag)), int32(len(tag)))
}

// Error sets the error text of the current call.
func Error(text string) {
	hostError(unsafe.Pointer(unsafe.StringData(text)), int32(len(text)))
}

// StateGet reads keyed state into buf; see abi.ImportStateGet.
func StateGet(slot int32, key, buf []byte) int32 {
	return stateGet(slot, ptr(key), int32(len(key)), ptr(buf), int32(cap(buf)))
}

// StatePut stores a copy of val under (slot, key).
func StatePut(slot int32, key, val []byte) int32 {
	return statePut(slot, ptr(key), int32(len(key)), ptr(val), int32(len(val)))
}

// StateDel deletes the value under (slot, key).
func StateDel(slot int32, key []byte) int32 {
	return stateDel(slot, ptr(key), int32(len(key)))
}
