package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/restartstrategy"
	"github.com/sluicehq/sluice/host/settings"
)

// faultTolerance is how a job checkpoints and restarts: the pipeline's
// checkpointing: and restart-strategy: over the host's settings.
type faultTolerance struct {
	Checkpoint checkpoint.Config
	Restart    restartstrategy.Config
}

// jobFaultTolerance resolves the pipeline in file's checkpointing and
// restart strategy. A storage the pipeline writes is relative to its
// folder; one from the host settings is taken as written.
func jobFaultTolerance(file string, p *pipeline.Pipeline, hs settings.Settings) faultTolerance {
	c := p.Checkpointing.Apply(hs.CheckpointConfig())
	if p.Checkpointing != nil && c.Storage != "" && !filepath.IsAbs(c.Storage) {
		if _, written := p.Checkpointing.KeyPos["storage"]; written {
			c.Storage = filepath.Join(filepath.Dir(file), c.Storage)
		}
	}
	return faultTolerance{Checkpoint: c, Restart: pipeline.RestartConfig(p.RestartStrategy, hs.RestartStrategy, c.Interval > 0)}
}

// On says whether periodic checkpoints are taken.
func (f faultTolerance) On() bool { return f.Checkpoint.Interval > 0 }

// writeFaultTolerance prints host plan's fault-tolerance section: the
// checkpointing settings, the restart strategy and, when the job
// checkpoints, what it delivers end to end, each source's replay and each
// sink's guarantee.
func writeFaultTolerance(w io.Writer, p *pipeline.Pipeline, f faultTolerance) error {
	var b strings.Builder
	b.WriteString("\nfault tolerance:\n")
	c := f.Checkpoint
	if !f.On() {
		b.WriteString("  checkpointing: off (checkpointing: interval in the pipeline, or the checkpoint-interval setting, turns it on)\n")
	} else {
		storage := c.Storage
		if storage == "" {
			storage = "not set (set checkpointing: storage, or the checkpoint-storage setting)"
		}
		mode := c.Mode.String()
		if c.Unaligned {
			mode += " (unaligned: barriers overtake in-flight data, persisted with each checkpoint; savepoints stay aligned)"
		}
		fmt.Fprintf(&b, "  checkpointing: every %v, %s, timeout %v, min-pause %v, max-concurrent %d, tolerable-failures %d, retain %d, storage %s\n",
			c.Interval, mode, c.Timeout, c.MinPause, c.MaxConcurrent, c.TolerableFailures, c.Retain, storage)
	}
	fmt.Fprintf(&b, "  restart strategy: %s\n", f.Restart)
	if f.On() {
		g, reasons := connector.JobGuarantee(p, c.Mode == checkpoint.ExactlyOnce)
		if len(reasons) > 0 {
			g += " (" + strings.Join(reasons, "; ") + ")"
		}
		fmt.Fprintf(&b, "  guarantee: %s\n", g)
		for _, op := range p.Operators {
			switch {
			case op.Source != nil:
				r := connector.SourceReplay(op.Source.Type)
				what := "replays"
				if !r.Replayable {
					what = "does not replay"
				}
				fmt.Fprintf(&b, "  source %s (%s): %s: %s\n", op.ID, op.Source.Type, what, r.Why)
			case op.Sink != nil:
				exact, why := connector.SinkGuarantee(op.Sink.Type)
				what := "exactly-once"
				if !exact || c.Mode != checkpoint.ExactlyOnce {
					what = "at-least-once"
				}
				fmt.Fprintf(&b, "  sink %s (%s): %s: %s\n", op.ID, op.Sink.Type, what, why)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// openFrom opens what --from names: "latest", the newest whole checkpoint
// in the job's storage (newer broken ones are passed over, each said on
// warn), or a checkpoint or savepoint folder (or its _metadata). Every
// state file is read and checked, so a broken checkpoint is refused here
// with the file it is in named, not when a subtask restores it.
func openFrom(from string, f faultTolerance, job string, warn io.Writer) (*checkpoint.Reader, error) {
	if from == "" {
		return nil, nil
	}
	if from == "latest" {
		if f.Checkpoint.Storage == "" {
			return nil, errors.New("--from latest: the job has no checkpoint storage: set checkpointing: storage in the pipeline, or the checkpoint-storage setting")
		}
		dir := checkpoint.JobDir(f.Checkpoint.Storage, job)
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--from latest: no completed checkpoint: %s does not exist", dir)
		}
		r, skipped, err := checkpoint.Latest(dir)
		for _, s := range skipped {
			fmt.Fprintf(warn, "warning: --from latest: skipping %v\n", s.Err)
		}
		if err != nil {
			return nil, fmt.Errorf("--from latest: %w", err)
		}
		return r, nil
	}
	r, err := checkpoint.Open(from)
	if err == nil {
		err = r.Verify()
	}
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", from, err)
	}
	return r, nil
}

// checkRestore refuses a checkpoint with state of operators the pipeline
// no longer has, unless allow (--allow-non-restored-state), when each is
// said on warn.
func checkRestore(r *checkpoint.Reader, p *pipeline.Pipeline, allow bool, warn io.Writer) error {
	ids := make([]string, len(p.Operators))
	for i, op := range p.Operators {
		ids[i] = op.ID
	}
	dropped, err := r.CheckOperators(checkpoint.WithChannelState(ids), allow)
	if err != nil {
		return err
	}
	for _, d := range dropped {
		fmt.Fprintf(warn, "warning: --allow-non-restored-state: dropping the state of operator %s, which the pipeline no longer has\n", d)
	}
	return nil
}

// writeCheckpointStats prints the run summary's checkpoint line, under
// Flink's metric names.
func writeCheckpointStats(w io.Writer, s checkpoint.Stats, restarts int) error {
	_, err := fmt.Fprintf(w, "checkpoints: numberOfCompletedCheckpoints %d, numberOfFailedCheckpoints %d, lastCheckpointDuration %v, lastCheckpointSize %d bytes, restarts %d\n",
		s.NumberOfCompletedCheckpoints, s.NumberOfFailedCheckpoints, s.LastCheckpointDuration.Round(time.Millisecond), s.LastCheckpointSize, restarts)
	return err
}
