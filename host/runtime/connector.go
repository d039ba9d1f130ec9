package runtime

import (
	"context"

	"github.com/sluicehq/sluice/host/pipeline"
)

// Source produces records for one subtask of a source operator.
type Source interface {
	// Open prepares the source; ctx tells the subtask and parallelism
	// (with parallelism p, generator subtask i produces the records whose
	// sequence number is i mod p).
	Open(ctx *OpenContext) error
	// Run emits batches of records (abi wire format) on port 0 until the
	// input ends (bounded: return nil) or ctx is cancelled (return
	// ctx.Err()). Emit blocks while downstream is back-pressured.
	Run(ctx context.Context, out Collector) error
	// Total is the number of records this subtask will produce, or -1 when
	// unbounded or unknown (progress display).
	Total() int64
	Close() error
}

// Connectors creates sources and sinks from what the pipeline wrote.
// host/connector implements it; the engine calls it once per subtask.
type Connectors interface {
	// Source returns the source of operator spec for one subtask.
	Source(spec *pipeline.Operator, subtask, parallelism int) (Source, error)
	// Sink returns the sink of operator spec for one subtask: an Operator
	// whose Process writes records out and which emits nothing.
	Sink(spec *pipeline.Operator, subtask, parallelism int) (Operator, error)
	// Bounded reports whether a source spec ends by itself.
	Bounded(spec *pipeline.Connector) bool
}
