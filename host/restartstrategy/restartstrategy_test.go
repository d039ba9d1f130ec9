package restartstrategy

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// The vectors are those of Flink's ExponentialDelayRestartBackoffTimeStrategyTest,
// FailureRateRestartBackoffTimeStrategyTest and
// FixedDelayRestartBackoffTimeStrategyTest
// (apache/flink:flink-runtime/src/test/java/org/apache/flink/runtime/executiongraph/failover/,
// @bb437bd0), with Flink's ManualClock as a time the test moves.

const ms = time.Millisecond

type clock struct{ t time.Time }

func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newClock() *clock { return &clock{t: time.UnixMilli(1_000_000)} }

func exponential(t *testing.T, initial, maxB time.Duration, mult float64, reset time.Duration, jitter float64, attempts int, random func(int64) int64) *Backoff {
	t.Helper()
	c := Defaults(true)
	c.InitialBackoff, c.MaxBackoff, c.BackoffMultiplier, c.ResetBackoffThreshold, c.JitterFactor, c.AttemptsBeforeResetBackoff =
		initial, maxB, mult, reset, jitter, attempts
	b, err := New(c, random)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const maxInt = math.MaxInt32 * ms // Flink's Integer.MAX_VALUE milliseconds

func TestExponentialMaxAttempts(t *testing.T) {
	clk := newClock()
	b := exponential(t, 1*ms, 3*ms, 1.2, 10*ms, 0.25, 13, nil)
	for i := 0; i < 13; i++ {
		if d := b.Failure(clk.t); !d.Restart || !d.NewAttempt {
			t.Fatalf("failure %d: %+v, want a restart", i+1, d)
		}
		clk.advance(4 * ms)
	}
	if d := b.Failure(clk.t); d.Restart {
		t.Fatalf("failure 14 of 13 attempts: %+v, want no restart", d)
	}
}

func TestExponentialInitialBackoff(t *testing.T) {
	b := exponential(t, 42*ms, 45*ms, 2, 8*ms, 0, Unlimited, nil)
	if d := b.Failure(newClock().t); d.Delay != 42*ms || !d.Restart {
		t.Fatalf("%+v, want a restart after 42ms", d)
	}
}

func TestExponentialMaxBackoff(t *testing.T) {
	b := exponential(t, 1*ms, 6*ms, 2, 8*ms, 0.25, Unlimited, nil)
	now := newClock().t
	for i := 0; i < 10; i++ {
		if d := b.Failure(now); d.Delay > 6*ms {
			t.Fatalf("failure %d: delay %v above max-backoff 6ms", i, d.Delay)
		}
	}
}

func TestExponentialResetBackoff(t *testing.T) {
	clk := newClock()
	b := exponential(t, 1*ms, 5*ms, 2, 8*ms, 0.25, Unlimited, nil)
	d := b.Failure(clk.t)
	clk.advance(8*ms + d.Delay - 1*ms)
	if d = b.Failure(clk.t); d.Delay != 2*ms {
		t.Fatalf("backoff should be increased: %v, want 2ms", d.Delay)
	}
	clk.advance(8*ms + d.Delay)
	if d = b.Failure(clk.t); d.Delay != 1*ms {
		t.Fatalf("backoff should be reset: %v, want 1ms", d.Delay)
	}
}

func TestExponentialBackoffMultiplier(t *testing.T) {
	clk := newClock()
	b := exponential(t, 4*ms, 300*ms, 2.3, maxInt, 0, 10, nil)
	for _, want := range []time.Duration{4 * ms, 9 * ms, 21 * ms} { // 4, 4×2.3, 4×2.3×2.3
		if d := b.Failure(clk.t); d.Delay != want || !d.Restart {
			t.Fatalf("%+v, want a restart after %v", d, want)
		}
		clk.advance(301 * ms)
	}
}

// jitterRange runs failures failures 8ms apart on a fresh strategy for
// every value the random source can give, and returns the delays of the
// last one.
func jitterRange(t *testing.T, initial time.Duration, jitter float64, failures int) []time.Duration {
	var seen []time.Duration
	for pick := int64(0); pick < 40; pick++ {
		b := exponential(t, initial, 7*ms, 2, maxInt, jitter, Unlimited, func(n int64) int64 { return pick % n })
		clk := newClock()
		var d Decision
		for range failures {
			clk.advance(8 * ms)
			if d = b.Failure(clk.t); !d.NewAttempt {
				t.Fatal("a failure after the restart was due is a new attempt")
			}
		}
		if !slices.Contains(seen, d.Delay) {
			seen = append(seen, d.Delay)
		}
	}
	slices.Sort(seen)
	return seen
}

func TestExponentialJitter(t *testing.T) {
	for _, c := range []struct {
		initial  time.Duration
		jitter   float64
		failures int
		want     []time.Duration
	}{
		{2 * ms, 0.25, 2, []time.Duration{3 * ms, 4 * ms, 5 * ms}},
		{2 * ms, 0.25, 3, []time.Duration{6 * ms, 7 * ms}},
		{2 * ms, 0.25, 4, []time.Duration{7 * ms}},
		// testJitterNoHigherThanMax
		{1 * ms, 1, 1, []time.Duration{1 * ms, 2 * ms}},
		{1 * ms, 1, 2, []time.Duration{1 * ms, 2 * ms, 3 * ms, 4 * ms}},
		{1 * ms, 1, 3, []time.Duration{1 * ms, 2 * ms, 3 * ms, 4 * ms, 5 * ms, 6 * ms, 7 * ms}},
	} {
		if got := jitterRange(t, c.initial, c.jitter, c.failures); !slices.Equal(got, c.want) {
			t.Errorf("initial %v jitter %g after %d failures: delays %v, want %v", c.initial, c.jitter, c.failures, got, c.want)
		}
	}
}

func TestExponentialMultipleSettings(t *testing.T) {
	clk := newClock()
	b := exponential(t, 1*ms, 9*ms, 2, 80*ms, 0.25, Unlimited, nil)
	for i, step := range []struct {
		advance time.Duration
		want    time.Duration
	}{
		{0, 1 * ms},                 // initial data
		{81 * ms, 1 * ms},           // initial after the threshold
		{4 * ms, 2 * ms},            // increases until the threshold is reached
		{(80 + 9 + 1) * ms, 1 * ms}, // reset after the threshold
		{10 * ms, 2 * ms},           // still increases
	} {
		clk.advance(step.advance)
		if d := b.Failure(clk.t); !d.Restart || !d.NewAttempt || d.Delay != step.want {
			t.Fatalf("step %d: %+v, want a new attempt after %v", i, d, step.want)
		}
	}
}

// merged checks Flink's checkMultipleExceptionsAreMerged: within the
// backoff, only the first of many failures is a new attempt, and the delay
// counts down to the scheduled restart.
func merged(t *testing.T, clk *clock, b *Backoff, backoff time.Duration) {
	t.Helper()
	newAttempt := true
	for adv := time.Duration(0); adv < backoff; adv += ms {
		for range 10 {
			d := b.Failure(clk.t)
			if d.NewAttempt != newAttempt || !d.Restart || d.Delay != backoff-adv {
				t.Fatalf("at +%v: %+v, want new attempt %v, a restart after %v", adv, d, newAttempt, backoff-adv)
			}
			newAttempt = false
		}
		clk.advance(ms)
	}
}

func TestExponentialMergesFailuresIntoOneAttempt(t *testing.T) {
	clk := newClock()
	b := exponential(t, 2*ms, 6*ms, 2, 80*ms, 0, 3, nil)
	merged(t, clk, b, 2*ms)
	clk.advance(ms)
	merged(t, clk, b, 4*ms)
	clk.advance(ms)
	merged(t, clk, b, 6*ms)
	clk.advance(ms)
	if d := b.Failure(clk.t); !d.NewAttempt || d.Restart {
		t.Fatalf("the fourth attempt of 3: %+v, want no restart", d)
	}
}

func TestExponentialMergingWorksWithResetting(t *testing.T) {
	clk := newClock()
	b := exponential(t, 2*ms, 6*ms, 2, 80*ms, 0, 3, nil)
	for range 10 {
		merged(t, clk, b, 2*ms)
		clk.advance(ms)
		merged(t, clk, b, 4*ms)
		clk.advance(ms)
		merged(t, clk, b, 6*ms)
		clk.advance(80 * ms)
	}
}

func failureRate(t *testing.T, maxFailures int, interval, delay time.Duration) *Backoff {
	t.Helper()
	c := Defaults(false)
	c.Strategy, c.MaxFailuresPerInterval, c.FailureRateInterval, c.Delay = FailureRate, maxFailures, interval, delay
	b, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFailureRateManyFailuresWithinRate(t *testing.T) {
	clk := newClock()
	b := failureRate(t, 1, 10*ms, 0)
	for i := 0; i < 3; i++ {
		if d := b.Failure(clk.t); !d.Restart {
			t.Fatalf("failure %d, one per interval: %+v, want a restart", i+1, d)
		}
		clk.advance(11 * ms)
	}
}

func TestFailureRateExceedingRate(t *testing.T) {
	now := newClock().t
	b := failureRate(t, 3, 10*time.Second, 0)
	for i := 0; i < 3; i++ {
		if d := b.Failure(now); !d.Restart {
			t.Fatalf("failure %d of 3: %+v, want a restart", i+1, d)
		}
	}
	if d := b.Failure(now); d.Restart {
		t.Fatalf("failure 4 of 3 within the interval: %+v, want none", d)
	}
}

// TestFailureRateBoundary: the oldest failure kept must lie strictly more
// than the interval before now (canRestart's `>`).
func TestFailureRateBoundary(t *testing.T) {
	clk := newClock()
	b := failureRate(t, 1, 10*ms, 10*time.Second)
	if d := b.Failure(clk.t); !d.Restart || d.Delay != 10*time.Second {
		t.Fatalf("%+v, want a restart after 10s", d)
	}
	clk.advance(10 * ms)
	if d := b.Failure(clk.t); d.Restart {
		t.Fatalf("2 failures exactly 10ms apart: %+v, want none", d)
	}
	b = failureRate(t, 1, 10*ms, 0)
	clk = newClock()
	b.Failure(clk.t)
	clk.advance(11 * ms)
	if d := b.Failure(clk.t); !d.Restart {
		t.Fatalf("2 failures 11ms apart: %+v, want a restart", d)
	}
}

func TestFixedDelay(t *testing.T) {
	c := Defaults(false)
	c.Strategy, c.Attempts, c.Delay = FixedDelay, 3, 10*time.Second
	b, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := newClock().t
	for i := 0; i < 3; i++ {
		if d := b.Failure(now); !d.Restart || d.Delay != 10*time.Second {
			t.Fatalf("failure %d of 3 attempts: %+v", i+1, d)
		}
	}
	if d := b.Failure(now); d.Restart {
		t.Fatalf("failure 4 of 3 attempts: %+v, want no restart", d)
	}
}

func TestNone(t *testing.T) {
	b, err := New(Defaults(false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := b.Failure(newClock().t); d.Restart {
		t.Fatalf("none restarted: %+v", d)
	}
}

// TestDefaults are Flink's RestartStrategyOptions (1.19+).
func TestDefaults(t *testing.T) {
	if Defaults(false).Strategy != None || Defaults(true).Strategy != ExponentialDelay {
		t.Fatal("the default is none without checkpointing, exponential-delay with it")
	}
	c := Defaults(true)
	if c.Attempts != 1 || c.Delay != time.Second || c.InitialBackoff != time.Second || c.MaxBackoff != time.Minute ||
		c.BackoffMultiplier != 1.5 || c.ResetBackoffThreshold != time.Hour || c.JitterFactor != 0.1 ||
		c.AttemptsBeforeResetBackoff != math.MaxInt32 || c.MaxFailuresPerInterval != 1 || c.FailureRateInterval != time.Minute {
		t.Fatalf("defaults %+v", c)
	}
	for _, s := range Strategies {
		c := Defaults(true)
		c.Strategy = s
		if err := c.Validate(); err != nil {
			t.Errorf("%s with the defaults: %v", s, err)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Strategy = "sometimes" }, `unknown strategy "sometimes"`},
		{func(c *Config) { c.Strategy, c.Attempts = FixedDelay, -1 }, "attempts -1 is negative"},
		{func(c *Config) { c.InitialBackoff = 2 * time.Minute }, "initial-backoff 2m0s is above max-backoff 1m0s"},
		{func(c *Config) { c.BackoffMultiplier = 1 }, "backoff-multiplier 1 must be greater than 1"},
		{func(c *Config) { c.JitterFactor = 1.5 }, "jitter-factor 1.5 must be between 0 and 1"},
		{func(c *Config) { c.AttemptsBeforeResetBackoff = 0 }, "attempts-before-reset-backoff 0 must be at least 1"},
		{func(c *Config) { c.Strategy, c.MaxFailuresPerInterval = FailureRate, 0 }, "max-failures-per-interval 0 must be at least 1"},
	} {
		cfg := Defaults(true)
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", cfg, err, c.want)
		}
	}
}
