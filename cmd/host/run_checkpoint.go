package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/jobmaster"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// checkpointFlags are host run's flags for checkpoints and savepoints.
type checkpointFlags struct {
	from             string
	allowNonRestored bool
	savepointDir     string
}

func addCheckpointFlags(cmd *cobra.Command, f *checkpointFlags) {
	cmd.Flags().StringVar(&f.from, "from", "", "start from a checkpoint or savepoint folder, or \"latest\": the newest completed checkpoint in the job's storage")
	cmd.Flags().BoolVar(&f.allowNonRestored, "allow-non-restored-state", false, "with --from: drop the state of operators the pipeline no longer has instead of refusing it")
	cmd.Flags().StringVar(&f.savepointDir, "savepoint-dir", "", "on SIGTERM, stop with a savepoint into this folder (stop-with-savepoint) instead of cancelling")
}

// check refuses flags that need another.
func (f checkpointFlags) check() error {
	if f.allowNonRestored && f.from == "" {
		return errors.New("--allow-non-restored-state needs --from")
	}
	return nil
}

// wanted says whether the run goes through the job master.
func (f checkpointFlags) wanted(ft faultTolerance) bool {
	return ft.On() || f.from != "" || f.savepointDir != ""
}

// checkpointedRun is what runCheckpointed needs of runPipeline.
type checkpointedRun struct {
	file   string
	p      *pipeline.Pipeline
	g      *plan.JobGraph
	deps   runtime.Deps
	conns  *connector.Builtin
	ft     faultTolerance
	flags  checkpointFlags
	from   *checkpoint.Reader
	log    *slog.Logger
	stderr io.Writer
	// stopAnnounce stops runPipeline's notice of a cancel: from here the
	// job master's run says what a signal does.
	stopAnnounce func()
}

// prepareCheckpointed checks, before anything is loaded, what a
// checkpointed run needs: a job name that can be a folder, and the --from
// checkpoint, whole and with no state the pipeline cannot take.
func prepareCheckpointed(file string, p *pipeline.Pipeline, ft faultTolerance, flags checkpointFlags, warn io.Writer) (*checkpoint.Reader, error) {
	if p.Name != filepath.Base(p.Name) || p.Name == "." || p.Name == ".." {
		return nil, fmt.Errorf("checkpointing: the job's name %q names its folder under the storage: use no slashes", p.Name)
	}
	if ft.On() && ft.Checkpoint.Storage == "" {
		return nil, errors.New("checkpointing: storage is not set: set checkpointing: storage: in the pipeline, or the checkpoint-storage setting")
	}
	r, err := openFrom(flags.from, ft, p.Name, warn)
	if err != nil {
		return nil, err
	}
	if r != nil {
		if err := checkRestore(r, p, flags.allowNonRestored, warn); err != nil {
			return nil, fmt.Errorf("--from %s: %w", flags.from, err)
		}
	}
	return r, nil
}

// runCheckpointed runs the job through the job master: checkpoints,
// restarts, and a stop-with-savepoint on SIGTERM when --savepoint-dir is
// set (any other signal, or SIGTERM without it, cancels as before).
func runCheckpointed(ctx context.Context, r checkpointedRun) error {
	r.conns.Checkpointed = true
	start := func(ctx context.Context, acks jobmaster.Acks, restore *checkpoint.Reader) (jobmaster.Execution, error) {
		return startExecution(ctx, r.g, r.deps, acks, restore, r.ft.Checkpoint)
	}
	m, err := jobmaster.New(jobmaster.Config{Job: r.p.Name, Checkpoint: r.ft.Checkpoint, Restart: r.ft.Restart, From: r.from, Log: r.log}, start)
	if err != nil {
		fmt.Fprintln(r.stderr, "error:", err)
		return exitCode(1)
	}
	// the job runs on a context of its own: a SIGTERM with --savepoint-dir
	// stops it with a savepoint rather than cancelling it
	jobCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	r.stopAnnounce()
	if ctx.Err() != nil { // a signal came while loading: cancel as before
		cancel()
	}
	go func() {
		select {
		case <-ctx.Done():
		case <-jobCtx.Done():
			return
		}
		sig := signalled(ctx)
		if sig != syscall.SIGTERM || r.flags.savepointDir == "" {
			if sig != nil {
				fmt.Fprintf(r.stderr, "cancelling job %q (%s)\n", r.p.Name, againHint(sig))
			}
			cancel()
			return
		}
		fmt.Fprintf(r.stderr, "stopping job %q with a savepoint into %s (%s)\n", r.p.Name, r.flags.savepointDir, againHint(syscall.SIGTERM))
		path, err := m.TriggerSavepoint(jobCtx, r.flags.savepointDir, true)
		if err != nil {
			fmt.Fprintf(r.stderr, "stop-with-savepoint failed: %v; cancelling\n", err)
			cancel()
			return
		}
		fmt.Fprintf(r.stderr, "savepoint %s complete\n", path)
	}()
	res, err := m.Run(jobCtx)
	if res != nil && res.Last != nil {
		_ = res.Last.WriteSummary(r.stderr)
	}
	if res != nil {
		_ = writeCheckpointStats(r.stderr, res.Stats, res.Restarts)
	}
	switch {
	case err == nil && res.Savepoint != "":
		fmt.Fprintf(r.stderr, "stopped with savepoint %s (resume with --from %s)\n", res.Savepoint, res.Savepoint)
		return nil
	case err == nil:
		return nil
	case ctx.Err() != nil:
		fmt.Fprintln(r.stderr, "cancelled:", err)
		return cancelExit(ctx)
	}
	fmt.Fprintln(r.stderr, "error:", located(r.file, r.p, err))
	return exitCode(1)
}
