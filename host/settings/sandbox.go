package settings

import (
	"fmt"
	"time"

	"github.com/spf13/viper"
)

// Sandbox holds the settings of the plugin sandbox: the restart policy of
// instances poisoned by a bad record, the memory budget of a job and the
// folders data files may live in. Its keys are host settings like any
// other (restart-attempts, --restart-attempts, SLUICE_RESTART_ATTEMPTS).
type Sandbox struct {
	// RestartAttempts is how many times an operator subtask's plugin
	// instance may be replaced within restart-window after a record
	// poisoned it (on-error skip or dead-letter); one more fails the job.
	RestartAttempts int `mapstructure:"restart-attempts"`
	// RestartDelay is the fixed delay before each such replacement.
	RestartDelay time.Duration `mapstructure:"restart-delay"`
	// RestartWindow is the sliding window restart-attempts counts in.
	RestartWindow time.Duration `mapstructure:"restart-window"`
	// JobMemory is the plugin linear memory a job may reserve, in MiB:
	// its plugin instances × memory-pages. A job that needs more is
	// refused before it starts. 0: no budget.
	JobMemory int64 `mapstructure:"job-memory"`
	// DataRoots are the folders file sources and sinks may read and write,
	// besides the pipeline file's folder; empty: the working directory.
	DataRoots []string `mapstructure:"data-roots"`
	// FuelRate caps the fuel a plugin host's guests may spend per second,
	// over all its instances (plugin.Config.FuelRate): a runaway, or a
	// tenant of `host serve` (each has its own plugin host), then waits
	// between slices of its calls. A spinning guest burns 2–7 units per
	// nanosecond, so 1e9 holds one to well under a core. 0: no cap.
	FuelRate int64 `mapstructure:"fuel-rate"`
	// CallFuel, when positive, is each plugin call's CPU budget in fuel
	// units (plugin.Config.CallFuel): deterministic, the same call on the
	// same input stops at the same instruction on any machine and under
	// any load. 0: call-timeout, on the clock, decides.
	CallFuel int64 `mapstructure:"call-fuel"`
	// StateMemory is the keyed state a plugin operator's subtask may hold,
	// in MiB (keys and values, as the host keeps them): a plugin that
	// stores more fails its call, so a tenant's plugin cannot grow state
	// until the kernel kills the host. 0: no limit.
	StateMemory int64 `mapstructure:"state-memory"`
	// StateBackend is where keyed operators keep their state when the
	// pipeline's state: names no backend: heap (memory, held to
	// state-memory) or pebble (on disk, in StateDir).
	StateBackend string `mapstructure:"state-backend"`
	// StateDir is the folder of the Pebble databases, one per keyed
	// subtask, under <state-dir>/<job>/ ("": the system's temporary
	// folder).
	StateDir string `mapstructure:"state-dir"`
}

// SandboxKeys lists the sandbox settings' keys.
var SandboxKeys = []string{"restart-attempts", "restart-delay", "restart-window", "job-memory", "data-roots", "fuel-rate", "call-fuel", "state-memory", "state-backend", "state-dir"}

func init() { Keys = append(Keys, SandboxKeys...) }

// DefaultSandbox returns the sandbox settings used when nothing else is
// said.
func DefaultSandbox() Sandbox {
	return Sandbox{
		RestartAttempts: 3,
		RestartDelay:    100 * time.Millisecond,
		RestartWindow:   10 * time.Second,
		JobMemory:       2048, // 128 instances of the default 16 MiB
		StateMemory:     1024,
		StateBackend:    "heap",
	}
}

func (s Sandbox) validate() []error {
	var errs []error
	check := func(ok bool, key, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("setting %s: "+format, append([]any{key}, args...)...))
		}
	}
	check(s.RestartAttempts >= 0, "restart-attempts", "must not be negative, got %d", s.RestartAttempts)
	check(s.RestartDelay >= 0, "restart-delay", "must not be negative, got %s", s.RestartDelay)
	check(s.RestartWindow > 0, "restart-window", "must be positive, got %s", s.RestartWindow)
	check(s.JobMemory >= 0, "job-memory", "must not be negative (MiB; 0: no budget), got %d", s.JobMemory)
	check(s.FuelRate >= 0, "fuel-rate", "must not be negative (fuel units per second; 0: no cap), got %d", s.FuelRate)
	check(s.StateMemory >= 0 && s.StateMemory <= 1<<40, "state-memory", "must be 0 to %d (MiB; 0: no limit), got %d", int64(1<<40), s.StateMemory)
	check(s.StateBackend == "heap" || s.StateBackend == "pebble", "state-backend", "must be heap or pebble, got %q", s.StateBackend)
	check(s.CallFuel >= 0, "call-fuel", "must not be negative (fuel units a call; 0: call-timeout decides), got %d", s.CallFuel)
	return errs
}

// StateMemoryBytes is StateMemory in bytes; 0: no limit.
func (s Sandbox) StateMemoryBytes() int64 { return s.StateMemory << 20 }

// JobMemoryBytes is JobMemory in bytes; 0: no budget.
func (s Sandbox) JobMemoryBytes() uint64 { return uint64(s.JobMemory) << 20 }

func setSandboxDefaults(v *viper.Viper, s Sandbox) {
	v.SetDefault("restart-attempts", s.RestartAttempts)
	v.SetDefault("restart-delay", s.RestartDelay)
	v.SetDefault("restart-window", s.RestartWindow)
	v.SetDefault("job-memory", s.JobMemory)
	v.SetDefault("data-roots", s.DataRoots)
	v.SetDefault("fuel-rate", s.FuelRate)
	v.SetDefault("call-fuel", s.CallFuel)
	v.SetDefault("state-memory", s.StateMemory)
	v.SetDefault("state-backend", s.StateBackend)
	v.SetDefault("state-dir", s.StateDir)
}
