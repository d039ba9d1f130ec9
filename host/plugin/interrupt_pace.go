package plugin

import (
	"context"
	"sync"
	"time"
)

// pacer holds the guests of one Host to Config.FuelRate fuel units per
// second, summed over all its instances: a token bucket kept as the time
// at which the fuel charged so far is paid for (GCRA). Calls pay after
// they spend (at each refuel, and when they return) and wait while the
// Host is more than burst ahead of its rate; fuel that was not spent while
// the Host was idle is not saved up beyond burst.
type pacer struct {
	rate  float64       // units per second
	burst time.Duration // how far ahead of the clock the Host may run

	mu   sync.Mutex
	paid time.Time // when the fuel charged so far will have been paid for

	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration)
}

// FuelPacer is a FuelRate that several Hosts share (Config.FuelPacer):
// their guests together spend at most its rate.
type FuelPacer struct{ p *pacer }

// NewFuelPacer returns a pacer of rate fuel units per second, or nil (no
// cap) when rate is 0 or less.
func NewFuelPacer(rate int64) *FuelPacer {
	if rate <= 0 {
		return nil
	}
	return &FuelPacer{p: newPacer(rate)}
}

// pacerBurst is how far ahead of its rate a Host may run: a tenant that
// was idle may spend this much at once.
const pacerBurst = 100 * time.Millisecond

func newPacer(rate int64) *pacer {
	return &pacer{rate: float64(rate), burst: pacerBurst, now: time.Now, sleep: sleepCtx}
}

// worth is the time n units take at the rate (at most a day: a bound
// that keeps the arithmetic in range).
func (p *pacer) worth(n int64) time.Duration {
	return time.Duration(min(float64(n)/p.rate, 86400) * float64(time.Second))
}

// take charges n units and waits while the Host is more than burst ahead
// of its rate, or until ctx ends.
func (p *pacer) take(ctx context.Context, n int64) {
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

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
