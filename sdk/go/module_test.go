package sdk_test

import (
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

// The SDK alone makes a module export the whole ABI v1 and import nothing
// but sluice_v1 and WASI.
func TestBuiltModuleMatchesABI(t *testing.T) {
	if b := sdktest.CheckModule(t, "testdata/plugin"); len(b) == 0 {
		t.Fatal("empty module")
	}
}
