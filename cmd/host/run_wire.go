package main

import (
	"context"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/jobmaster"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// startExecution starts one execution of a checkpointed job
// (jobmaster.StartEngine).
func startExecution(ctx context.Context, g *plan.JobGraph, deps runtime.Deps, acks jobmaster.Acks, restore *checkpoint.Reader, cfg checkpoint.Config) (jobmaster.Execution, error) {
	exec, err := jobmaster.StartEngine(ctx, g, deps, acks, restore, cfg)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return exec, nil
}
