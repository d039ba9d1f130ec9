package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/sluicehq/sluice/host/plugin/fuel"
	"github.com/sluicehq/sluice/host/sched"
	"github.com/sluicehq/sluice/internal/wasmbin"
)

// FuelPerSecond is the rate at which Config.CallTimeout becomes a fuel
// budget when Config.CallFuel is not set: a backstop, above what any guest
// burns (a fuel unit is about one wasm instruction; on this project's
// reference machine a spinning C guest burns 2–7 units per nanosecond, a
// Go guest 20 or more), so that the call-timeout itself, checked against
// the clock at every slice, is what stops a call (fuelBound.refuel). At
// 10⁹ units per second, the rate before, a Go guest doing real work was
// stopped after a fifteenth of its call-timeout.
const FuelPerSecond = 50_000_000_000

// FuelSlice is how much of its budget a call gets at a time: when a slice
// is spent the guest calls the host (the refuel import, see package
// fuel), which yields the goroutine now and then (see yieldEvery) and
// waits for the Host's FuelRate before it hands out the next one. 2^20
// units are 0.05–0.5 ms of guest work, and the host call (well under a
// microsecond) costs under 0.2% of it; a call that fits in its first
// slice never makes it.
const FuelSlice = 1 << 20

// A guest cannot be preempted by Go, so a long call yields its goroutine
// at a refuel once it has run yieldEvery since it began or last yielded,
// or yieldSlices slices: a runaway shares its core at about the
// granularity of Go's own preemption (10 ms), ten times finer. Not at
// every slice: runtime.Gosched wakes an idle thread to look for work,
// which cost a batch of two slices 5–8 % of its time in kernel wake-ups.
const (
	yieldEvery  = time.Millisecond
	yieldSlices = 8
)

// StartFuel is all a module's start function gets (package fuel's
// InitialFuel): it runs during instantiation, before the host has a call
// to hand slices to or a clock to check, so its budget is fixed and small.
// 2^30 units are 0.15–0.5 s of a C guest's work and far more than any
// static initialiser needs (AssemblyScript's top-level code is the only
// start function among the SDKs); a runaway start function traps at the end
// of it. The call's whole budget (call-timeout at FuelPerSecond: 2.5·10¹¹
// units) would be a minute or more of spinning that no signal stops.
const StartFuel = 1 << 30

// MaxTableEntries caps the size of a module's tables (fuel.Options): a
// table without a maximum (every Go wasip1 module's: ~6,000 entries for the
// examples) may grow to it, and table.grow past it fails. Unbounded, one
// guest grew a table to 24 GB and the kernel killed the host. 2^18 entries
// are a few MB.
const MaxTableEntries = 1 << 18

// maxSiteCharge caps what one function entry or loop header charges (see
// fuel.Options.MaxSiteCharge): Go guests' functions are large jump tables
// of which one path runs, and charging their whole body made a Go batch
// spend 50–100× more fuel than a C one for the same wall time.
const maxSiteCharge = 64

// fuelCacheVersion names the folder of rewritten modules. Raise it with
// every change to what package fuel writes, so that no cached file of an
// older rewrite is reused. What each version changed is in git:
// git log -G'fuelCacheVersion = ' -- host/plugin
const fuelCacheVersion = "fuel-v9"

// fuelInterrupter meters every module (package fuel): function entries
// and loop headers spend fuel from a counter the host fills before each
// call, a slice at a time, and a guest that spends its whole budget traps.
// A CallFuel budget is deterministic: the same call on the same input
// stops at the same instruction on any machine, whatever the slices and
// the waits between them. Without one, CallTimeout is checked against the
// clock at every slice. Metering costs the guest about 1.0–1.25× (see
// docs/benchmarks.md).
type fuelInterrupter struct {
	budget   int64
	deadline time.Duration // CallTimeout, checked at every slice; 0 (CallFuel set): fuel alone decides
	sleeps   time.Duration // CallTimeout: the most a call's guest may sleep (a granted clock)
	now      func() time.Time
	slice    int64
	cacheDir string        // metered modules by the sha256 of the original; "" keeps none
	from     string        // what the budget was derived from, for messages
	pace     *sched.Pacer  // the Host's FuelRate or shared FuelPacer; nil: none
	yielding time.Duration // the most a call sleeps giving way
	starts   atomic.Int64
}

// callStarts counts the calls every Host of the process started; a Host's
// own count subtracted, the calls of the others (see fuelBound.refuel).
// Process-wide because what it tells is: whether another tenant (another
// Host of this process) is busy on the same cores, which no one Host can
// see alone.
var callStarts atomic.Int64

func newFuelInterrupter(cfg Config) *fuelInterrupter {
	f := &fuelInterrupter{budget: cfg.CallFuel, slice: FuelSlice, from: "CallFuel", now: time.Now, sleeps: cfg.CallTimeout}
	if f.budget <= 0 {
		f.deadline = cfg.CallTimeout
		f.budget = int64(cfg.CallTimeout.Seconds() * FuelPerSecond)
		f.from = fmt.Sprintf("the backstop of CallTimeout %s at %.0e units a second", cfg.CallTimeout, float64(FuelPerSecond))
	}
	if cfg.CacheDir != "" {
		f.cacheDir = filepath.Join(cfg.CacheDir, fuelCacheVersion)
	}
	switch {
	case cfg.FuelPacer != nil:
		f.pace = cfg.FuelPacer.p
	case cfg.FuelRate > 0:
		f.pace = sched.NewPacer(cfg.FuelRate)
	}
	f.yielding = sched.GiveWayShare * f.deadline
	if f.deadline == 0 { // a CallFuel budget: its time at 10⁹ units a second
		f.yielding = time.Duration(float64(f.budget) * sched.GiveWayShare)
	}
	return f
}

func (f *fuelInterrupter) configure(c wazero.RuntimeConfig) wazero.RuntimeConfig { return c }

// instantiate provides the refuel import of the metered modules. Guests
// cannot import it themselves: check refuses every import module but the
// ABI's and WASI, and fuel.Instrument refuses a module that imports from
// fuel.RefuelModule.
func (f *fuelInterrupter) instantiate(ctx context.Context, rt wazero.Runtime) error {
	i64 := []api.ValueType{api.ValueTypeI64}
	_, err := rt.NewHostModuleBuilder(fuel.RefuelModule).NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostRefuel), i64, i64).
		WithParameterNames("counter").
		Export(fuel.RefuelName).
		Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("instantiate %s: %w", fuel.RefuelModule, err)
	}
	return nil
}

func (f *fuelInterrupter) limit() string {
	return fmt.Sprintf("the call spent its CPU budget of %d fuel units (%s)", f.budget, f.from)
}

// prepare meters bin (decoded as m), reusing an earlier rewrite from the
// cache folder (metering a 3 MB Go module takes tens of milliseconds).
func (f *fuelInterrupter) prepare(bin []byte, m *wasmbin.Module) ([]byte, error) {
	var path string
	if f.cacheDir != "" {
		sum := sha256.Sum256(bin)
		// The budget is part of the module (a start function runs on its
		// initial fuel), so it is part of the name.
		path = filepath.Join(f.cacheDir, fmt.Sprintf("%s-%d.wasm", hex.EncodeToString(sum[:]), f.startFuel()))
		if b, err := os.ReadFile(path); err == nil {
			return b, nil
		}
	}
	out, err := fuel.InstrumentModule(m, fuel.Options{InitialFuel: f.startFuel(), MaxSiteCharge: maxSiteCharge, Refuel: true, MaxTableEntries: MaxTableEntries})
	if errors.Is(err, fuel.ErrLimit) {
		return nil, err // names the function and the limit
	}
	if err != nil {
		return nil, fmt.Errorf("cannot meter the module: %w", err)
	}
	if path != "" && os.MkdirAll(f.cacheDir, 0o755) == nil {
		tmp := path + ".tmp"
		if os.WriteFile(tmp, out, 0o644) == nil {
			_ = os.Rename(tmp, path) // a failed cache write only costs time
		}
	}
	return out, nil
}

// startFuel is the budget of a start function: StartFuel, or the call
// budget when that is smaller.
func (f *fuelInterrupter) startFuel() int64 { return min(f.budget, StartFuel) }

func (f *fuelInterrupter) bind(parent context.Context, mod api.Module) (callBound, error) {
	g, ok := mod.ExportedGlobal(fuel.ExportName).(api.MutableGlobal)
	if !ok {
		return nil, errNoCounter
	}
	return &fuelBound{ctx: parent, meter: fuel.NewMeter(g), f: f}, nil
}

// fuelBound fills the counter before each call, a slice at a time, and
// reads it after.
type fuelBound struct {
	ctx     context.Context
	meter   *fuel.Meter
	f       *fuelInterrupter
	paid    int64         // fuel of this call already charged to the Host's FuelRate
	slices  int64         // slices this call has had
	slept   time.Duration // how long this call gave way
	others  int64         // calls other Hosts had started at the last refuel (or the start)
	began   time.Time     // when the call began (a deadline is set)
	waited  time.Duration // how long this call waited for FuelRate
	napped  time.Duration // how long this call's guest slept (sleep)
	sliceAt time.Time     // when the current slice began, from the second on
	yieldAt time.Time     // when the call last yielded (its first refuel, at first)
	yielded int64         // b.slices then
	refuels atomic.Int64  // calls of the refuel import, over the instance's life
	gaveWay atomic.Int64  // of which gave way to other Hosts
	stopped error         // why a refuel stopped the call (its context ended)
}

func (b *fuelBound) start() context.Context {
	b.meter.BeginSliced(b.f.budget, b.f.slice)
	b.paid, b.stopped, b.sliceAt, b.slices, b.slept, b.waited, b.napped = 0, nil, time.Time{}, 1, 0, 0, 0
	if b.f.deadline > 0 {
		b.began = b.f.now()
	}
	b.yieldAt, b.yielded = time.Time{}, 0
	b.others = callStarts.Add(1) - b.f.starts.Add(1)
	return b.ctx
}

// refuel is the host side of the refuel import: the guest spent its slice.
// Unless the budget is spent (the guest then traps, as without slices), it
// pays for the slice at the Host's FuelRate, gives way to other tenants
// if they are busy, yields the goroutine now and then (yieldEvery), and
// hands out the next slice. A call whose context ends meanwhile is
// stopped the same way.
//
// Giving way: yielding lets the Go scheduler share the Ps fairly, which
// is enough while the process gets the cores it asks for. When it does
// not (a loaded machine: here two busy threads got one core between them)
// a tenant beside a runaway would run at half speed. So a call past its
// first slice gives way when another Host started calls during the slice
// it just ran (another tenant is busy) and the CPU is contended (tasks
// wait for a core: Linux's pressure stall information; where that is not
// available, assumed). It then sleeps a multiple of the slice's time that
// grows with the call's age (package sched). Short calls, the normal path,
// never get here; a lone tenant, or tenants on a machine with cores to
// spare, run at full speed.
func (b *fuelBound) refuel(counter int64) int64 {
	b.refuels.Add(1)
	if b.stopped != nil { // a sleep (sleep) stopped the call
		return -1
	}
	next := b.meter.Refuel(counter)
	if next < 0 {
		return next
	}
	if b.f.pace != nil {
		t := b.f.now()
		b.pay(b.meter.Spent(next))
		b.waited += b.f.now().Sub(t)
	}
	others := callStarts.Load() - b.f.starts.Load()
	if !b.sliceAt.IsZero() && others != b.others {
		now := time.Now()
		if d := min(sched.GiveWay(now.Sub(b.sliceAt), sched.Machine.Contended(now), b.slices), b.f.yielding-b.slept); d > 0 {
			b.gaveWay.Add(1)
			b.slept += d
			sched.Sleep(b.ctx, d)
		}
	}
	b.others = others
	now := time.Now()
	if b.yieldAt.IsZero() {
		b.yieldAt, b.yielded = now, b.slices
	} else if now.Sub(b.yieldAt) >= yieldEvery || b.slices-b.yielded >= yieldSlices {
		runtime.Gosched()
		now = time.Now()
		b.yieldAt, b.yielded = now, b.slices
	}
	if b.ctx.Err() != nil {
		b.stopped = fmt.Errorf("%w: %w", ErrCanceled, context.Cause(b.ctx))
		return -1 // the guest traps; stop reports the cause
	}
	// The call-timeout, on the clock: the time the call ran, less what
	// the host made it wait (giving way, FuelRate).
	if d := b.f.deadline; d > 0 && b.f.now().Sub(b.began)-b.slept-b.waited > d {
		b.stopped = fmt.Errorf("%w: the call ran past its call-timeout of %s", ErrDeadline, d)
		return -1
	}
	b.slices++
	b.sliceAt = now
	return next
}

// sleep is a sleep of the guest (a granted clock's poll_oneoff), which
// the clock sees but fuel does not: it may take what is left of the
// call-timeout, on the clock refuel checks it by, and under a CallFuel
// budget (no deadline on the clock) the call's sleeps together may take
// one call-timeout (none when that is 0). A sleep cut short by either
// fails the call, and so does one its context ended (the job was
// cancelled); the slice is emptied after every sleep, so that the guest's
// next metering site refuels and checks. Thirty sleeps of 100 ms each ran
// a call 3 s under a 100 ms call-timeout, successfully, when each was
// only capped at the call-timeout.
func (b *fuelBound) sleep(d time.Duration) {
	defer b.meter.Charge(max(b.meter.Remaining(), 0) + 1)
	var left time.Duration
	switch limit := b.f.sleeps; {
	case b.f.deadline > 0:
		left = b.f.deadline - (b.f.now().Sub(b.began) - b.slept - b.waited)
	case limit > 0:
		left = limit - b.napped
	default:
		left = d
	}
	cut := d > left
	d = min(d, max(left, 0))
	t := time.Now()
	passed := sleepFor(b.ctx, d)
	b.napped += time.Since(t)
	switch {
	case b.stopped != nil:
	case !passed:
		b.stopped = fmt.Errorf("%w: %w", ErrCanceled, context.Cause(b.ctx))
	case cut && b.f.deadline > 0:
		b.stopped = fmt.Errorf("%w: the call ran past its call-timeout of %s, sleeping", ErrDeadline, b.f.deadline)
	case cut:
		b.stopped = fmt.Errorf("%w: the call's sleeps passed the call-timeout of %s", ErrDeadline, b.f.sleeps)
	}
}

// pay charges the Host's FuelRate with the fuel the call spent since it
// last paid, waiting while the Host is over its rate (or until the call's
// context ends).
func (b *fuelBound) pay(spent int64) {
	if b.f.pace != nil && spent > b.paid {
		b.f.pace.Take(b.ctx, spent-b.paid)
		b.paid = spent
	}
}

func (b *fuelBound) stop(callErr error) error {
	used, err := b.meter.End(callErr)
	switch {
	case b.stopped != nil:
		return b.stopped
	case callErr != nil && errors.Is(err, fuel.ErrExhausted):
		return fmt.Errorf("%w: %s", ErrDeadline, b.f.limit())
	}
	// A call that fitted in its first slice pays here; a cancelled wait
	// only ends the wait: the call's result stands.
	b.pay(used)
	return nil
}

func (b *fuelBound) release() {}

// charge takes units from the guest's counter: the next metering site
// that finds it spent calls refuel, which checks the call-timeout and the
// context and pays FuelRate, as for the guest's own work.
func (b *fuelBound) charge(units int64) { b.meter.Charge(units) }

// hostRefuel is fuel.RefuelModule's refuel: stack[0] is the guest's
// counter, negative, and gets the next slice. A call without an instance
// (a start function, which runs during instantiation on its initial fuel)
// gets nothing: it stops with errStartFuel, which startError words.
func hostRefuel(ctx context.Context, _ api.Module, stack []uint64) {
	in := current(ctx)
	if in == nil {
		panic(errStartFuel) // wazero ends the start function with it
	}
	if b, ok := in.bound.(*fuelBound); ok {
		stack[0] = uint64(b.refuel(int64(stack[0])))
	}
}

// errStartFuel ends a start function that spent its fuel (StartFuel).
var errStartFuel = errors.New("start function spent its fuel")
