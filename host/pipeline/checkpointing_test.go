package pipeline

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/restartstrategy"
)

const ckptOps = `
operators:
  - id: src
    source: {type: generator, preset: sequence, count: 3}
  - id: out
    sink: {type: discard}
`

// TestCheckpointingKeys: the keys written replace the host's defaults, the
// others keep them.
func TestCheckpointingKeys(t *testing.T) {
	p, err := Parse("p.yaml", []byte(`version: 1
name: c
checkpointing:
  interval: 2s
  mode: at-least-once
  min-pause: 500ms
  tolerable-failures: 2
  unaligned: false
  storage: ckpt
`+ckptOps), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := checkpoint.Defaults()
	base.Timeout, base.Retain, base.Storage = time.Minute, 3, "/host/ckpt"
	got := p.Checkpointing.Apply(base)
	want := checkpoint.Config{Interval: 2 * time.Second, Mode: checkpoint.AtLeastOnce, Timeout: time.Minute,
		MinPause: 500 * time.Millisecond, MaxConcurrent: 1, TolerableFailures: 2, Retain: 3, Storage: "ckpt"}
	if got != want {
		t.Fatalf("applied %+v\nwant    %+v", got, want)
	}
	if pos := p.Checkpointing.KeyPos["interval"]; pos.Line != 4 || pos.Col != 3 {
		t.Errorf("interval at %+v, want 4:3", pos)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	var none *Checkpointing
	if none.Apply(base) != base {
		t.Error("no checkpointing: changed the defaults")
	}
}

// TestCheckpointingUnaligned: unaligned: true sets Config.Unaligned.
func TestCheckpointingUnaligned(t *testing.T) {
	p, err := Parse("p.yaml", []byte("version: 1\nname: c\ncheckpointing:\n  interval: 1s\n  unaligned: true\n"+ckptOps), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := p.Checkpointing.Apply(checkpoint.Defaults())
	if !got.Unaligned {
		t.Fatalf("applied %+v: not unaligned", got)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestRestartStrategyForms: a name alone takes Flink's defaults; a mapping
// sets the parameters it writes; none written falls back to the host's
// setting, then to Flink's default for the checkpointing.
func TestRestartStrategyForms(t *testing.T) {
	parse := func(rs string) *RestartStrategy {
		t.Helper()
		p, err := Parse("p.yaml", []byte("version: 1\nname: r\n"+rs+ckptOps), ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.RestartStrategy
	}
	r := parse("restart-strategy: fixed-delay\n")
	if c := RestartConfig(r, "", true); c.Strategy != restartstrategy.FixedDelay || c.Attempts != 1 || c.Delay != time.Second {
		t.Errorf("fixed-delay alone: %+v", c)
	}
	r = parse("restart-strategy:\n  type: exponential-delay\n  initial-backoff: 10ms\n  backoff-multiplier: 3\n  attempts-before-reset-backoff: 4\n")
	c := RestartConfig(r, restartstrategy.None, false)
	if c.Strategy != restartstrategy.ExponentialDelay || c.InitialBackoff != 10*time.Millisecond || c.BackoffMultiplier != 3 ||
		c.AttemptsBeforeResetBackoff != 4 || c.MaxBackoff != time.Minute || c.JitterFactor != 0.1 {
		t.Errorf("exponential-delay: %+v", c)
	}
	r = parse("restart-strategy: {type: failure-rate, max-failures-per-interval: 3, failure-rate-interval: 5m, delay: 2s}\n")
	if c := RestartConfig(r, "", true); c.MaxFailuresPerInterval != 3 || c.FailureRateInterval != 5*time.Minute || c.Delay != 2*time.Second {
		t.Errorf("failure-rate: %+v", c)
	}
	if r := parse(""); r != nil {
		t.Fatalf("not written: %+v", r)
	}
	if c := RestartConfig(nil, "", true); c.Strategy != restartstrategy.ExponentialDelay {
		t.Errorf("checkpointing on, nothing said: %s", c.Strategy)
	}
	if c := RestartConfig(nil, "", false); c.Strategy != restartstrategy.None {
		t.Errorf("checkpointing off, nothing said: %s", c.Strategy)
	}
	if c := RestartConfig(nil, restartstrategy.FixedDelay, true); c.Strategy != restartstrategy.FixedDelay {
		t.Errorf("the host's setting: %s", c.Strategy)
	}
}
