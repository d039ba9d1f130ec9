package plugin

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/sluicehq/sluice/host/plugin/fuel"
)

// WASI's functions are host calls like sluice_v1's, and fuel (spent in
// guest code only) did not see their work: a guest looping over fd_write
// with a million empty iovecs a call ran 19 s past a 1 s call-timeout, and
// random_get fills up to all of memory a call. The host's WASI is wazero's,
// each function wrapped to bill the call (hostCallFuel and one unit per
// bytesPerFuel bytes it reads or writes, as instance.bill does for
// sluice_v1) before it runs, and fd_write refuses more iovecs than POSIX's
// IOV_MAX, as writev does.

// iovMax is the most iovecs one fd_write or fd_pwrite takes (Linux's
// IOV_MAX; writev fails with EINVAL past it). wasi-libc's stdio and Go's
// wasip1 runtime write one or two at a time.
const iovMax = 1024

// wasiEINVAL is WASI's EINVAL (wasi_snapshot_preview1's errno enum).
const wasiEINVAL = 28

// wasiCost is the bytes a WASI call handles, read from its parameters
// before it runs: the iovec array and what it points at (bounded by the
// guest's memory), a buffer's length, the subscriptions and events of
// poll_oneoff. ok false refuses the call with errno.
type wasiCost func(mod api.Module, stack []uint64) (bytes uint64, errno uint64, ok bool)

var wasiCosts = map[string]wasiCost{
	"fd_write":    iovCost,
	"fd_pwrite":   iovCost,
	"fd_read":     iovCost,
	"fd_pread":    iovCost,
	"random_get":  func(_ api.Module, s []uint64) (uint64, uint64, bool) { return uint64(uint32(s[1])), 0, true },
	"poll_oneoff": func(_ api.Module, s []uint64) (uint64, uint64, bool) { return 80 * uint64(uint32(s[2])), 0, true }, // 48 in, 32 out
	// the rest handle a few bytes (a name, a stat): the call's own charge
}

// iovCost is an fd_write's (fd_read's...) cost: its iovecs (8 bytes each)
// and the bytes they cover; more than iovMax iovecs is EINVAL.
func iovCost(mod api.Module, s []uint64) (uint64, uint64, bool) {
	iovs, n := uint32(s[1]), uint32(s[2])
	if n > iovMax {
		return 0, wasiEINVAL, false
	}
	cost := 8 * uint64(n)
	if mem := mod.Memory(); mem != nil {
		if b, ok := mem.Read(iovs, 8*n); ok {
			for i := uint32(0); i < n; i++ {
				cost += uint64(binary.LittleEndian.Uint32(b[8*i+4:]))
			}
		}
	}
	return cost, 0, true
}

// instantiateWASI instantiates wazero's WASI in rt with every function
// billed: the functions are read from a compiled (never instantiated)
// copy of wazero's module and exported again, wrapped.
func instantiateWASI(ctx context.Context, rt wazero.Runtime) error {
	src := rt.NewHostModuleBuilder(wasiModule)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(src)
	compiled, err := src.Compile(ctx)
	if err != nil {
		return err
	}
	defer compiled.Close(ctx)
	b := rt.NewHostModuleBuilder(wasiModule)
	for name, def := range compiled.ExportedFunctions() {
		var fn api.GoModuleFunction
		switch f := def.GoFunction().(type) {
		case api.GoModuleFunction:
			fn = f
		case api.GoFunction:
			fn = api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) { f.Call(ctx, stack) })
		default:
			return fmt.Errorf("WASI function %s is not a Go function (%T)", name, def.GoFunction())
		}
		b.NewFunctionBuilder().
			WithGoModuleFunction(billed(fn, wasiCosts[name]), def.ParamTypes(), def.ResultTypes()).
			WithParameterNames(def.ParamNames()...).
			WithResultNames(def.ResultNames()...).
			Export(name)
	}
	_, err = b.Instantiate(ctx)
	return err
}

// billed is fn charging the calling instance before it runs.
func billed(fn api.GoModuleFunction, cost wasiCost) api.GoModuleFunction {
	return api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
		n := uint64(0)
		if cost != nil {
			var errno uint64
			var ok bool
			if n, errno, ok = cost(mod, stack); !ok {
				stack[0] = errno
				return
			}
		}
		if in := current(ctx); in != nil {
			in.bill(n)
		} else {
			billStart(mod, n)
		}
		fn.Call(ctx, mod, stack)
	})
}

// billStart bills a WASI call made by a module's start function, which
// runs during instantiation, before the host has a call (or a Meter) of
// its: the charge goes straight to the counter, which holds StartFuel,
// and a start function whose host calls spend it traps at its next
// metering site. Unbilled, a start function looping on random_get over
// 8 MiB ran 1.5 s. Without fuel (Interruption deadline or none) there is
// no counter.
func billStart(mod api.Module, n uint64) {
	if g, ok := mod.ExportedGlobal(fuel.ExportName).(api.MutableGlobal); ok {
		fuel.NewMeter(g).Charge(hostCallFuel + int64(min(n, math.MaxInt32)/bytesPerFuel))
	}
}

// sleep is the nanosleep of an instance granted the clock: every sleep of
// wazero's WASI (poll_oneoff's clock subscriptions, one or many) comes
// here, and the call's bound sleeps it (callBound.sleep: within the
// call-timeout, cut short by the job's cancel, the call failed when it
// was). wazero's own sleep could not be cut short: a one-hour sleep held
// its subtask, and the job's cancel, for the hour, and a poll_oneoff of
// two clock subscriptions went around a wrapper of the one-subscription
// form. A start function (during instantiation: no call yet) does not
// sleep at all.
func (in *instance) sleep(ns int64) {
	if ns > 0 && in.bound != nil {
		in.bound.sleep(time.Duration(ns))
	}
}
