package partition

import (
	"errors"
	"fmt"
)

// ErrForwardParallelism is wrapped by every error about a FORWARD edge
// between operators of unequal parallelism.
var ErrForwardParallelism = errors.New("forward partitioning does not allow change of parallelism")

// forward is Flink's ForwardPartitioner (flink-semantics.md §2): upstream
// subtask i feeds downstream subtask i only. Flink's channel is 0, the
// only one of the pointwise subset; this one returns the absolute index i.
type forward struct{ i int }

func newForward(cfg Config) (Partitioner, error) {
	if cfg.UpstreamParallelism != cfg.DownstreamParallelism {
		return nil, fmt.Errorf("partition: FORWARD: upstream parallelism %d, downstream parallelism %d: %w",
			cfg.UpstreamParallelism, cfg.DownstreamParallelism, ErrForwardParallelism)
	}
	return forward{i: cfg.Upstream}, nil
}

func (forward) Name() string          { return NameForward }
func (f forward) Channel(_ int32) int { return f.i }

// ForwardParallelismError is the plan-time error for an explicit FORWARD
// edge between operators of unequal parallelism, in Flink's exact words
// (StreamGraph.addEdgeInternal; flink-semantics.md §2). It wraps
// ErrForwardParallelism.
func ForwardParallelismError(upName string, upP int, downName string, downP int) error {
	return &forwardError{upName, upP, downName, downP}
}

type forwardError struct {
	up   string
	upP  int
	down string
	dnP  int
}

func (e *forwardError) Error() string {
	return fmt.Sprintf("Forward partitioning does not allow change of parallelism. "+
		"Upstream operation: %s parallelism: %d, downstream operation: %s parallelism: %d "+
		"You must use another partitioning strategy, such as broadcast, rebalance, shuffle or global.",
		e.up, e.upP, e.down, e.dnP)
}

func (e *forwardError) Unwrap() error { return ErrForwardParallelism }
