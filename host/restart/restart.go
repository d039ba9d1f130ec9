// Package restart is the restart policy of a plugin operator subtask
// whose instance a record crashed (poisoned) while the operator's
// on-error absorbed the record: crashes are counted in a sliding window,
// past the allowed attempts the job fails (a crash loop does not spin),
// else the next instance comes after a fixed delay. The count is a state
// machine driven by the times given to it (no clock of its own), so tests
// drive it without waiting; host/plugin applies it.
package restart

import (
	"context"
	"time"
)

// Policy is how many crashes an operator subtask may have and what a
// restart costs (the restart-attempts, restart-window and restart-delay
// settings).
type Policy struct {
	Attempts int           // crashes allowed within Window; one more fails the job
	Window   time.Duration // the sliding window Attempts counts in
	Delay    time.Duration // the wait before the next instance; 0: none
}

// Crashes is one operator subtask's crashes within the window. Its owner
// uses it from one goroutine.
type Crashes struct{ at []time.Time }

// Record counts a crash at now under p, forgetting those older than
// p.Window: n is the count in the window, over whether it passes
// p.Attempts (the job must fail).
func (c *Crashes) Record(p Policy, now time.Time) (n int, over bool) {
	kept := c.at[:0]
	for _, t := range c.at {
		if now.Sub(t) < p.Window {
			kept = append(kept, t)
		}
	}
	c.at = append(kept, now)
	return len(c.at), len(c.at) > p.Attempts
}

// Wait waits p.Delay before a restart; it returns ctx's error when ctx
// ends first.
func (p Policy) Wait(ctx context.Context) error {
	if p.Delay <= 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(p.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
