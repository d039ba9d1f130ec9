package settings

import (
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// The two functions below are the one place the host settings become the
// plugin host's configuration and the engine's options: `host run`,
// `host plugin ...` and `host serve` all call them (the server then
// narrows some fields per tenant), so a setting reaches every entry point
// or none. options_test.go fails when a setting or a field is added to
// one side and not mapped.

// PluginConfig is the plugin.Config the settings ask for: the per-instance
// and per-call limits, the compile cache, the restart policy and the fuel
// budgets; the rest of plugin.DefaultConfig (guest clocks and randomness,
// output checks, interruption, stderr tail) is not a host setting.
func (s Settings) PluginConfig() plugin.Config {
	c := plugin.DefaultConfig()
	c.MemoryLimitPages = s.MemoryPages
	c.CallTimeout = s.CallTimeout
	c.CallFuel = s.CallFuel
	c.FuelRate = s.FuelRate
	c.MaxOutputBytes = s.MaxOutputBytes
	c.MaxModuleBytes = s.MaxModuleBytes
	c.CacheDir = s.CacheDir
	c.RestartAttempts = s.RestartAttempts
	c.RestartDelay = s.RestartDelay
	c.RestartWindow = s.RestartWindow
	return c
}

// RuntimeOptions is the runtime.Options the settings ask for: batching
// and queues between tasks, and the keyed state a plugin operator's
// subtask may hold (also what `host plugin run --key` holds its state to).
func (s Settings) RuntimeOptions() runtime.Options {
	return runtime.Options{
		BatchSize:     s.BatchSize,
		BatchBytes:    s.BatchBytes,
		Linger:        s.Linger,
		QueueCapacity: s.QueueCapacity,
		StateBytes:    s.StateMemoryBytes(),
		Seed:          s.Seed,
		// the heap's incremental checkpoints, on unless the host says no
		FullCheckpoints: !s.CheckpointIncremental,
	}
}
