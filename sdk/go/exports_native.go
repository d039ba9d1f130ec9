//go:build !wasip1

package sdk

import "github.com/sluicehq/sluice/sdk/go/internal/hostcall"

// Natively there are no wasm exports: the same entry points are handed to
// hostcall.Guest, through which sdk/go/sdktest drives the operator as the
// host would. A batch is copied first, as the host copies it into guest
// memory: setters may write over an input record's bytes
// (view.writable), which must not be the caller's.
func init() {
	hostcall.Guest = hostcall.Exports{
		NewInstance: eng.newInstance,
		Open:        guestOpen,
		Process: func(port int32, batch []byte, count int32) int32 {
			return guestProcess(port, ownInput(batch), count)
		},
		ProcessIndexed: func(port int32, batch []byte, count int32, index []byte) int32 {
			return guestProcessIndexed(port, ownInput(batch), count, index)
		},
		Partition: guestPartition,
		Close:     guestClose,
		Describe:  guestDescribe,
		Snapshot:  guestSnapshot,
		Restore:   func(element []byte) int32 { return guestRestore(ownInput(element)) },
		OnTimer:   func(kind int32, ts int64, key []byte) int32 { return guestOnTimer(kind, ts, ownInput(key)) },
	}
}

// nativeInput is the SDK's copy of the batch being processed natively.
var nativeInput []byte

func ownInput(b []byte) []byte {
	if b == nil {
		return nil
	}
	nativeInput = append(nativeInput[:0], b...)
	return nativeInput[:len(b):len(b)]
}
