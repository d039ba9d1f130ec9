package server

import (
	"sync"
	"time"

	xrate "golang.org/x/time/rate" // job.go has a type rate
)

// limiter is a token bucket per principal (golang.org/x/time/rate): rate
// tokens a second, at most burst at once; each request takes one. Safe
// for concurrent use.
type limiter struct {
	rate  xrate.Limit
	burst int
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*xrate.Limiter
}

func newLimiter(r float64, burst int, now func() time.Time) *limiter {
	return &limiter{rate: xrate.Limit(r), burst: burst, now: now, buckets: map[string]*xrate.Limiter{}}
}

// allow takes a token from key's bucket; when there is none it says how
// long until there will be.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	b := l.buckets[key]
	if b == nil {
		b = xrate.NewLimiter(l.rate, l.burst) // full: a burst at once
		l.buckets[key] = b
	}
	l.mu.Unlock()
	// a reservation says how long the token would take; a request that
	// would wait is refused instead, and gives its token back
	r := b.ReserveN(now, 1)
	if wait := r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return false, wait
	}
	return true, 0
}

// Allow takes one request from p's rate limit (rate-limit requests per
// second, rate-burst at once). When it is spent, it returns false and how
// long to wait, and counts the refusal in the tenant's usage.
func (s *Server) Allow(p Principal) (bool, time.Duration) {
	key := "tenant:" + p.Tenant
	if p.Admin {
		key = "admin"
	}
	ok, wait := s.limit.allow(key)
	if !ok {
		if t := s.tenants[p.Tenant]; t != nil {
			t.rateLimited.Add(1)
		}
	}
	return ok, wait
}
