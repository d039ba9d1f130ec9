package jobmaster

import (
	"context"
	"errors"
	"fmt"

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
	deps.Options.UnalignedCheckpoints = cfg.Unaligned && cfg.Mode == checkpoint.ExactlyOnce
	deps.Options.FinalCheckpoint = cfg.Interval > 0
	return runtime.Start(ctx, g, deps)
}

// CheckRestore refuses, before anything is loaded, a checkpoint that job
// g cannot start from: an operator whose max parallelism differs from the
// one its state was written with (Flink's StateAssignmentOperation
// refuses it: key groups cannot be remapped); a parallelism above the max
// parallelism is the planner's refusal already. The error names the operator,
// both values and the checkpoint. Without it the refusal comes from each
// subtask's restore, once per restart.
func CheckRestore(r *checkpoint.Reader, g *plan.JobGraph) error {
	for _, op := range g.Operators {
		om, ok := r.Operator(op.ID)
		if !ok {
			continue
		}
		if op.MaxParallelism != om.MaxParallelism {
			return fmt.Errorf("operator %q: %w: the checkpoint %s was written with max parallelism %d, the job has %d; set max-parallelism: %d on the operator (or the job) to restore it",
				op.ID, checkpoint.ErrMaxParallelism, r.Path, om.MaxParallelism, op.MaxParallelism, om.MaxParallelism)
		}
	}
	for _, op := range g.Operators {
		if _, err := r.ChannelState(op.ID, 0, op.Parallelism, op.MaxParallelism); errors.Is(err, checkpoint.ErrRescaleChannelState) {
			return err
		}
	}
	return nil
}
