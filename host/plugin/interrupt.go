package plugin

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sluicehq/sluice/host/plugin/fuel"
	"github.com/sluicehq/sluice/internal/wasmbin"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// interrupter bounds how much one call into a guest may run. This seam
// keeps the mechanism swappable (RATIONALE.md, "Why fuel?"): the default
// rewrites every module so that function entries and loop headers spend
// fuel, handed to each call in slices between which the guest yields
// (interrupt_fuel.go, package sched); wazero's WithCloseOnContextDone,
// 4–40× slower on loop-heavy guests, remains for comparison
// (Config.Interruption).
type interrupter interface {
	// configure prepares the runtime (once, when the Host is built).
	configure(wazero.RuntimeConfig) wazero.RuntimeConfig
	// instantiate adds the host modules the prepared modules import
	// besides the ABI's (once, when the Host is built).
	instantiate(context.Context, wazero.Runtime) error
	// prepare rewrites a module's bytes (decoded as m) before it is
	// compiled.
	prepare(bin []byte, m *wasmbin.Module) ([]byte, error)
	// bind returns the bound of one instance's calls, once the instance
	// exists. parent carries the instance to the host functions and may
	// be canceled by the caller.
	bind(parent context.Context, mod api.Module) (callBound, error)
	// limit describes the bound, for error messages.
	limit() string
}

// callBound bounds the calls of one instance, one at a time.
type callBound interface {
	// start returns the context of the next call.
	start() context.Context
	// stop ends the call start began. When the bound itself stopped the
	// call (its budget is spent) it returns the cause, else nil.
	stop(callErr error) error
	// release frees the bound when the instance closes.
	release()
	// charge bills the call for work a host function did for it (see
	// hostFuel), so that a guest cannot hide work in host calls.
	charge(units int64)
	// sleep is a sleep of the call's guest (a granted clock's
	// poll_oneoff): at most d, within the call's bound, cut short when
	// the call's context ends. A sleep the bound cut short fails the call.
	sleep(d time.Duration)
}

// sleepFor waits d or until ctx ends; it reports whether d passed.
func sleepFor(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Interruption mechanisms (Config.Interruption).
const (
	InterruptFuel     = "fuel"     // metered modules: CallTimeout at every slice, or a deterministic CallFuel budget (default)
	InterruptDeadline = "deadline" // wazero's WithCloseOnContextDone and a wall-clock deadline
	InterruptNone     = "none"     // unbounded: benchmarks of the sandbox's cost only
)

func newInterrupter(cfg Config) interrupter {
	switch cfg.Interruption {
	case InterruptDeadline:
		return deadlineInterrupter{cfg.CallTimeout}
	case InterruptNone:
		return noInterrupter{}
	}
	return newFuelInterrupter(cfg)
}

// noInterrupter leaves calls unbounded.
type noInterrupter struct{}

func (noInterrupter) configure(c wazero.RuntimeConfig) wazero.RuntimeConfig { return c }
func (noInterrupter) instantiate(context.Context, wazero.Runtime) error     { return nil }
func (noInterrupter) prepare(bin []byte, m *wasmbin.Module) ([]byte, error) {
	return checkLimits(bin, m)
}
func (noInterrupter) limit() string { return "no limit" }
func (noInterrupter) bind(parent context.Context, _ api.Module) (callBound, error) {
	return unbound{parent}, nil
}

type unbound struct{ ctx context.Context }

func (u unbound) start() context.Context { return u.ctx }
func (unbound) stop(error) error         { return nil }
func (unbound) release()                 {}
func (unbound) charge(int64)             {}
func (u unbound) sleep(d time.Duration)  { sleepFor(u.ctx, d) }

// deadlineInterrupter stops a call at a deadline of timeout.
type deadlineInterrupter struct{ timeout time.Duration }

func (d deadlineInterrupter) configure(c wazero.RuntimeConfig) wazero.RuntimeConfig {
	return c.WithCloseOnContextDone(true)
}

func (d deadlineInterrupter) prepare(bin []byte, m *wasmbin.Module) ([]byte, error) {
	return checkLimits(bin, m)
}

// checkLimits passes bin on unchanged if it is within the compile limits
// that fuel.Instrument enforces when it meters a module (package fuel,
// limits.go): wazero's compiler cannot be stopped, and a few kilobytes of
// deeply nested blocks or of locals hold it for minutes or gigabytes.
func checkLimits(bin []byte, m *wasmbin.Module) ([]byte, error) {
	if err := fuel.CheckModuleLimits(m); err != nil {
		return nil, err
	}
	return bin, nil
}

func (deadlineInterrupter) instantiate(context.Context, wazero.Runtime) error { return nil }

func (d deadlineInterrupter) limit() string {
	return "the call ran past its deadline of " + d.timeout.String() + " (the call-timeout setting)"
}

func (d deadlineInterrupter) bind(parent context.Context, _ api.Module) (callBound, error) {
	c := &deadlineCtx{parent: parent, timeout: d.timeout, done: make(chan struct{})}
	c.unhook = context.AfterFunc(parent, func() { c.end(parent.Err()) })
	return c, nil
}

// deadlineCtx is a context reused by every call of one instance: one
// timer, reset per call, and a done channel made again only after it
// fired. A call costs no allocation here (context.WithTimeout costs four).
type deadlineCtx struct {
	parent  context.Context
	timeout time.Duration
	timer   *time.Timer
	unhook  func() bool

	mu       sync.Mutex
	done     chan struct{}
	err      error
	deadline time.Time
	cut      bool // a sleep of the call ran into the deadline (the call's goroutine only)
}

func (c *deadlineCtx) start() context.Context {
	c.mu.Lock()
	if c.err != nil && c.parent.Err() == nil { // the last call timed out
		c.done, c.err = make(chan struct{}), nil
	}
	c.deadline = time.Now().Add(c.timeout)
	c.mu.Unlock()
	if c.timer == nil {
		c.timer = time.AfterFunc(c.timeout, c.fire)
	} else {
		c.timer.Reset(c.timeout)
	}
	return c
}

// stop disarms the timer; wazero reports a deadline as an exit code,
// which callFailure turns into ErrDeadline.
func (c *deadlineCtx) stop(error) error {
	c.timer.Stop()
	if c.cut {
		c.cut = false
		return fmt.Errorf("%w: the call slept past its deadline of %s", ErrDeadline, c.timeout)
	}
	return nil
}

// sleep sleeps within the call's deadline; one the deadline cut short
// fails the call (the guest may return before wazero sees the deadline).
func (c *deadlineCtx) sleep(d time.Duration) {
	c.mu.Lock()
	left := time.Until(c.deadline)
	c.mu.Unlock()
	if left < d {
		d, c.cut = max(left, 0), true
	}
	sleepFor(c, d)
}

// charge has nothing to bill: the deadline is on the clock, which host
// work advances too.
func (c *deadlineCtx) charge(int64) {}

func (c *deadlineCtx) release() {
	if c.timer != nil {
		c.timer.Stop()
	}
	c.unhook()
}

// fire ends the call when its deadline has passed; a late run of the
// timer of an earlier call sees a later deadline and does nothing.
func (c *deadlineCtx) fire() {
	c.mu.Lock()
	late := !time.Now().Before(c.deadline)
	c.mu.Unlock()
	if late {
		c.end(context.DeadlineExceeded)
	}
}

func (c *deadlineCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.done)
	}
}

func (c *deadlineCtx) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline, true
}

func (c *deadlineCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

func (c *deadlineCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *deadlineCtx) Value(k any) any { return c.parent.Value(k) }

// errNoCounter is returned when a metered module lacks its counter.
var errNoCounter = errors.New("the metered module exports no fuel counter")
