//go:build !wasip1

package sdk

import "github.com/sluicehq/sluice/sdk/go/internal/hostcall"

// Natively there are no wasm exports: the same entry points are handed to
// hostcall.Guest, through which sdk/go/sdktest drives the operator as the
// host would.
func init() {
	hostcall.Guest = hostcall.Exports{
		NewInstance:    eng.newInstance,
		Open:           guestOpen,
		Process:        guestProcess,
		ProcessIndexed: guestProcessIndexed,
		Partition:      guestPartition,
		Close:          guestClose,
		Describe:       guestDescribe,
	}
}
