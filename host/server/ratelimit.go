package server

import (
	"math"
	"sync"
	"time"
)

// limiter is a token bucket per principal: rate tokens a second, at most
// burst at once; each request takes one. Safe for concurrent use.
type limiter struct {
	rate  float64
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(rate float64, burst int, now func() time.Time) *limiter {
	return &limiter{rate: rate, burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// allow takes a token from key's bucket; when there is none it says how
// long until there will be.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(l.burst, b.tokens+el*l.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
	return false, wait
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
