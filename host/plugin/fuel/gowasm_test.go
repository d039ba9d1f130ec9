package fuel_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/fuel"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// buildGoReactor builds testdata/goloop as a wasip1 reactor with the Go
// toolchain running the tests.
func buildGoReactor(t testing.TB) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "goloop.wasm")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the Go guest: %v", err)
	}
	cmd := exec.Command(goBin, "build", "-buildmode=c-shared", "-trimpath", "-o", out, "./testdata/goloop")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build wasip1: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lcg is goloop's spin, natively.
func lcg(n int) int32 {
	x := uint32(1)
	for i := 0; i < n; i++ {
		x = x*1664525 + 1013904223
	}
	return int32(x)
}

// TestGoReactor instruments a real Go wasip1 module (the whole Go runtime:
// thousands of functions and most opcodes), runs _initialize and the
// exports on budgets, and stops a runaway export; with the refuel import
// (which renumbers every function), the calls get their budgets in
// slices.
func TestGoReactor(t *testing.T) {
	for _, slice := range []int64{0, 1 << 16} {
		t.Run(fmt.Sprintf("slice%d", slice), func(t *testing.T) { testGoReactor(t, slice) })
	}
}

func testGoReactor(t *testing.T, slice int64) {
	wasm := buildGoReactor(t)
	ctx := context.Background()
	rt := newRuntime(t, nil)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	r := newRefueler(t, rt)
	out := instrument(t, wasm, fuel.Options{Refuel: slice > 0})
	cm, err := rt.CompileModule(ctx, out)
	if err != nil {
		t.Fatalf("instrumented Go module does not compile: %v", err)
	}
	start := func(name string) metered {
		mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(name).WithStartFunctions())
		if err != nil {
			t.Fatal(err)
		}
		m := metered{t: t, mod: mod, meter: meterOf(t, mod), slice: slice}
		r.meters[name] = m.meter
		_, used := m.mustCall("_initialize", plenty)
		t.Logf("%s: _initialize used %d fuel", name, used)
		return m
	}

	m := start("a")
	for _, n := range []int{0, 1, 1000, 100_000} {
		res, used := m.mustCall("spin", plenty, uint64(n))
		if got := int32(res[0]); got != lcg(n) {
			t.Errorf("spin(%d) = %d, want %d", n, got, lcg(n))
		}
		t.Logf("spin(%d) used %d fuel", n, used)
	}
	if res, _ := m.mustCall("churn", plenty, 5000); res[0] != 5000 {
		t.Errorf("churn(5000) = %d", res[0])
	}
	// spin(-1) never returns on its own.
	if left := m.mustExhaust("spin", 50_000_000, uint64(0xffffffff)); left >= 0 {
		t.Errorf("counter %d after running out", left)
	}
	// So does churn when the budget is too small, wherever in the runtime
	// (allocator, map growth, GC) the fuel runs out.
	b := start("b")
	if left := b.mustExhaust("churn", 100_000, 1_000_000); left >= 0 {
		t.Errorf("counter %d after running out", left)
	}
	if slice > 0 && r.calls < 50_000_000/int(slice) {
		t.Errorf("%d refuels for budgets of up to %d in slices of %d", r.calls, 50_000_000, slice)
	}
}
