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
