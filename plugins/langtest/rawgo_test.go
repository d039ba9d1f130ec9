package langtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

var rawGo struct {
	once sync.Once
	path string
	err  error
	msg  []byte
}

// rawGoModule builds testdata/double-go-raw (the filter+map in Go against
// the raw ABI, no SDK) with the Go toolchain running the tests, once per
// test binary.
func rawGoModule(tb testing.TB) string {
	tb.Helper()
	// read by the test itself, so that go test's cache knows the result
	// depends on it (the build below runs in another process)
	if _, err := os.ReadFile("testdata/double-go-raw/main.go"); err != nil {
		tb.Fatal(err)
	}
	rawGo.once.Do(func() {
		dir, err := os.MkdirTemp("", "sluice-rawgo-")
		if err != nil {
			rawGo.err = err
			return
		}
		rawGo.path = filepath.Join(dir, "double-go-raw.wasm")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", rawGo.path, "./testdata/double-go-raw")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		rawGo.msg, rawGo.err = cmd.CombinedOutput()
	})
	if rawGo.err != nil {
		tb.Fatalf("go build testdata/double-go-raw: %v\n%s", rawGo.err, rawGo.msg)
	}
	return rawGo.path
}

// The benchmark's floor for a Go guest, the raw-ABI double, does the
// filter+map's work: on the benchmark's batch it emits exactly what the
// native twin emits (and so what every language's double emits, which
// TestOperatorsMatchGo holds to the Go SDK's).
func TestRawGoDoubleMatchesItsTwin(t *testing.T) {
	m := load(t, newHost(t), rawGoModule(t))
	op := m.NewOperator(context.Background(), "op", nil)
	if err := op.Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	defer op.Close(nil)
	w := langBatch(1024)
	got, want := collector{out: map[int]*abi.Writer{}}, collector{out: map[int]*abi.Writer{}}
	if err := op.Process(0, w.Buf, w.Count, &got); err != nil {
		t.Fatal(err)
	}
	if err := (&nativeAmount{double: true}).Process(0, w.Buf, w.Count, &want); err != nil {
		t.Fatal(err)
	}
	g, wn := got.out[0], want.out[0]
	if len(got.out) != 1 || len(want.out) != 1 || g.Count == 0 || g.Count != wn.Count || string(g.Buf) != string(wn.Buf) {
		t.Fatalf("raw Go double: %v, the native twin %v", got.out, want.out)
	}
}
