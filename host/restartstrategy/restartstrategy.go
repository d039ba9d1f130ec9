// Package restartstrategy holds Flink's restart strategies (restart-strategy:
// none, fixed-delay, exponential-delay, failure-rate): their settings with
// Flink's defaults, and Backoff, the pure state machine that decides, on
// each failure of a job, whether it restarts and after how long. It has no
// clock and no goroutine: every failure carries the time it happened, and
// the exponential strategy's jitter comes from a random source the caller
// gives.
package restartstrategy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// The strategies, named as Flink's restart-strategy.type.
const (
	None             = "none"
	FixedDelay       = "fixed-delay"
	ExponentialDelay = "exponential-delay"
	FailureRate      = "failure-rate"
)

// Strategies lists the strategies' names.
var Strategies = []string{None, FixedDelay, ExponentialDelay, FailureRate}

// Unlimited is attempts-before-reset-backoff's default (Flink's
// Integer.MAX_VALUE, shown as "infinite").
const Unlimited = math.MaxInt32

// Config is one restart strategy with its parameters. Only the fields of
// Strategy are used; the others keep Flink's defaults.
type Config struct {
	Strategy string

	// fixed-delay: restart-strategy.fixed-delay.attempts and .delay.
	// failure-rate's delay (restart-strategy.failure-rate.delay) is Delay
	// too.
	Attempts int
	Delay    time.Duration

	// exponential-delay: restart-strategy.exponential-delay.*.
	InitialBackoff             time.Duration
	MaxBackoff                 time.Duration
	BackoffMultiplier          float64
	ResetBackoffThreshold      time.Duration
	JitterFactor               float64
	AttemptsBeforeResetBackoff int

	// failure-rate: restart-strategy.failure-rate.max-failures-per-interval
	// and .failure-rate-interval.
	MaxFailuresPerInterval int
	FailureRateInterval    time.Duration
}

// Defaults are Flink's RestartStrategyOptions: exponential-delay when
// checkpointing is on, none otherwise; every parameter at Flink's default
// (fixed-delay: 1 attempt, 1 s; exponential-delay: 1 s to 1 min, ×1.5,
// reset after 1 h, jitter 0.1, unlimited attempts; failure-rate: 1 failure
// per 1 min, 1 s delay).
func Defaults(checkpointing bool) Config {
	c := Config{
		Strategy:                   None,
		Attempts:                   1,
		Delay:                      time.Second,
		InitialBackoff:             time.Second,
		MaxBackoff:                 time.Minute,
		BackoffMultiplier:          1.5,
		ResetBackoffThreshold:      time.Hour,
		JitterFactor:               0.1,
		AttemptsBeforeResetBackoff: Unlimited,
		MaxFailuresPerInterval:     1,
		FailureRateInterval:        time.Minute,
	}
	if checkpointing {
		c.Strategy = ExponentialDelay
	}
	return c
}

// Validate checks the parameters of the chosen strategy with Flink's
// bounds, naming each by its pipeline key.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("restart-strategy %s: "+format, append([]any{c.Strategy}, args...)...)
	}
	switch c.Strategy {
	case None:
	case FixedDelay:
		if c.Attempts < 0 {
			return bad("attempts %d is negative", c.Attempts)
		}
		if c.Delay < 0 {
			return bad("delay %v is negative", c.Delay)
		}
	case ExponentialDelay:
		switch {
		case c.InitialBackoff < time.Millisecond:
			return bad("initial-backoff %v must be at least 1ms", c.InitialBackoff)
		case c.MaxBackoff < time.Millisecond:
			return bad("max-backoff %v must be at least 1ms", c.MaxBackoff)
		case c.InitialBackoff > c.MaxBackoff:
			return bad("initial-backoff %v is above max-backoff %v", c.InitialBackoff, c.MaxBackoff)
		case !(c.BackoffMultiplier > 1):
			return bad("backoff-multiplier %g must be greater than 1", c.BackoffMultiplier)
		case c.ResetBackoffThreshold < time.Millisecond:
			return bad("reset-backoff-threshold %v must be at least 1ms", c.ResetBackoffThreshold)
		case !(c.JitterFactor >= 0 && c.JitterFactor <= 1):
			return bad("jitter-factor %g must be between 0 and 1", c.JitterFactor)
		case c.AttemptsBeforeResetBackoff < 1:
			return bad("attempts-before-reset-backoff %d must be at least 1", c.AttemptsBeforeResetBackoff)
		}
	case FailureRate:
		switch {
		case c.MaxFailuresPerInterval < 1:
			return bad("max-failures-per-interval %d must be at least 1", c.MaxFailuresPerInterval)
		case c.FailureRateInterval < time.Millisecond:
			return bad("failure-rate-interval %v must be at least 1ms", c.FailureRateInterval)
		case c.Delay < 0:
			return bad("delay %v is negative", c.Delay)
		}
	default:
		return fmt.Errorf("restart-strategy: unknown strategy %q (want none, fixed-delay, exponential-delay or failure-rate)", c.Strategy)
	}
	return nil
}

// String describes the strategy and its parameters, for host plan and
// the logs.
func (c Config) String() string {
	switch c.Strategy {
	case FixedDelay:
		return fmt.Sprintf("fixed-delay (attempts %d, delay %v)", c.Attempts, c.Delay)
	case ExponentialDelay:
		attempts := "unlimited"
		if c.AttemptsBeforeResetBackoff != Unlimited {
			attempts = fmt.Sprint(c.AttemptsBeforeResetBackoff)
		}
		return fmt.Sprintf("exponential-delay (initial-backoff %v, max-backoff %v, backoff-multiplier %g, reset-backoff-threshold %v, jitter-factor %g, attempts-before-reset-backoff %s)",
			c.InitialBackoff, c.MaxBackoff, c.BackoffMultiplier, c.ResetBackoffThreshold, c.JitterFactor, attempts)
	case FailureRate:
		return fmt.Sprintf("failure-rate (max-failures-per-interval %d, failure-rate-interval %v, delay %v)",
			c.MaxFailuresPerInterval, c.FailureRateInterval, c.Delay)
	}
	return "none (a failure fails the job)"
}

// Decision is what Backoff says about one failure.
type Decision struct {
	// Restart: the job restarts after Delay; otherwise it fails.
	Restart bool
	Delay   time.Duration
	// NewAttempt is false when exponential-delay merged this failure into
	// the attempt already scheduled (it came before that restart was due).
	NewAttempt bool
}

// Backoff is Flink's RestartBackoffTimeStrategy for one job, as a pure
// state machine: Failure(now) is Flink's notifyFailure followed by
// canRestart and getBackoffTime. Not safe for concurrent use.
type Backoff struct {
	cfg  Config
	rand func(n int64) int64

	attempts int // fixed-delay: failures so far; exponential-delay: attempts since the last reset

	next    int64 // exponential-delay: the next restart, ms since the epoch
	hasNext bool

	failures []int64 // failure-rate: the latest failure times, ms, oldest first
}

// New returns the strategy's state machine. rand(n) must return a number
// in [0, n), for exponential-delay's jitter; nil uses math/rand/v2.
func New(c Config, random func(n int64) int64) (*Backoff, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if random == nil {
		random = rand.Int64N
	}
	return &Backoff{cfg: c, rand: random}, nil
}

// Config is the strategy the Backoff follows.
func (b *Backoff) Config() Config { return b.cfg }

// Failure records a failure of the job at now and decides.
func (b *Backoff) Failure(now time.Time) Decision {
	ms := now.UnixMilli()
	switch b.cfg.Strategy {
	case FixedDelay:
		// FixedDelayRestartBackoffTimeStrategy: attempts+1 failures fail
		// the job.
		b.attempts++
		return Decision{Restart: b.attempts <= b.cfg.Attempts, Delay: b.cfg.Delay, NewAttempt: true}
	case ExponentialDelay:
		return b.exponential(ms)
	case FailureRate:
		// FailureRateRestartBackoffTimeStrategy: the queue keeps the
		// latest max+1 failures; the job fails when the oldest of them is
		// within the interval of now.
		if len(b.failures) > b.cfg.MaxFailuresPerInterval {
			b.failures = b.failures[1:]
		}
		b.failures = append(b.failures, ms)
		restart := true
		if len(b.failures) > b.cfg.MaxFailuresPerInterval {
			restart = ms-b.failures[0] > b.cfg.FailureRateInterval.Milliseconds()
		}
		return Decision{Restart: restart, Delay: b.cfg.Delay, NewAttempt: true}
	}
	return Decision{}
}

// exponential is ExponentialDelayRestartBackoffTimeStrategy (Flink 1.19):
// failures before the scheduled restart merge into its attempt; a failure
// reset-backoff-threshold after the last scheduled restart starts over
// from initial-backoff; the job fails after attempts-before-reset-backoff
// attempts without a reset.
func (b *Backoff) exponential(now int64) Decision {
	c := b.cfg
	newAttempt := false
	if !b.hasNext || now > b.next {
		if !b.hasNext || now-b.next >= c.ResetBackoffThreshold.Milliseconds() {
			b.attempts = 0
		}
		initial, maxB := c.InitialBackoff.Milliseconds(), c.MaxBackoff.Milliseconds()
		// Flink's (long) cast of initial × multiplier^attempts, kept from
		// overflowing
		backoff := int64(min(float64(initial)*math.Pow(c.BackoffMultiplier, float64(b.attempts)), 1<<52))
		if c.JitterFactor != 0 {
			if offset := int64(float64(backoff) * c.JitterFactor); offset > 0 {
				backoff += b.rand(2*offset+1) - offset
			}
		}
		backoff = max(initial, min(backoff, maxB))
		b.next, b.hasNext = now+backoff, true
		b.attempts++
		newAttempt = true
	}
	return Decision{
		Restart:    b.attempts <= c.AttemptsBeforeResetBackoff,
		Delay:      time.Duration(max(0, b.next-now)) * time.Millisecond,
		NewAttempt: newAttempt,
	}
}
