package jobmaster

import (
	"context"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// StartEngine starts one execution of job g on the engine for a job
// master: the engine tells acks about each checkpoint, restores from
// restore unless it is nil, aligns as cfg.Mode says, and, when checkpoints
// are periodic, has a task that commits on checkpoints wait for one
// holding its final state before it closes (Flink's final checkpoint).
// This is the one place the job master meets the engine's checkpoint API;
// `host run` and `host serve` both start their executions here.
func StartEngine(ctx context.Context, g *plan.JobGraph, deps runtime.Deps, acks Acks, restore *checkpoint.Reader, cfg checkpoint.Config) (*runtime.Execution, error) {
	deps.Checkpoints = acks
	if restore != nil {
		deps.Restore = restore
	}
	deps.Options.CheckpointMode = cfg.Mode
	deps.Options.FinalCheckpoint = cfg.Interval > 0
	return runtime.Start(ctx, g, deps)
}
