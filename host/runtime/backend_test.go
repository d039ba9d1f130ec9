package runtime_test

import (
	"testing"

	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/host/runtime/statetest"
)

func heapBackend(_ testing.TB, maxP, start, end int) runtime.StateBackend {
	return runtime.NewKeyedStore(maxP, start, end)
}

// The heap KeyedStore passes the state-backend conformance kit.
func TestHeapBackendConformance(t *testing.T) { statetest.Run(t, heapBackend) }
