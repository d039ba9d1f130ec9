package main

import (
	"context"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/jobmaster"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// startExecution starts one execution of a checkpointed job: the engine
// tells acks about each checkpoint, and restores from restore unless it
// is nil. This is the one place the job master meets the engine's
// checkpoint API (runtime.Deps.Checkpoints and .Restore,
// Options.CheckpointMode, *runtime.Execution as a jobmaster.Execution).
func startExecution(ctx context.Context, g *plan.JobGraph, deps runtime.Deps, acks jobmaster.Acks, restore *checkpoint.Reader, cfg checkpoint.Config) (jobmaster.Execution, error) {
	deps.Checkpoints = acks
	if restore != nil {
		deps.Restore = restore
	}
	deps.Options.CheckpointMode = cfg.Mode
	// with periodic checkpoints a sink commits its last records in the
	// next one, not at its end of input (Flink's final checkpoint)
	deps.Options.FinalCheckpoint = cfg.Interval > 0
	return runtime.Start(ctx, g, deps)
}
