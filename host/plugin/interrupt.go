package plugin

import (
	"context"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
)

// interrupter bounds how long one call into a guest may run. This seam
// keeps the mechanism swappable: today wazero closes the module when the
// call's context ends (WithCloseOnContextDone), which costs a check at
// every loop header; a cheaper fuel counter can replace it here without
// touching the call path.
type interrupter interface {
	// configure prepares the runtime (once, when the Host is built).
	configure(wazero.RuntimeConfig) wazero.RuntimeConfig
	// bind returns the bound of one instance's calls. parent carries the
	// instance to the host functions and may be canceled by the caller.
	bind(parent context.Context) callBound
	// limit describes the bound, for error messages.
	limit() string
}

// callBound bounds the calls of one instance, one at a time.
type callBound interface {
	// start returns the context of the next call.
	start() context.Context
	// stop ends the call start began.
	stop()
	// release frees the bound when the instance closes.
	release()
}

// deadlineInterrupter stops a call at a deadline of timeout.
type deadlineInterrupter struct{ timeout time.Duration }

func (d deadlineInterrupter) configure(c wazero.RuntimeConfig) wazero.RuntimeConfig {
	return c.WithCloseOnContextDone(true)
}

func (d deadlineInterrupter) limit() string { return d.timeout.String() + " (CallTimeout)" }

func (d deadlineInterrupter) bind(parent context.Context) callBound {
	c := &deadlineCtx{parent: parent, timeout: d.timeout, done: make(chan struct{})}
	c.unhook = context.AfterFunc(parent, func() { c.end(parent.Err()) })
	return c
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

func (c *deadlineCtx) stop() { c.timer.Stop() }

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
