package sched

import (
	"context"
	"sync"
	"time"
)

// Pacer holds the guests that take from it to a rate of fuel units per
// second, summed over all of them (a Host's FuelRate, or a tenant's rate
// shared by its Hosts): a token bucket kept as the time at which the fuel
// charged so far is paid for (GCRA). Calls pay after they spend and wait
// while the pacer is more than PacerBurst ahead of its rate; fuel not
// spent while idle is not saved up beyond the burst. It is safe for
// concurrent use.
type Pacer struct {
	rate  float64       // units per second
	burst time.Duration // how far ahead of the clock its takers may run

	mu   sync.Mutex
	paid time.Time // when the fuel charged so far will have been paid for

	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration)
}

// PacerBurst is how far ahead of its rate a Pacer lets its takers run: a
// tenant that was idle may spend this much at once.
const PacerBurst = 100 * time.Millisecond

// NewPacer returns a pacer of rate (> 0) units per second on the clock.
func NewPacer(rate int64) *Pacer {
	return &Pacer{rate: float64(rate), burst: PacerBurst, now: time.Now, sleep: Sleep}
}

// SetClock makes p read the time from now and wait with sleep (a clock
// that only the waits advance, in tests); call it before p is used.
func (p *Pacer) SetClock(now func() time.Time, sleep func(ctx context.Context, d time.Duration)) {
	p.now, p.sleep = now, sleep
}

// Burst is how far ahead of its rate p lets its takers run.
func (p *Pacer) Burst() time.Duration { return p.burst }

// worth is the time n units take at the rate (at most a day: a bound
// that keeps the arithmetic in range).
func (p *Pacer) worth(n int64) time.Duration {
	return time.Duration(min(float64(n)/p.rate, 86400) * float64(time.Second))
}

// Take charges n units and waits while p is more than its burst ahead of
// its rate, or until ctx ends.
func (p *Pacer) Take(ctx context.Context, n int64) {
	p.mu.Lock()
	now := p.now()
	if p.paid.Before(now) {
		p.paid = now
	}
	p.paid = p.paid.Add(p.worth(n))
	wait := p.paid.Sub(now) - p.burst
	p.mu.Unlock()
	if wait > 0 {
		p.sleep(ctx, wait)
	}
}

// Sleep sleeps for d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
