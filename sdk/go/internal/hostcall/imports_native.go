//go:build !wasip1

package hostcall

// Host is an in-process stand-in for the wasm host, used when the SDK runs
// natively (unit tests). Its methods mirror the ABI v1 imports with slices
// for (ptr, len) pairs; StateGet writes into buf[:cap(buf)].
type Host interface {
	Emit(port int32, buf []byte, count int32) int32
	Port(tag string) int32
	Error(text string)
	StateGet(slot int32, key, buf []byte) int32
	StatePut(slot int32, key, val []byte) int32
	StateDel(slot int32, key []byte) int32
}

// Fake is the host the native build calls; sdktest sets it.
var Fake Host

func fake() Host {
	if Fake == nil {
		panic("sluice sdk: no host: natively an operator runs only under sdk/go/sdktest")
	}
	return Fake
}

// Emit hands count records in buf to the host on an output port.
func Emit(port int32, buf []byte, count int32) int32 { return fake().Emit(port, buf, count) }

// Port returns the output port of a side-output tag.
func Port(tag string) int32 { return fake().Port(tag) }

// Error sets the error text of the current call.
func Error(text string) { fake().Error(text) }

// StateGet reads keyed state into buf; see abi.ImportStateGet.
func StateGet(slot int32, key, buf []byte) int32 { return fake().StateGet(slot, key, buf) }

// StatePut stores a copy of val under (slot, key).
func StatePut(slot int32, key, val []byte) int32 { return fake().StatePut(slot, key, val) }

// StateDel deletes the value under (slot, key).
func StateDel(slot int32, key []byte) int32 { return fake().StateDel(slot, key) }

// KindsHost is a Host that also serves list and map state and clear
// (abi.ImportStateListGet and the rest); sdktest's host does.
type KindsHost interface {
	ListGet(slot int32, key, buf []byte) int32
	ListAppend(slot int32, key, val []byte) int32
	ListUpdate(slot int32, key, wire []byte) int32
	MapGet(slot int32, key []byte, ukey string, buf []byte) int32
	MapPut(slot int32, key []byte, ukey string, val []byte) int32
	MapDel(slot int32, key []byte, ukey string) int32
	MapContains(slot int32, key []byte, ukey string) int32
	MapEntries(slot int32, key, buf []byte) int32
	Clear(slot int32, key []byte) int32
}

func kinds() KindsHost {
	k, ok := fake().(KindsHost)
	if !ok {
		panic("sluice sdk: the test host serves no list or map state")
	}
	return k
}

// ListGet reads the list of (slot, key) into buf (abi.ImportStateListGet).
func ListGet(slot int32, key, buf []byte) int32 { return kinds().ListGet(slot, key, buf) }

// ListAppend adds val to the list of (slot, key).
func ListAppend(slot int32, key, val []byte) int32 { return kinds().ListAppend(slot, key, val) }

// ListUpdate replaces the list of (slot, key) with the elements in wire.
func ListUpdate(slot int32, key, wire []byte) int32 { return kinds().ListUpdate(slot, key, wire) }

// MapGet reads the value of ukey in the map of (slot, key) into buf.
func MapGet(slot int32, key []byte, ukey string, buf []byte) int32 {
	return kinds().MapGet(slot, key, ukey, buf)
}

// MapPut sets ukey to val in the map of (slot, key).
func MapPut(slot int32, key []byte, ukey string, val []byte) int32 {
	return kinds().MapPut(slot, key, ukey, val)
}

// MapDel removes ukey from the map of (slot, key).
func MapDel(slot int32, key []byte, ukey string) int32 { return kinds().MapDel(slot, key, ukey) }

// MapContains is 1 when the map of (slot, key) holds ukey, 0 when not.
func MapContains(slot int32, key []byte, ukey string) int32 {
	return kinds().MapContains(slot, key, ukey)
}

// MapEntries reads the whole map of (slot, key) into buf.
func MapEntries(slot int32, key, buf []byte) int32 { return kinds().MapEntries(slot, key, buf) }

// Clear removes the state of (slot, key), whatever its kind.
func Clear(slot int32, key []byte) int32 { return kinds().Clear(slot, key) }

// TimersHost is a Host that also serves timers (abi.ImportTimerRegister
// and the rest); sdktest's host does.
type TimersHost interface {
	TimerRegister(kind int32, key []byte, ts int64) int32
	TimerDelete(kind int32, key []byte, ts int64) int32
	CurrentWatermark() int64
	CurrentProcessingTime() int64
}

func timers() TimersHost {
	t, ok := fake().(TimersHost)
	if !ok {
		panic("sluice sdk: the test host serves no timers")
	}
	return t
}

// TimerRegister registers a timer of kind for key at ts.
func TimerRegister(kind int32, key []byte, ts int64) int32 {
	return timers().TimerRegister(kind, key, ts)
}

// TimerDelete deletes the timer of (kind, key, ts).
func TimerDelete(kind int32, key []byte, ts int64) int32 {
	return timers().TimerDelete(kind, key, ts)
}

// CurrentWatermark is the operator's input watermark.
func CurrentWatermark() int64 { return timers().CurrentWatermark() }

// CurrentProcessingTime is the operator's processing-time clock in ms.
func CurrentProcessingTime() int64 { return timers().CurrentProcessingTime() }
