// Package sdktest runs a Go sluice operator natively, without Wasm, for
// plugin authors' unit tests. It drives the registered operator through
// the same entry points the wasm exports use (describe, open, process or
// partition, close) against an in-memory host that keeps keyed state and
// collects each output port:
//
//	func TestValid(t *testing.T) {
//		res := sdktest.Run(t, sdktest.Options{},
//			sdktest.JSON(`{"id":1,"amount":5}`),
//			sdktest.JSON(`{"id":2,"amount":-3}`))
//		if got := res.JSON(""); len(got) != 1 || got[0] != `{"id":1,"amount":5}` {
//			t.Fatalf("got %v", got)
//		}
//	}
//
// The operator is the one the package's init function registered (a
// plugin's main package registers exactly one). Tests of several operators
// in one package call sdk.Reset and register before each run. Runs are
// serialised: the SDK's state is global, as it is in a wasm instance.
package sdktest

import (
	"errors"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

// Options describe the instance under test.
type Options struct {
	Config         map[string]any // the operator config (the pipeline's config map)
	Subtask        int            // 0-based subtask index
	Parallelism    int            // default 1
	MaxParallelism int            // default 128
	// BatchSize is the most records per process call (default 1024);
	// consecutive inputs on the same port share a batch.
	BatchSize int
	// KeyBy, when set, keys every input by the value of this field, as a
	// keyBy in front of the operator does (it overrides Record.Key).
	KeyBy string
	// Channels is the partitioner's n, the number of downstream channels
	// (default 4).
	Channels int
	// Unconsumed lists side-output tags that nothing consumes: the host
	// gives them port -1 and records sent there are dropped.
	Unconsumed []string
}

func (o *Options) defaults() {
	if o.Parallelism == 0 {
		o.Parallelism = 1
	}
	if o.MaxParallelism == 0 {
		o.MaxParallelism = 128
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 1024
	}
	if o.Channels == 0 {
		o.Channels = 4
	}
}

// CallError is a call that returned a non-zero status.
type CallError struct {
	Export string     // e.g. "sluice_process"
	Status abi.Status // what the guest returned
	Text   string     // the text it sent with the error import
}

// Error reads "export: status: text".
func (e *CallError) Error() string {
	return e.Export + ": " + e.Status.String() + ": " + e.Text
}

var (
	errNotObject = errors.New("sdktest: a record must be a JSON object")
	errNotNative = errors.New("sdktest: operators run natively only, not under GOOS=wasip1")
	running      sync.Mutex
)

func errKeyBy(field string) error {
	return errors.New("sdktest: KeyBy: an input record has no field " + field)
}

// Run runs the registered operator over the inputs and fails the test on
// any error (use Try to test failures). Under GOOS=wasip1 it skips the
// test: the harness needs the native build of the SDK.
func Run(t testing.TB, opts Options, in ...Record) *Result {
	t.Helper()
	res, err := Try(opts, in...)
	if errors.Is(err, errNotNative) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	return res
}
