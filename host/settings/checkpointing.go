package settings

import (
	"fmt"
	"slices"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/restartstrategy"
	"github.com/spf13/viper"
)

// Checkpointing holds the host's defaults for a pipeline's checkpointing:
// and restart-strategy: keys: a pipeline's own keys win over them, one by
// one. Flink's names, with checkpoint- in front (checkpoint-interval,
// --checkpoint-interval, SLUICE_CHECKPOINT_INTERVAL).
type Checkpointing struct {
	CheckpointInterval          time.Duration `mapstructure:"checkpoint-interval"`
	CheckpointMode              string        `mapstructure:"checkpoint-mode"`
	CheckpointTimeout           time.Duration `mapstructure:"checkpoint-timeout"`
	CheckpointMinPause          time.Duration `mapstructure:"checkpoint-min-pause"`
	CheckpointMaxConcurrent     int           `mapstructure:"checkpoint-max-concurrent"`
	CheckpointTolerableFailures int           `mapstructure:"checkpoint-tolerable-failures"`
	CheckpointRetain            int           `mapstructure:"checkpoint-retain"`
	CheckpointStorage           string        `mapstructure:"checkpoint-storage"`
	CheckpointUnaligned         bool          `mapstructure:"checkpoint-unaligned"`
	// CheckpointIncremental: the heap backend's checkpoints write only the
	// key groups' changes since the last completed one (Flink's
	// execution.checkpointing.incremental); false writes every checkpoint
	// in full. Savepoints are always full.
	CheckpointIncremental bool `mapstructure:"checkpoint-incremental"`
	// RestartStrategy is the strategy of a pipeline that names none; ""
	// is Flink's default: exponential-delay when checkpointing is on,
	// none otherwise. The parameters are Flink's defaults; a pipeline's
	// restart-strategy: mapping sets them.
	RestartStrategy string `mapstructure:"restart-strategy"`
}

// CheckpointingKeys lists the checkpointing settings' keys.
var CheckpointingKeys = []string{"checkpoint-interval", "checkpoint-mode", "checkpoint-timeout", "checkpoint-min-pause",
	"checkpoint-max-concurrent", "checkpoint-tolerable-failures", "checkpoint-retain", "checkpoint-storage", "checkpoint-unaligned", "checkpoint-incremental", "restart-strategy"}

func init() { Keys = append(Keys, CheckpointingKeys...) }

// DefaultCheckpointing is Flink's: checkpoint.Defaults() and no restart
// strategy of the host's own.
func DefaultCheckpointing() Checkpointing {
	d := checkpoint.Defaults()
	return Checkpointing{
		CheckpointInterval:          d.Interval,
		CheckpointMode:              d.Mode.String(),
		CheckpointTimeout:           d.Timeout,
		CheckpointMinPause:          d.MinPause,
		CheckpointMaxConcurrent:     d.MaxConcurrent,
		CheckpointTolerableFailures: d.TolerableFailures,
		CheckpointRetain:            d.Retain,
		CheckpointStorage:           d.Storage,
		CheckpointUnaligned:         d.Unaligned,
		CheckpointIncremental:       true,
	}
}

// CheckpointConfig is the checkpoint.Config the settings give a pipeline
// that writes no checkpointing: key (pipeline.Checkpointing.Apply puts its
// own over it).
func (c Checkpointing) CheckpointConfig() checkpoint.Config {
	mode, _ := checkpoint.ParseMode(c.CheckpointMode) // Validate refused any other
	return checkpoint.Config{
		Interval:          c.CheckpointInterval,
		Mode:              mode,
		Timeout:           c.CheckpointTimeout,
		MinPause:          c.CheckpointMinPause,
		MaxConcurrent:     c.CheckpointMaxConcurrent,
		TolerableFailures: c.CheckpointTolerableFailures,
		Retain:            c.CheckpointRetain,
		Storage:           c.CheckpointStorage,
		Unaligned:         c.CheckpointUnaligned,
	}
}

func (c Checkpointing) validate() []error {
	var errs []error
	check := func(ok bool, key, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("setting %s: "+format, append([]any{key}, args...)...))
		}
	}
	check(c.CheckpointInterval == 0 || c.CheckpointInterval >= checkpoint.MinInterval, "checkpoint-interval",
		"must be 0 (off) or at least %v, got %s", checkpoint.MinInterval, c.CheckpointInterval)
	_, err := checkpoint.ParseMode(c.CheckpointMode)
	check(err == nil, "checkpoint-mode", "must be exactly-once or at-least-once, got %q", c.CheckpointMode)
	check(c.CheckpointTimeout >= checkpoint.MinTimeout, "checkpoint-timeout", "must be at least %v, got %s", checkpoint.MinTimeout, c.CheckpointTimeout)
	check(c.CheckpointMinPause >= 0, "checkpoint-min-pause", "must not be negative, got %s", c.CheckpointMinPause)
	check(c.CheckpointMaxConcurrent >= 1, "checkpoint-max-concurrent", "must be at least 1, got %d", c.CheckpointMaxConcurrent)
	check(c.CheckpointTolerableFailures >= 0, "checkpoint-tolerable-failures", "must not be negative, got %d", c.CheckpointTolerableFailures)
	check(c.CheckpointRetain >= 1, "checkpoint-retain", "must be at least 1, got %d", c.CheckpointRetain)
	check(c.RestartStrategy == "" || slices.Contains(restartstrategy.Strategies, c.RestartStrategy), "restart-strategy",
		"must be none, fixed-delay, exponential-delay or failure-rate (or empty: Flink's default), got %q", c.RestartStrategy)
	return errs
}

func setCheckpointingDefaults(v *viper.Viper, c Checkpointing) {
	v.SetDefault("checkpoint-interval", c.CheckpointInterval)
	v.SetDefault("checkpoint-mode", c.CheckpointMode)
	v.SetDefault("checkpoint-timeout", c.CheckpointTimeout)
	v.SetDefault("checkpoint-min-pause", c.CheckpointMinPause)
	v.SetDefault("checkpoint-max-concurrent", c.CheckpointMaxConcurrent)
	v.SetDefault("checkpoint-tolerable-failures", c.CheckpointTolerableFailures)
	v.SetDefault("checkpoint-retain", c.CheckpointRetain)
	v.SetDefault("checkpoint-storage", c.CheckpointStorage)
	v.SetDefault("checkpoint-unaligned", c.CheckpointUnaligned)
	v.SetDefault("checkpoint-incremental", c.CheckpointIncremental)
	v.SetDefault("restart-strategy", c.RestartStrategy)
}
