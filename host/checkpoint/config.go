package checkpoint

import (
	"fmt"
	"time"
)

// Config holds the checkpointing settings, named after Flink's
// execution.checkpointing.* options (the pipeline's `checkpointing:` keys in
// brackets). The zero value is not usable: start from Defaults.
type Config struct {
	// Interval between periodic checkpoints [interval]; 0 turns periodic
	// checkpoints off (savepoints still work), as Flink's -1 does.
	Interval time.Duration
	// Mode [mode: exactly-once | at-least-once]. The coordinator does not
	// use it: it tells the tasks whether to align barriers.
	Mode Mode
	// Timeout [timeout]: a checkpoint not fully acknowledged this long
	// after its trigger is expired (declined; the job goes on). Flink's
	// default is 10 minutes.
	Timeout time.Duration
	// MinPause [min-pause]: the least time from the completion of one
	// checkpoint to the trigger of the next periodic one. As in Flink it
	// is counted from the last *completed* checkpoint (an aborted one
	// does not restart it) and does not hold back savepoints.
	MinPause time.Duration
	// MaxConcurrent [max-concurrent]: how many checkpoints may be pending
	// when a periodic one is due (savepoints count, but are never held
	// back by it: Flink's savepoints are forced). Flink's default is 1.
	MaxConcurrent int
	// TolerableFailures [tolerable-failures]: Flink's
	// tolerableCheckpointFailureNumber. The job fails when more than this
	// many checkpoints in a row failed for a counted reason (see
	// FailureReason.Counted); 0, the default, fails it on the first.
	TolerableFailures int
	// Retain [retain]: completed checkpoints kept on disk (Flink's
	// state.checkpoints.num-retained, default 1); savepoints are never
	// deleted. Used by the storage (Retain), not the coordinator.
	Retain int
	// Storage [storage]: the directory checkpoints are written under
	// (<storage>/<job>/chk-<id>/).
	Storage string
	// Unaligned [unaligned]: checkpoint barriers overtake the in-flight
	// data, which is persisted as channel state (Flink's
	// execution.checkpointing.unaligned, FLIP-76). Savepoints stay
	// aligned. Exactly-once only, one checkpoint at a time.
	Unaligned bool
}

// Defaults are Flink's defaults: periodic checkpoints off, exactly-once, a
// 10-minute timeout, no min pause, one checkpoint at a time, no tolerated
// failure, one completed checkpoint retained.
func Defaults() Config {
	return Config{
		Mode:          ExactlyOnce,
		Timeout:       10 * time.Minute,
		MaxConcurrent: 1,
		Retain:        1,
	}
}

// MinInterval and MinTimeout are Flink's lower bounds
// (CheckpointCoordinatorConfiguration: "must be larger than or equal to
// 10 ms").
const (
	MinInterval = 10 * time.Millisecond
	MinTimeout  = 10 * time.Millisecond
)

// Validate reports the first setting that is out of range, by its pipeline
// key.
func (c Config) Validate() error {
	switch {
	case c.Interval < 0:
		return fmt.Errorf("checkpointing: interval %v is negative (0 turns periodic checkpoints off)", c.Interval)
	case c.Interval > 0 && c.Interval < MinInterval:
		return fmt.Errorf("checkpointing: interval %v is below the minimum of %v", c.Interval, MinInterval)
	case c.Mode != ExactlyOnce && c.Mode != AtLeastOnce:
		return fmt.Errorf("checkpointing: unknown mode %d", c.Mode)
	case c.Timeout < MinTimeout:
		return fmt.Errorf("checkpointing: timeout %v is below the minimum of %v", c.Timeout, MinTimeout)
	case c.MinPause < 0:
		return fmt.Errorf("checkpointing: min-pause %v is negative", c.MinPause)
	case c.MaxConcurrent < 1:
		return fmt.Errorf("checkpointing: max-concurrent %d must be at least 1", c.MaxConcurrent)
	case c.TolerableFailures < 0:
		return fmt.Errorf("checkpointing: tolerable-failures %d is negative", c.TolerableFailures)
	case c.Retain < 1:
		return fmt.Errorf("checkpointing: retain %d must be at least 1", c.Retain)
	case c.Unaligned && c.Mode != ExactlyOnce:
		return fmt.Errorf("checkpointing: unaligned checkpoints need mode exactly-once (Flink uses them only then): at-least-once does not align barriers anyway")
	case c.Unaligned && c.MaxConcurrent > 1:
		return fmt.Errorf("checkpointing: unaligned checkpoints take one checkpoint at a time (Flink does not support concurrent unaligned checkpoints): max-concurrent %d must be 1", c.MaxConcurrent)
	}
	return nil
}

// ParseMode reads a mode as the pipeline spells it.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "exactly-once", "exactly_once", "EXACTLY_ONCE":
		return ExactlyOnce, nil
	case "at-least-once", "at_least_once", "AT_LEAST_ONCE":
		return AtLeastOnce, nil
	}
	return 0, fmt.Errorf("checkpointing: unknown mode %q (want exactly-once or at-least-once)", s)
}
