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

// List and map state, and clear: optional imports (abi.ImportStateListGet
// and the rest). A module imports one only when the plugin calls it.

//go:wasmimport sluice_v1 state_list_get
func stateListGet(slot int32, keyPtr unsafe.Pointer, keyLen int32, bufPtr unsafe.Pointer, bufCap int32) int32

//go:wasmimport sluice_v1 state_list_append
func stateListAppend(slot int32, keyPtr unsafe.Pointer, keyLen int32, valPtr unsafe.Pointer, valLen int32) int32

//go:wasmimport sluice_v1 state_list_update
func stateListUpdate(slot int32, keyPtr unsafe.Pointer, keyLen int32, bufPtr unsafe.Pointer, bufLen int32) int32

//go:wasmimport sluice_v1 state_map_get
func stateMapGet(slot int32, keyPtr unsafe.Pointer, keyLen int32, ukPtr unsafe.Pointer, ukLen int32, bufPtr unsafe.Pointer, bufCap int32) int32

//go:wasmimport sluice_v1 state_map_put
func stateMapPut(slot int32, keyPtr unsafe.Pointer, keyLen int32, ukPtr unsafe.Pointer, ukLen int32, valPtr unsafe.Pointer, valLen int32) int32

//go:wasmimport sluice_v1 state_map_del
func stateMapDel(slot int32, keyPtr unsafe.Pointer, keyLen int32, ukPtr unsafe.Pointer, ukLen int32) int32

//go:wasmimport sluice_v1 state_map_contains
func stateMapContains(slot int32, keyPtr unsafe.Pointer, keyLen int32, ukPtr unsafe.Pointer, ukLen int32) int32

//go:wasmimport sluice_v1 state_map_entries
func stateMapEntries(slot int32, keyPtr unsafe.Pointer, keyLen int32, bufPtr unsafe.Pointer, bufCap int32) int32

//go:wasmimport sluice_v1 state_clear
func stateClear(slot int32, keyPtr unsafe.Pointer, keyLen int32) int32

func sptr(s string) unsafe.Pointer { return unsafe.Pointer(unsafe.StringData(s)) }

// ListGet reads the list of (slot, key) into buf (abi.ImportStateListGet).
func ListGet(slot int32, key, buf []byte) int32 {
	return stateListGet(slot, ptr(key), int32(len(key)), ptr(buf), int32(cap(buf)))
}

// ListAppend adds val to the list of (slot, key).
func ListAppend(slot int32, key, val []byte) int32 {
	return stateListAppend(slot, ptr(key), int32(len(key)), ptr(val), int32(len(val)))
}

// ListUpdate replaces the list of (slot, key) with the elements in wire.
func ListUpdate(slot int32, key, wire []byte) int32 {
	return stateListUpdate(slot, ptr(key), int32(len(key)), ptr(wire), int32(len(wire)))
}

// MapGet reads the value of ukey in the map of (slot, key) into buf.
func MapGet(slot int32, key []byte, ukey string, buf []byte) int32 {
	return stateMapGet(slot, ptr(key), int32(len(key)), sptr(ukey), int32(len(ukey)), ptr(buf), int32(cap(buf)))
}

// MapPut sets ukey to val in the map of (slot, key).
func MapPut(slot int32, key []byte, ukey string, val []byte) int32 {
	return stateMapPut(slot, ptr(key), int32(len(key)), sptr(ukey), int32(len(ukey)), ptr(val), int32(len(val)))
}

// MapDel removes ukey from the map of (slot, key).
func MapDel(slot int32, key []byte, ukey string) int32 {
	return stateMapDel(slot, ptr(key), int32(len(key)), sptr(ukey), int32(len(ukey)))
}

// MapContains is 1 when the map of (slot, key) holds ukey, 0 when not.
func MapContains(slot int32, key []byte, ukey string) int32 {
	return stateMapContains(slot, ptr(key), int32(len(key)), sptr(ukey), int32(len(ukey)))
}

// MapEntries reads the whole map of (slot, key) into buf.
func MapEntries(slot int32, key, buf []byte) int32 {
	return stateMapEntries(slot, ptr(key), int32(len(key)), ptr(buf), int32(cap(buf)))
}

// Clear removes the state of (slot, key), whatever its kind.
func Clear(slot int32, key []byte) int32 {
	return stateClear(slot, ptr(key), int32(len(key)))
}

// Timers: optional imports (abi.ImportTimerRegister and the rest). A
// module imports one only when the plugin calls it.

//go:wasmimport sluice_v1 timer_register
func timerRegister(kind int32, keyPtr unsafe.Pointer, keyLen int32, ts int64) int32

//go:wasmimport sluice_v1 timer_delete
func timerDelete(kind int32, keyPtr unsafe.Pointer, keyLen int32, ts int64) int32

//go:wasmimport sluice_v1 current_watermark
func currentWatermark() int64

//go:wasmimport sluice_v1 current_processing_time
func currentProcessingTime() int64

// TimerRegister registers a timer of kind for key at ts.
func TimerRegister(kind int32, key []byte, ts int64) int32 {
	return timerRegister(kind, ptr(key), int32(len(key)), ts)
}

// TimerDelete deletes the timer of (kind, key, ts).
func TimerDelete(kind int32, key []byte, ts int64) int32 {
	return timerDelete(kind, ptr(key), int32(len(key)), ts)
}

// CurrentWatermark is the operator's input watermark.
func CurrentWatermark() int64 { return currentWatermark() }

// CurrentProcessingTime is the operator's processing-time clock in ms.
func CurrentProcessingTime() int64 { return currentProcessingTime() }
