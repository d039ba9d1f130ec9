package plugin

import (
	"fmt"
	"time"
)

// crashed applies the restart policy after a record poisoned the
// instance and the operator's on-error absorbed the record: the crash is
// counted in a sliding window of Config.RestartWindow; past
// Config.RestartAttempts crashes the error fails the job (a crash loop
// does not spin), else the runner waits Config.RestartDelay before the
// next call makes a fresh instance. Instances replaced while a failed
// batch is being narrowed down to its record are not counted: the
// isolated record's crash is.
func (r *runner) crashed(pe *PluginError) error {
	cfg := r.m.host.cfg
	now := time.Now()
	kept := r.crashes[:0]
	for _, t := range r.crashes {
		if now.Sub(t) < cfg.RestartWindow {
			kept = append(kept, t)
		}
	}
	r.crashes = append(kept, now)
	if n := len(r.crashes); n > cfg.RestartAttempts {
		return &PluginError{
			Plugin: r.m.name, Operator: r.who.operator, Edge: r.who.edge,
			Subtask: r.who.subtask, Parallelism: r.who.parallelism,
			Export: pe.Export, Record: pe.Record, Stderr: pe.Stderr, Crash: pe.Crash,
			Cause: fmt.Errorf("crashed %d times in %s: %w (restart-attempts %d); last crash: %w",
				n, cfg.RestartWindow, ErrRestartLimit, cfg.RestartAttempts, pe.Cause),
		}
	}
	if cfg.RestartDelay <= 0 {
		return nil
	}
	t := time.NewTimer(cfg.RestartDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-r.ctx.Done():
		return &PluginError{
			Plugin: r.m.name, Operator: r.who.operator, Edge: r.who.edge,
			Subtask: r.who.subtask, Parallelism: r.who.parallelism,
			Export: pe.Export, Cause: fmt.Errorf("%w while waiting to restart: %w", ErrCanceled, r.ctx.Err()),
		}
	}
}
