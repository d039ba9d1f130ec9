package pipeline

import (
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/restartstrategy"
	"go.yaml.in/yaml/v3"
)

// Checkpointing is the pipeline's checkpointing: mapping (Flink's
// execution.checkpointing.*). Only the keys written (KeyPos) change the
// host's defaults: see Apply.
type Checkpointing struct {
	Interval          time.Duration
	Mode              checkpoint.Mode
	Timeout           time.Duration
	MinPause          time.Duration
	MaxConcurrent     int
	TolerableFailures int
	Retain            int
	Storage           string // as written; relative to the pipeline file's folder
	Unaligned         bool
	Pos               Pos
	// KeyPos holds where each key was written; a key not in it was not.
	KeyPos map[string]Pos
}

// CheckpointingKeys are the keys of checkpointing:.
var CheckpointingKeys = []string{"interval", "mode", "timeout", "min-pause", "max-concurrent",
	"tolerable-failures", "unaligned", "retain", "storage"}

// Apply returns base (the host's defaults) with the keys the pipeline
// wrote. Storage is returned as written.
func (c *Checkpointing) Apply(base checkpoint.Config) checkpoint.Config {
	if c == nil {
		return base
	}
	set := func(k string) bool { _, ok := c.KeyPos[k]; return ok }
	if set("interval") {
		base.Interval = c.Interval
	}
	if set("mode") {
		base.Mode = c.Mode
	}
	if set("timeout") {
		base.Timeout = c.Timeout
	}
	if set("min-pause") {
		base.MinPause = c.MinPause
	}
	if set("max-concurrent") {
		base.MaxConcurrent = c.MaxConcurrent
	}
	if set("tolerable-failures") {
		base.TolerableFailures = c.TolerableFailures
	}
	if set("retain") {
		base.Retain = c.Retain
	}
	if set("storage") {
		base.Storage = c.Storage
	}
	if set("unaligned") {
		base.Unaligned = c.Unaligned
	}
	return base
}

// RestartStrategy is the pipeline's restart-strategy: (Flink's
// restart-strategy.*): a strategy's name, or a mapping of its type and
// parameters.
type RestartStrategy struct {
	Type string
	// Config holds the parameters written, over Flink's defaults.
	Config restartstrategy.Config
	Pos    Pos
	KeyPos map[string]Pos
}

// restartKeys are the parameters of each strategy, besides type.
var restartKeys = map[string][]string{
	restartstrategy.None:             nil,
	restartstrategy.FixedDelay:       {"attempts", "delay"},
	restartstrategy.ExponentialDelay: {"initial-backoff", "max-backoff", "backoff-multiplier", "reset-backoff-threshold", "jitter-factor", "attempts-before-reset-backoff"},
	restartstrategy.FailureRate:      {"max-failures-per-interval", "failure-rate-interval", "delay"},
}

// RestartConfig is the restart strategy a job runs with: the pipeline's
// when it wrote one, else the host's (hostStrategy, "" for Flink's
// default: exponential-delay when checkpointing is on, none otherwise),
// with Flink's defaults for the parameters not written.
func RestartConfig(r *RestartStrategy, hostStrategy string, checkpointing bool) restartstrategy.Config {
	if r != nil {
		return r.Config
	}
	c := restartstrategy.Defaults(checkpointing)
	if hostStrategy != "" {
		c.Strategy = hostStrategy
	}
	return c
}

func (d *decoder) checkpointing(n *yaml.Node) *Checkpointing {
	ps, ok := d.mapping(n, "checkpointing")
	if !ok {
		return nil
	}
	c := &Checkpointing{Pos: nodePos(deref(n)), KeyPos: map[string]Pos{}}
	for _, kv := range ps {
		k, v := kv.Key.Value, kv.Val
		what := "checkpointing " + k
		ok := true
		switch k {
		case "interval":
			c.Interval, ok = d.duration(v, what, 0)
			if ok && c.Interval > 0 && c.Interval < checkpoint.MinInterval {
				d.errorf(v, "%s %v is below the minimum of %v (0 turns periodic checkpoints off)", what, c.Interval, checkpoint.MinInterval)
				ok = false
			}
		case "mode":
			var m string
			if m, ok = d.oneOf(v, what, "exactly-once", "at-least-once"); ok {
				c.Mode, _ = checkpoint.ParseMode(m)
			}
		case "timeout":
			c.Timeout, ok = d.duration(v, what, checkpoint.MinTimeout)
		case "min-pause":
			c.MinPause, ok = d.duration(v, what, 0)
		case "max-concurrent":
			c.MaxConcurrent, ok = d.integer(v, what, 1, 1<<20)
		case "tolerable-failures":
			c.TolerableFailures, ok = d.integer(v, what, 0, 1<<31-1)
		case "retain":
			c.Retain, ok = d.integer(v, what, 1, 1<<20)
		case "storage":
			c.Storage, ok = d.str(v, what)
		case "unaligned":
			c.Unaligned, ok = d.boolean(v, what)
		default:
			d.unknownKey(kv.Key, "checkpointing", CheckpointingKeys)
			continue
		}
		if ok {
			c.KeyPos[k] = nodePos(kv.Key)
		}
	}
	return c
}

func (d *decoder) restartStrategy(n *yaml.Node) *RestartStrategy {
	r := &RestartStrategy{Pos: nodePos(deref(n)), KeyPos: map[string]Pos{}}
	if deref(n).Kind == yaml.ScalarNode {
		t, ok := d.oneOf(n, "restart-strategy", restartstrategy.Strategies...)
		if !ok {
			return nil
		}
		r.Type, r.Config = t, restartstrategy.Defaults(true)
		r.Config.Strategy = t
		return r
	}
	ps, ok := d.mapping(n, "restart-strategy")
	if !ok {
		return nil
	}
	for _, kv := range ps {
		if kv.Key.Value == "type" {
			r.Type, _ = d.oneOf(kv.Val, "restart-strategy type", restartstrategy.Strategies...)
			r.KeyPos["type"] = nodePos(kv.Key)
		}
	}
	if r.Type == "" {
		if _, written := r.KeyPos["type"]; !written {
			d.errorf(n, "restart-strategy needs a type: %s", strings.Join(restartstrategy.Strategies, ", "))
		}
		return nil
	}
	c := restartstrategy.Defaults(true)
	c.Strategy = r.Type
	before := len(d.errs)
	known := append([]string{"type"}, restartKeys[r.Type]...)
	for _, kv := range ps {
		k, v := kv.Key.Value, kv.Val
		what := "restart-strategy " + r.Type + " " + k
		ok := true
		switch {
		case k == "type":
			continue
		case !slices.Contains(known, k):
			if other := strategyOf(k); other != "" {
				d.errorf(kv.Key, "%s is a parameter of %s, not of %s (known: %s)", k, other, r.Type, strings.Join(known[1:], ", "))
			} else {
				d.unknownKey(kv.Key, "restart-strategy "+r.Type, known)
			}
			continue
		case k == "attempts":
			c.Attempts, ok = d.integer(v, what, 0, 1<<31-1)
		case k == "delay":
			c.Delay, ok = d.duration(v, what, 0)
		case k == "initial-backoff":
			c.InitialBackoff, ok = d.duration(v, what, time.Millisecond)
		case k == "max-backoff":
			c.MaxBackoff, ok = d.duration(v, what, time.Millisecond)
		case k == "backoff-multiplier":
			c.BackoffMultiplier, ok = d.number(v, what, 1, 1e9)
			if ok && c.BackoffMultiplier == 1 {
				d.errorf(v, "%s must be greater than 1", what)
				ok = false
			}
		case k == "reset-backoff-threshold":
			c.ResetBackoffThreshold, ok = d.duration(v, what, time.Millisecond)
		case k == "jitter-factor":
			c.JitterFactor, ok = d.number(v, what, 0, 1)
		case k == "attempts-before-reset-backoff":
			c.AttemptsBeforeResetBackoff, ok = d.integer(v, what, 1, restartstrategy.Unlimited)
		case k == "max-failures-per-interval":
			c.MaxFailuresPerInterval, ok = d.integer(v, what, 1, 1<<31-1)
		case k == "failure-rate-interval":
			c.FailureRateInterval, ok = d.duration(v, what, time.Millisecond)
		}
		if ok {
			r.KeyPos[k] = nodePos(kv.Key)
		}
	}
	if err := c.Validate(); err != nil && len(d.errs) == before {
		d.errorf(n, "%v", err) // a rule across keys: initial-backoff above max-backoff
	}
	r.Config = c
	return r
}

// strategyOf names the strategy that has parameter k, if one has.
func strategyOf(k string) string {
	for _, s := range restartstrategy.Strategies {
		if slices.Contains(restartKeys[s], k) {
			return s
		}
	}
	return ""
}
