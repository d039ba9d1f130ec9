package fuel_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/plugin/fuel"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// workload is one guest call to benchmark: prepare instantiates what it
// needs in rt and returns the function and its argument stack.
type workload struct {
	name    string
	wasm    []byte
	prepare func(b *testing.B, rt wazero.Runtime, wasm []byte) (api.Module, api.Function, []uint64)
}

func benchWorkloads(b *testing.B) []workload {
	export := func(fn string, args ...uint64) func(*testing.B, wazero.Runtime, []byte) (api.Module, api.Function, []uint64) {
		return func(b *testing.B, rt wazero.Runtime, wasm []byte) (api.Module, api.Function, []uint64) {
			mod := load(b, rt, "bench", wasm)
			buf := make([]byte, 65536)
			for i := range buf {
				buf[i] = byte(i * 7)
			}
			if mem := mod.ExportedMemory("memory"); mem != nil {
				mem.Write(0, buf)
			}
			return mod, mod.ExportedFunction(fn), append([]uint64(nil), args...)
		}
	}
	ws := []workload{
		{"sum64KiB", watFile(b, "bench"), export("sum", 65536)},
		{"nested256", watFile(b, "bench"), export("nested", 256)},
		// Calls without loops: 1000 recursive calls, 13 fuel each.
		{"rec1000", watFile(b, "loops"), export("rec", 1000)},
	}
	// The operator the ABI brief benchmarks, from the plugin runtime's
	// fixtures: a msgpack filter over a batch of 1024 records.
	if p := filepath.Join("..", "testdata", "filter.wat"); fileExists(p) {
		ws = append(ws, workload{"filter1024", wat2wasm(b, p), prepareFilter})
	}
	// A Go guest: goloop's spin(100000), after _initialize.
	ws = append(ws, workload{"go-spin100k", buildGoReactor(b), prepareGo})
	return ws
}

func prepareGo(b *testing.B, rt wazero.Runtime, wasm []byte) (api.Module, api.Function, []uint64) {
	ctx := context.Background()
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod := load(b, rt, "go", wasm)
	if g, ok := mod.ExportedGlobal(fuel.ExportName).(api.MutableGlobal); ok {
		fuel.NewMeter(g).Begin(1 << 40)
	}
	if _, err := mod.ExportedFunction("_initialize").Call(ctx); err != nil {
		b.Fatal(err)
	}
	return mod, mod.ExportedFunction("spin"), []uint64{100_000}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// prepareFilter instantiates filter.wat with a no-op emit and writes a
// batch of 1024 records [nil, nil, {"id": i, "amount": ±i, "name": "..."}]
// into its buffer.
func prepareFilter(b *testing.B, rt wazero.Runtime, wasm []byte) (api.Module, api.Function, []uint64) {
	ctx := context.Background()
	if rt.Module("sluice_v1") == nil {
		i32 := api.ValueTypeI32
		_, err := rt.NewHostModuleBuilder("sluice_v1").NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, s []uint64) { s[0] = 0 }),
				[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
			Export("emit").Instantiate(ctx)
		if err != nil {
			b.Fatal(err)
		}
	}
	mod := load(b, rt, "filter", wasm)
	var batch []byte
	const count = 1024
	for i := 0; i < count; i++ {
		amount := byte(i % 100)
		if i%3 == 0 {
			amount = 0xe0 | byte(i%31) // negative fixint: filtered out
		}
		batch = append(batch, 0x93, 0xc0, 0xc0, 0x83,
			0xa2, 'i', 'd', 0xcd, byte(i>>8), byte(i),
			0xa6, 'a', 'm', 'o', 'u', 'n', 't', amount,
			0xa4, 'n', 'a', 'm', 'e', 0xa8, 's', 'e', 'n', 's', 'o', 'r', '-', byte('a'+i%26))
	}
	if g, ok := mod.ExportedGlobal(fuel.ExportName).(api.MutableGlobal); ok {
		fuel.NewMeter(g).Begin(1 << 40) // instrumented: fund the setup call
	}
	res, err := mod.ExportedFunction("sluice_buffer").Call(ctx, uint64(len(batch)))
	if err != nil || res[0] == 0 {
		b.Fatalf("sluice_buffer: %v %v", res, err)
	}
	mod.Memory().Write(uint32(res[0]), batch)
	return mod, mod.ExportedFunction("sluice_process"), []uint64{0, res[0], uint64(len(batch)), count}
}

// modes are the ways of running a workload that the benchmarks compare:
// "fuel" is what the plugin host runs (the refuel import, each call's
// budget in slices of benchSlice), "fuel-trap" the rewrite without the
// import (a site that runs out traps at once).
var modes = []string{"unmetered", "fuel", "fuel-trap", "close-on-done"}

// benchSlice is the slice of the "fuel" mode, the plugin host's default.
const benchSlice = 1 << 20

// runner calls one workload in one mode.
type runner func() error

// newRunner prepares w in mode: unmetered; fuel-metered, with Meter
// Begin/End around every call; or under WithCloseOnContextDone with a
// per-call deadline, the mechanism fuel replaces.
func newRunner(b *testing.B, w workload, mode string) (runner, *fuel.Meter) {
	ctx := context.Background()
	cfg := wazero.NewRuntimeConfigCompiler()
	wasm := w.wasm
	var slice int64
	switch mode {
	case "fuel":
		wasm, slice = instrument(b, wasm, fuel.Options{Refuel: true}), benchSlice
	case "fuel-trap":
		wasm = instrument(b, wasm, fuel.Options{})
	case "close-on-done":
		cfg = cfg.WithCloseOnContextDone(true)
	}
	rt := newRuntime(b, cfg)
	r := newRefueler(b, rt)
	mod, fn, args := w.prepare(b, rt, wasm)
	stack := make([]uint64, max(len(args), len(fn.Definition().ResultTypes())))
	switch mode {
	case "fuel", "fuel-trap":
		meter := meterOf(b, mod)
		r.meters[mod.Name()] = meter
		return func() error {
			copy(stack, args)
			meter.BeginSliced(1<<40, slice)
			_, err := meter.End(fn.CallWithStack(ctx, stack))
			return err
		}, meter
	case "close-on-done":
		return func() error {
			copy(stack, args)
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			return fn.CallWithStack(cctx, stack)
		}, nil
	}
	return func() error {
		copy(stack, args)
		return fn.CallWithStack(ctx, stack)
	}, nil
}

// BenchmarkOverhead runs each workload in each mode (ns/op per call);
// fuel/op is the fuel one call uses.
func BenchmarkOverhead(b *testing.B) {
	for _, w := range benchWorkloads(b) {
		for _, mode := range modes {
			b.Run(w.name+"/"+mode, func(b *testing.B) {
				run, meter := newRunner(b, w, mode)
				for b.Loop() {
					if err := run(); err != nil {
						b.Fatal(err)
					}
				}
				if meter != nil {
					used, _ := meter.End(nil)
					b.ReportMetric(float64(used), "fuel/op")
				}
			})
		}
	}
}

// BenchmarkRatio interleaves the three modes call by call, so that they
// share the machine's state (a noisy 2-core machine drifts between runs),
// and reports each mode's median ns per call and its ratio to unmetered.
func BenchmarkRatio(b *testing.B) {
	for _, w := range benchWorkloads(b) {
		b.Run(w.name, func(b *testing.B) {
			runs := make([]runner, len(modes))
			for i, mode := range modes {
				runs[i], _ = newRunner(b, w, mode)
			}
			times := make([][]float64, len(modes))
			for b.Loop() {
				for i, run := range runs {
					t0 := time.Now()
					if err := run(); err != nil {
						b.Fatal(err)
					}
					times[i] = append(times[i], float64(time.Since(t0).Nanoseconds()))
				}
			}
			base := median(times[0])
			for i, mode := range modes {
				m := median(times[i])
				b.ReportMetric(m, mode+"-ns/call")
				if i > 0 {
					b.ReportMetric(m/base, mode+"-x")
				}
			}
		})
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkRunaway measures how long a spinning guest takes to burn
// budgets of fuel: the time a runaway costs before it stops.
func BenchmarkRunaway(b *testing.B) {
	m := loadMetered(b, newRuntime(b, nil), "loops", watFile(b, "loops"), fuel.Options{})
	fn := m.mod.ExportedFunction("spin")
	for _, budget := range []int64{1e6, 1e8} {
		b.Run(fmt.Sprintf("budget%.0e", float64(budget)), func(b *testing.B) {
			for b.Loop() {
				m.meter.Begin(budget)
				if _, err := m.meter.End(fn.CallWithStack(context.Background(), nil)); !errors.Is(err, fuel.ErrExhausted) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(budget), "ns/fuel")
		})
	}
}
