package restart

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCrashesSlideInTheWindow: with two attempts in a minute, the third
// crash within a minute is over the limit; crashes a minute old are
// forgotten, so a crash now and then never is.
func TestCrashesSlideInTheWindow(t *testing.T) {
	p := Policy{Attempts: 2, Window: time.Minute}
	var c Crashes
	t0 := time.Unix(1000, 0)
	for i, step := range []struct {
		at   time.Duration
		n    int
		over bool
	}{
		{0, 1, false},
		{10 * time.Second, 2, false},
		{20 * time.Second, 3, true},     // three within a minute
		{70 * time.Second, 2, false},    // 0 s and 10 s have slid out
		{140 * time.Second, 1, false},   // all but this one have
		{200 * time.Second, 1, false},   // 140 s is exactly a minute old: out
		{200*time.Second + 1, 2, false}, // the same instant, nearly
		{200*time.Second + 2, 3, true},  // and once more
		{10 * time.Minute, 1, false},    // a long quiet spell forgets all
		{10*time.Minute + time.Second, 2, false},
	} {
		n, over := c.Record(p, t0.Add(step.at))
		if n != step.n || over != step.over {
			t.Errorf("crash %d at %v: %d in the window, over %v; want %d, %v", i, step.at, n, over, step.n, step.over)
		}
	}
}

// TestNoAttempts: with no attempts allowed the first crash fails the job.
func TestNoAttempts(t *testing.T) {
	var c Crashes
	if n, over := c.Record(Policy{Window: time.Hour}, time.Unix(0, 0)); n != 1 || !over {
		t.Errorf("%d, %v: want the first crash over the limit", n, over)
	}
}

// TestWaitEndsWithItsContext: a restart whose job is cancelled does not
// wait out its delay (an hour here); one without a delay does not wait.
func TestWaitEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (Policy{Delay: time.Hour}).Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a cancelled context: %v, want context.Canceled", err)
	}
	if err := (Policy{}).Wait(ctx); err != nil {
		t.Errorf("Wait without a delay: %v, want nil", err)
	}
	if err := (Policy{Delay: time.Nanosecond}).Wait(context.Background()); err != nil {
		t.Errorf("Wait of 1 ns: %v", err)
	}
}
