package plugin

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/runtime"
)

// fuelBoundOf returns the fuel bound of op's live instance.
func fuelBoundOf(tb testing.TB, op *Operator) *fuelBound {
	tb.Helper()
	in, err := op.r.get()
	if err != nil {
		tb.Fatal(err)
	}
	b, ok := in.bound.(*fuelBound)
	if !ok {
		tb.Fatalf("the instance is bound by %T, not fuel", in.bound)
	}
	return b
}

// TestRefuelOncePerSlice: a runaway whose budget is n slices calls the
// refuel import n times (the last to be told to trap) and stops with the
// same error as a budget handed out at once; a call that fits in its
// first slice never calls it.
func TestRefuelOncePerSlice(t *testing.T) {
	for _, n := range []int64{1, 3, 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h := newHost(t, func(c *Config) { c.CallFuel = n * FuelSlice })
			op := open(t, load(t, h, "script"), runtime.OpenContext{})
			b := fuelBoundOf(t, op)
			before := b.refuels.Load()
			if _, err := (&script{}).do(opCheckOpened, 0).run(op); err != nil {
				t.Fatal(err)
			}
			if got := b.refuels.Load() - before; got != 0 {
				t.Errorf("a short call refueled %d times", got)
			}
			_, err := (&script{}).do(opSpin, 0).run(op)
			wantErr(t, err, fmt.Sprintf(`plugin "script" (operator op1, subtask 1/1) export sluice_process: deadline exceeded: the call spent its CPU budget of %d fuel units (CallFuel)`, n*FuelSlice))
			if got := b.refuels.Load() - before; got != n {
				t.Errorf("a runaway with a budget of %d slices refueled %d times, want %d", n, got, n)
			}
			if got := b.gaveWay.Load(); got != 0 {
				t.Errorf("a lone Host's runaway gave way %d times", got)
			}
		})
	}
}

// TestRunawaysShareOneThread: with one P (GOMAXPROCS 1), two runaways of
// one Host both make progress while the other runs: a guest cannot be
// preempted by Go, so without the yield between slices the second would
// start only when the first had trapped.
func TestRunawaysShareOneThread(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	const slices = 20
	h := newHost(t, func(c *Config) { c.CallFuel = slices * FuelSlice })
	m := load(t, h, "script")
	ops := [2]*Operator{open(t, m, runtime.OpenContext{Operator: "a"}), open(t, m, runtime.OpenContext{Operator: "b"})}
	bounds := [2]*fuelBound{fuelBoundOf(t, ops[0]), fuelBoundOf(t, ops[1])}
	var seen [2][2]int64 // the other call's refuels when each call began and ended
	var errs [2]error
	var wg sync.WaitGroup
	for i := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			other := bounds[1-i]
			seen[i][0] = other.refuels.Load()
			_, errs[i] = (&script{}).do(opSpin, 0).run(ops[i])
			seen[i][1] = other.refuels.Load()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrDeadline) {
			t.Fatalf("runaway %d: %v, want ErrDeadline", i, err)
		}
		if seen[i][1] <= seen[i][0] {
			t.Errorf("runaway %d: the other made no progress while it ran (other's refuels %d at its start, %d at its end)", i, seen[i][0], seen[i][1])
		}
		if got := bounds[i].refuels.Load(); got != slices {
			t.Errorf("runaway %d refueled %d times, want %d", i, got, slices)
		}
	}
}

// fakeClock drives a pacer: sleeping advances it.
type fakeClock struct {
	mu    sync.Mutex
	t     time.Time
	slept time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) sleep(_ context.Context, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.slept += d
}

// advance lets time pass without anyone sleeping.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func fakePace(h *Host) *fakeClock {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	h.intr.(*fuelInterrupter).pace.SetClock(clock.now, clock.sleep)
	return clock
}

// TestFuelRateHoldsARunaway: with FuelRate set, a runaway spends its
// budget at that rate (on a fake clock: the waits are what advances it),
// up to the burst, and still stops where its budget ends.
func TestFuelRateHoldsARunaway(t *testing.T) {
	const rate = 4 * FuelSlice // units per second
	const budget = 40 * FuelSlice
	h := newHost(t, func(c *Config) { c.CallFuel, c.FuelRate = budget, rate })
	clock := fakePace(h)
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	start := clock.now()
	_, err := (&script{}).do(opSpin, 0).run(op)
	if !errors.Is(err, ErrDeadline) {
		t.Fatalf("runaway: %v, want ErrDeadline", err)
	}
	elapsed := clock.now().Sub(start)
	// 40 slices at 4 a second: 10 s, less the burst (100 ms) and the
	// slice spent when it trapped, unpaid (250 ms).
	want := time.Duration(budget) * time.Second / rate
	if lo, hi := want-600*time.Millisecond, want; elapsed < lo || elapsed > hi {
		t.Errorf("a runaway of %d units at %d units/s took %s of the fake clock, want %s to %s", budget, rate, elapsed, lo, hi)
	}
	t.Logf("%d units in %s: %.0f units/s (FuelRate %d)", budget, elapsed, float64(budget)/elapsed.Seconds(), rate)
}

// TestFuelRateCountsShortCalls: calls that fit in their first slice pay
// when they return, so a tenant of many short calls is held to the rate
// too; idle time is not saved up beyond the burst.
func TestFuelRateCountsShortCalls(t *testing.T) {
	const rate = 1_000_000 // units per second: a short call spends a few hundred
	h := newHost(t, func(c *Config) { c.FuelRate = rate })
	clock := fakePace(h)
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	b := fuelBoundOf(t, op)
	run := func(calls int) (spent int64, took time.Duration) {
		start := clock.now()
		for i := 0; i < calls; i++ {
			if _, err := (&script{}).do(opCheckOpened, 0).run(op); err != nil {
				t.Fatal(err)
			}
			spent += b.meter.Spent(b.meter.Remaining())
		}
		return spent, clock.now().Sub(start)
	}
	spent, took := run(20_000)
	burst := h.intr.(*fuelInterrupter).pace.Burst()
	if want := time.Duration(spent)*time.Second/rate - burst; took < want || took > want+10*time.Millisecond {
		t.Errorf("%d short calls spent %d units in %s of the fake clock, want %s at %d units/s after the burst", 20_000, spent, took, want, rate)
	}
	// After an idle minute, the burst is available again, but no more.
	clock.advance(time.Minute)
	slept := clock.slept
	spent, _ = run(100)
	if worth := time.Duration(spent) * time.Second / rate; worth > burst || clock.slept != slept {
		t.Errorf("after an idle minute, %d units (%s worth) waited %s; want them within the %s burst, no wait", spent, worth, clock.slept-slept, burst)
	}
}

// TestCallTimeoutIsTime: without CallFuel, a call stops when it has run
// for its call-timeout on the clock, however much fuel that took: here a
// fake clock that moves 100 ms at every reading stops a 1 s call at its
// tenth slice or so, where the fuel backstop (5e10 units) would have
// allowed some 48,000.
func TestCallTimeoutIsTime(t *testing.T) {
	h := newHost(t, func(c *Config) { c.CallTimeout = time.Second })
	op := load(t, h, "script").NewOperator(context.Background(), "op1", nil)
	if err := op.Open(&runtime.OpenContext{Operator: "op1", Parallelism: 1, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	defer op.Close(nil)
	b := fuelBoundOf(t, op)
	var clock time.Time
	b.f.now = func() time.Time { clock = clock.Add(100 * time.Millisecond); return clock }
	_, err := (&script{}).do(opSpin, 0).run(op)
	pe := wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: deadline exceeded: the call ran past its call-timeout of 1s`)
	if !pe.Poisoned || !errors.Is(err, ErrDeadline) {
		t.Errorf("poisoned %v, cause %v", pe.Poisoned, pe.Cause)
	}
	if n := b.refuels.Load(); n < 10 || n > 12 {
		t.Errorf("%d refuels, want 10 or 11: one clock reading of 100 ms each, 1 s allowed", n)
	}
}

// TestRefuelStopsACanceledCall: a runaway whose context ends stops at its
// next slice with ErrCanceled, not at the end of its budget.
func TestRefuelStopsACanceledCall(t *testing.T) {
	h := newHost(t, func(c *Config) { c.CallTimeout = time.Hour }) // 3.6e12 units: hours of spinning
	ctx, cancel := context.WithCancelCause(context.Background())
	op := load(t, h, "script").NewOperator(ctx, "op1", nil)
	if err := op.Open(&runtime.OpenContext{Operator: "op1", Parallelism: 1, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	defer op.Close(nil)
	b := fuelBoundOf(t, op)
	go func() {
		for b.refuels.Load() < 3 {
			goruntime.Gosched()
		}
		cancel(errors.New("the job was stopped"))
	}()
	_, err := (&script{}).do(opSpin, 0).run(op)
	pe := wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: canceled: the job was stopped`)
	if !pe.Poisoned || !errors.Is(err, ErrCanceled) {
		t.Errorf("poisoned %v, cause %v", pe.Poisoned, pe.Cause)
	}
}

// TestFuelPacerIsSharedByItsHosts: Hosts given the same FuelPacer spend
// one rate together (a tenant's jobs, each on its own Host): after a
// runaway on one used the rate up to the burst, short calls on the other
// wait for it, where a Host of its own would have run them at once.
func TestFuelPacerIsSharedByItsHosts(t *testing.T) {
	const rate = 4 * FuelSlice
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprint("shared=", shared), func(t *testing.T) {
			pacer := NewFuelPacer(rate)
			edit := func(c *Config) {
				c.CallFuel = 8 * FuelSlice
				if shared {
					c.FuelPacer = pacer
				} else {
					c.FuelRate = rate
				}
			}
			h1, h2 := newHost(t, edit), newHost(t, edit)
			clock := fakePace(h1)
			if !shared {
				h2.intr.(*fuelInterrupter).pace.SetClock(clock.now, clock.sleep)
			}
			if p1, p2 := h1.intr.(*fuelInterrupter).pace, h2.intr.(*fuelInterrupter).pace; (p1 == p2) != shared || (shared && p1 != pacer.p) {
				t.Fatalf("pacers %p and %p (shared %p), want shared=%v", p1, p2, pacer.p, shared)
			}
			if _, err := (&script{}).do(opSpin, 0).run(open(t, load(t, h1, "script"), runtime.OpenContext{})); !errors.Is(err, ErrDeadline) {
				t.Fatalf("runaway: %v, want ErrDeadline", err)
			}
			op := open(t, load(t, h2, "script"), runtime.OpenContext{})
			slept := clock.slept
			for range 100 {
				if _, err := (&script{}).do(opCheckOpened, 0).run(op); err != nil {
					t.Fatal(err)
				}
			}
			if waited := clock.slept - slept; (waited > 0) != shared {
				t.Errorf("100 short calls on the second Host waited %s after a runaway on the first, want a wait: %v", waited, shared)
			}
		})
	}
	if NewFuelPacer(0) != nil {
		t.Error("NewFuelPacer(0) is a cap")
	}
}

// TestHostCallsBillFuel: a host function's work is billed to the call's
// fuel, by the bytes it handles, so a guest cannot hide work in host calls
// (a loop of 8 MiB state copies ran 175 s past a 1 s call-timeout): ten
// error calls of 4096 bytes spend ten times 2048 units more than ten of
// none.
func TestHostCallsBillFuel(t *testing.T) {
	h := newHost(t, func(c *Config) { c.CallFuel = 1 << 40 })
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	spent := func(n int32) int64 {
		s := &script{}
		addr := s.data(make([]byte, 4096))
		for i := 0; i < 10; i++ {
			s.do(opError, 0, addr, n)
		}
		if _, err := s.run(op); err != nil {
			t.Fatal(err)
		}
		b := fuelBoundOf(t, op)
		return b.meter.Spent(b.meter.Remaining())
	}
	none, full := spent(0), spent(4096)
	if d := full - none; d != 10*4096/bytesPerFuel {
		t.Fatalf("4096-byte error calls spent %d units more than empty ones (%d, %d), want %d", d, full, none, 10*4096/bytesPerFuel)
	}
	if none < 10*hostCallFuel {
		t.Fatalf("ten host calls spent %d units, under %d", none, 10*hostCallFuel)
	}
}

// TestWASICallsBillFuel: WASI's functions are host calls too, billed as
// sluice_v1's are. random_get over 8 MiB in a loop never spent a slice of
// fuel: the call ran its 100 fills (~0.5 s) past a 100 ms call-timeout and
// succeeded (2000 fills ran 9.5 s past 1 s); billed, the clock is read and
// the call stops. fd_write refuses more than IOV_MAX iovecs, as writev does
// (a million empty ones a call, in a loop, ran 19 s past 1 s).
func TestWASICallsBillFuel(t *testing.T) {
	h := newHost(t, func(c *Config) { c.CallTimeout = 100 * time.Millisecond })
	op := open(t, load(t, h, "wasiloop"), runtime.OpenContext{})
	w := filterBatch(1)
	err := op.Process(0, w.Buf, 1, &sink{})
	if !errors.Is(err, ErrDeadline) {
		t.Errorf("random_get loop past the call-timeout: %v, want %v", err, ErrDeadline)
	}
	w = filterBatch(2)
	if err := op.Process(0, w.Buf, 2, &sink{}); err != nil {
		t.Errorf("fd_write with 1025 iovecs must fail with EINVAL, and with 1024 pass: %v", err)
	}
}

// TestGrantedSleepStopsAtTheCallTimeout: a plugin granted the clock sleeps
// for real in poll_oneoff, which wazero could not cut short (a one-hour
// sleep held its subtask and the job's cancel for the hour). The host now
// sleeps it: at most the call-timeout, then the guest's next metering site
// stops the call; a cancel ends the sleep at once.
func TestGrantedSleepStopsAtTheCallTimeout(t *testing.T) {
	h := newHost(t, func(c *Config) { c.CallTimeout = 100 * time.Millisecond })
	m := load(t, h, "wasiloop").Grant(Grants{Clock: true})
	op := open(t, m, runtime.OpenContext{})
	w := filterBatch(3)
	if err := op.Process(0, w.Buf, 3, &sink{}); !errors.Is(err, ErrDeadline) {
		t.Errorf("a 3 s sleep under a 100 ms call-timeout: %v, want %v", err, ErrDeadline)
	}
	// sleeps that each fit the call-timeout count against it (30 of
	// 100 ms ran a call 3 s, successfully), and a poll_oneoff of two clock
	// subscriptions is slept by the host too (wazero slept it 3 s)
	for _, c := range []struct {
		n    int
		what string
	}{{4, "30 sleeps of 100 ms"}, {5, "two clock subscriptions of 3 s"}, {6, "a 3 s sleep, then a return"}} {
		w := filterBatch(c.n)
		if err := op.Process(0, w.Buf, c.n, &sink{}); !errors.Is(err, ErrDeadline) {
			t.Errorf("%s under a 100 ms call-timeout: %v, want %v", c.what, err, ErrDeadline)
		}
	}
	// the same under a CallFuel budget (no deadline on the clock: the
	// call's sleeps together may take one call-timeout) and under wazero's
	// deadline (Interruption deadline)
	for _, edit := range []func(*Config){
		func(c *Config) { c.CallTimeout, c.CallFuel = 100*time.Millisecond, 1e9 },
		func(c *Config) { c.CallTimeout, c.Interruption = 100*time.Millisecond, InterruptDeadline },
	} {
		hc := newHost(t, edit)
		op := open(t, load(t, hc, "wasiloop").Grant(Grants{Clock: true}), runtime.OpenContext{})
		for _, n := range []int{4, 6} {
			w := filterBatch(n)
			if err := op.Process(0, w.Buf, n, &sink{}); !errors.Is(err, ErrDeadline) {
				t.Errorf("CallFuel %d, Interruption %q: case %d under a 100 ms call-timeout: %v, want %v", hc.cfg.CallFuel, hc.cfg.Interruption, n, err, ErrDeadline)
			}
		}
	}
	// cancelled mid-sleep (a call-timeout of a minute does not end it)
	h = newHost(t, func(c *Config) { c.CallTimeout = time.Minute })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	op = load(t, h, "wasiloop").Grant(Grants{Clock: true}).NewOperator(ctx, "op", nil)
	if err := op.Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	defer op.Close(nil)
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := op.Process(0, w.Buf, 3, &sink{}); !errors.Is(err, ErrCanceled) {
		t.Errorf("a sleep cancelled: %v, want %v", err, ErrCanceled)
	}
}
