package plugin

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/host/restart"
)

// crashed applies the restart policy (package restart) after a record
// poisoned the instance and the operator's on-error absorbed the record:
// the crash is counted in a sliding window of Config.RestartWindow; past
// Config.RestartAttempts crashes the error fails the job (a crash loop
// does not spin), else the runner waits Config.RestartDelay before the
// next call makes a fresh instance. Instances replaced while a failed
// batch is being narrowed down to its record are not counted: the
// isolated record's crash is.
func (r *runner) crashed(pe *PluginError) error {
	cfg := r.m.host.cfg
	p := cfg.restartPolicy()
	if n, over := r.crashes.Record(p, time.Now()); over {
		return &PluginError{
			Plugin: r.m.name, Operator: r.who.operator, Edge: r.who.edge,
			Subtask: r.who.subtask, Parallelism: r.who.parallelism,
			Export: pe.Export, Record: pe.Record, Stderr: pe.Stderr, Crash: pe.Crash,
			Cause: fmt.Errorf("crashed %d times in %s: %w (restart-attempts %d); last crash: %w",
				n, cfg.RestartWindow, ErrRestartLimit, cfg.RestartAttempts, pe.Cause),
		}
	}
	if err := p.Wait(r.ctx); err != nil {
		return &PluginError{
			Plugin: r.m.name, Operator: r.who.operator, Edge: r.who.edge,
			Subtask: r.who.subtask, Parallelism: r.who.parallelism,
			Export: pe.Export, Cause: fmt.Errorf("%w while waiting to restart: %w", ErrCanceled, err),
		}
	}
	return nil
}

// restartPolicy is the restart settings as package restart takes them.
func (c Config) restartPolicy() restart.Policy {
	return restart.Policy{Attempts: c.RestartAttempts, Window: c.RestartWindow, Delay: c.RestartDelay}
}
