package fuel_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/fuel"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// watFile assembles testdata/name.wat with wat2wasm. A missing wat2wasm is
// a failure, never a skip: the fixtures are the tests.
func watFile(t testing.TB, name string, flags ...string) []byte {
	t.Helper()
	return wat2wasm(t, filepath.Join("testdata", name+".wat"), flags...)
}

// watText assembles WAT source given inline.
func watText(t testing.TB, src string, flags ...string) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.wat")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return wat2wasm(t, p, flags...)
}

func wat2wasm(t testing.TB, path string, flags ...string) []byte {
	t.Helper()
	bin, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatalf("wat2wasm not found (%v): install it with `apt-get install wabt`", err)
	}
	out := filepath.Join(t.TempDir(), "m.wasm")
	args := append([]string{"--debug-names", "-o", out}, flags...)
	if msg, err := exec.Command(bin, append(args, path)...).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s: %v\n%s", path, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// instrument runs fuel.Instrument and fails the test on error.
func instrument(t testing.TB, wasm []byte, opts fuel.Options) []byte {
	t.Helper()
	out, err := fuel.Instrument(wasm, opts)
	if err != nil {
		t.Fatalf("Instrument: %v", err)
	}
	return out
}

// newRuntime returns a compiler runtime closed with the test.
func newRuntime(t testing.TB, cfg wazero.RuntimeConfig) wazero.Runtime {
	t.Helper()
	if cfg == nil {
		cfg = wazero.NewRuntimeConfigCompiler()
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	t.Cleanup(func() { _ = rt.Close(ctx) })
	return rt
}

// load instantiates wasm under name in rt without running any start
// functions beyond the module's own start section.
func load(t testing.TB, rt wazero.Runtime, name string, wasm []byte) api.Module {
	t.Helper()
	ctx := context.Background()
	mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName(name).WithStartFunctions())
	if err != nil {
		t.Fatalf("instantiate %s: %v", name, err)
	}
	return mod
}

// meterOf returns a Meter on mod's counter.
func meterOf(t testing.TB, mod api.Module) *fuel.Meter {
	t.Helper()
	g, ok := mod.ExportedGlobal(fuel.ExportName).(api.MutableGlobal)
	if !ok {
		t.Fatalf("module %s does not export a mutable %s", mod.Name(), fuel.ExportName)
	}
	return fuel.NewMeter(g)
}

// metered is an instrumented module ready to call.
type metered struct {
	t     testing.TB
	mod   api.Module
	meter *fuel.Meter
	slice int64 // each call's budget is handed out in slices of this (0: all at once)
}

func loadMetered(t testing.TB, rt wazero.Runtime, name string, wasm []byte, opts fuel.Options) metered {
	t.Helper()
	mod := load(t, rt, name, instrument(t, wasm, opts))
	return metered{t: t, mod: mod, meter: meterOf(t, mod)}
}

// call runs export fn with budget and returns its results, the fuel used
// and the error End reports.
func (m metered) call(fn string, budget int64, args ...uint64) ([]uint64, int64, error) {
	m.t.Helper()
	f := m.mod.ExportedFunction(fn)
	if f == nil {
		m.t.Fatalf("no export %q", fn)
	}
	m.meter.BeginSliced(budget, m.slice)
	res, err := f.Call(context.Background(), args...)
	used, err := m.meter.End(err)
	return res, used, err
}

// mustCall is call that must succeed.
func (m metered) mustCall(fn string, budget int64, args ...uint64) ([]uint64, int64) {
	m.t.Helper()
	res, used, err := m.call(fn, budget, args...)
	if err != nil {
		m.t.Fatalf("%s%v with budget %d: %v", fn, args, budget, err)
	}
	return res, used
}

// mustExhaust is call that must run out of fuel; it returns the counter.
func (m metered) mustExhaust(fn string, budget int64, args ...uint64) int64 {
	m.t.Helper()
	_, _, err := m.call(fn, budget, args...)
	if !errors.Is(err, fuel.ErrExhausted) {
		m.t.Fatalf("%s%v with budget %d: got %v, want %v", fn, args, budget, err, fuel.ErrExhausted)
	}
	return m.meter.Remaining()
}

// chargeHost instantiates module "host" in rt, whose charge(n) lowers the
// calling instance's counter by n: the guest must see it at its next site.
func chargeHost(t testing.TB, rt wazero.Runtime) {
	t.Helper()
	_, err := rt.NewHostModuleBuilder("host").NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, mod api.Module, stack []uint64) {
			g := mod.ExportedGlobal(fuel.ExportName).(api.MutableGlobal)
			g.Set(uint64(int64(g.Get()) - int64(stack[0])))
		}), []api.ValueType{api.ValueTypeI64}, nil).
		Export("charge").Instantiate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
}

// refueler is the host side of the refuel import in a test runtime: it
// hands each registered module's calls their budget in slices (its Meter's
// Refuel) and counts the refuels.
type refueler struct {
	meters map[string]*fuel.Meter // by module name
	calls  int
}

// newRefueler instantiates module fuel.RefuelModule in rt. A module it
// does not know (one whose start function runs during instantiation) gets
// its counter back unchanged, so it traps.
func newRefueler(t testing.TB, rt wazero.Runtime) *refueler {
	t.Helper()
	r := &refueler{meters: map[string]*fuel.Meter{}}
	i64 := []api.ValueType{api.ValueTypeI64}
	_, err := rt.NewHostModuleBuilder(fuel.RefuelModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, mod api.Module, stack []uint64) {
			r.calls++
			if m := r.meters[mod.Name()]; m != nil {
				stack[0] = uint64(m.Refuel(int64(stack[0])))
			}
		}), i64, i64).
		Export(fuel.RefuelName).Instantiate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// load instruments wasm with the refuel import and instantiates it; its
// calls get their budgets in slices of slice.
func (r *refueler) load(t testing.TB, rt wazero.Runtime, name string, wasm []byte, opts fuel.Options, slice int64) metered {
	t.Helper()
	opts.Refuel = true
	m := loadMetered(t, rt, name, wasm, opts)
	m.slice = slice
	r.meters[name] = m.meter
	return m
}

// plain calls an export of an uninstrumented module.
func plain(t testing.TB, mod api.Module, fn string, args ...uint64) []uint64 {
	t.Helper()
	res, err := mod.ExportedFunction(fn).Call(context.Background(), args...)
	if err != nil {
		t.Fatalf("%s%v: %v", fn, args, err)
	}
	return res
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
