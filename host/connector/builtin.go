// Package connector holds sluice's built-in sources and sinks, one per
// file, and Builtin, the value that creates them for the engine
// (runtime.Connectors).
//
// Each connector is one file: its constructor, registered against its
// spec (host/connector/spec) in that file's init (registry.go). Records are
// abi envelopes [event_time|nil, key|nil, value]; sources never set a key
// (key-by edges do that in the engine).
package connector

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/host/connector/kafka"
	connspec "github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

// Batch limits of every built-in source: a batch is cut at maxBatchRecords
// records or once it holds maxBatchBytes bytes.
const (
	maxBatchRecords = 512
	maxBatchBytes   = 64 << 10
)

// Builtin creates the built-in sources and sinks of one job. Use it through
// a pointer and do not copy it once used: the print sinks of every subtask
// share its lock on Stdout.
type Builtin struct {
	// Stdin feeds the stdin source; nil means os.Stdin.
	Stdin io.Reader
	// Stdout receives the print sinks' lines; nil means os.Stdout.
	Stdout io.Writer
	// Root is the folder that relative file paths are resolved against:
	// the pipeline file's folder. "" means the working directory.
	Root string
	// Roots, when set, confine the files of file sources and sinks: a
	// path (resolved against Root) must lie inside one of them and is
	// opened through an os.Root of it, so that neither ".." nor a
	// symbolic link leads out. A path outside is an error naming the path
	// and the roots. Nil: not confined.
	Roots []string
	// RootsSetting names the setting that chooses Roots (the CLI's
	// data-roots), so that a refused path says how to allow it.
	RootsSetting string
	// BadRecord decides what a file or stdin source does with a line it
	// cannot read. Returning nil skips the line and reading goes on;
	// returning an error stops the source with it. When BadRecord is nil
	// the source follows the operator's on-error: through the engine's
	// OpenContext.Reject (skip, dead-letter with counters, or fail), or,
	// outside the engine, "skip" skips (see Skipped) and anything else
	// fails with the *RecordError.
	BadRecord func(err *RecordError) error
	// Checkpointed makes the file sinks write part files committed when a
	// checkpoint completes (sink_file_commit.go): set it when the job
	// checkpoints.
	Checkpointed bool
	// KafkaSourcePolicy and KafkaSinkPolicy, when set, see each Kafka
	// source's and sink's configuration before it is built, and may change
	// or refuse it: host serve's Kafka policy (the brokers it allows, its
	// own credentials, transactional ids that carry the job id).
	KafkaSourcePolicy func(*kafka.SourceConfig) error
	KafkaSinkPolicy   func(*kafka.SinkConfig) error

	mu         sync.Mutex // whole-line writes to Stdout
	stdinOwner string     // the operator that reads stdin
}

var _ runtime.Connectors = (*Builtin)(nil)

// Source returns subtask's part of source operator spec.
func (b *Builtin) Source(spec *pipeline.Operator, subtask, parallelism int) (runtime.Source, error) {
	if spec == nil || spec.Source == nil {
		return nil, fmt.Errorf("operator %q is not a source", opID(spec))
	}
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("source %q: subtask %d out of range for parallelism %d", spec.ID, subtask, parallelism)
	}
	m, ok := lookup(connspec.Source, spec.Source)
	if !ok {
		return nil, fmt.Errorf("source %q: unknown source type %q (want one of %s)", spec.ID, spec.Source.Type, strings.Join(Set().Names(connspec.Source), ", "))
	}
	return m.source(b, newOptions("source", spec.ID, spec.Source), spec, subtask, parallelism)
}

// Sink returns subtask's part of sink operator spec: an operator that
// writes each record out and emits nothing.
func (b *Builtin) Sink(spec *pipeline.Operator, subtask, parallelism int) (runtime.Operator, error) {
	if spec == nil || spec.Sink == nil {
		return nil, fmt.Errorf("operator %q is not a sink", opID(spec))
	}
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("sink %q: subtask %d out of range for parallelism %d", spec.ID, subtask, parallelism)
	}
	m, ok := lookup(connspec.Sink, spec.Sink)
	if !ok {
		return nil, fmt.Errorf("sink %q: unknown sink type %q (want one of %s)", spec.ID, spec.Sink.Type, strings.Join(Set().Names(connspec.Sink), ", "))
	}
	return m.sink(b, newOptions("sink", spec.ID, spec.Sink), spec, subtask, parallelism)
}

// Bounded reports whether a source ends by itself (Flink's
// Boundedness.BOUNDED), as its spec says: a generator with a count,
// elements, a file, and stdin, which ends at the end of its input (the
// planner's AUTOMATIC still streams stdin, since a plan cannot tell a pipe
// from a terminal; a BATCH job reads it to the end). A generator without
// a count, or a type this package does not make, is unbounded.
func (b *Builtin) Bounded(spec *pipeline.Connector) bool {
	if spec == nil {
		return false
	}
	m, ok := lookup(connspec.Source, spec)
	return ok && m.spec.BoundednessOf(spec.Options) != connspec.Unbounded
}

func opID(spec *pipeline.Operator) string {
	if spec == nil {
		return ""
	}
	return spec.ID
}

// path resolves a path from the pipeline against Root.
func (b *Builtin) path(p string) string {
	if filepath.IsAbs(p) || b.Root == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(b.Root, p)
}

func (b *Builtin) stdin() io.Reader {
	if b.Stdin != nil {
		return b.Stdin
	}
	return os.Stdin
}

func (b *Builtin) stdout() io.Writer {
	if b.Stdout != nil {
		return b.Stdout
	}
	return os.Stdout
}

// claimStdin lets one source operator read stdin.
func (b *Builtin) claimStdin(op string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stdinOwner != "" && b.stdinOwner != op {
		return fmt.Errorf("source %q: stdin is already read by source %q", op, b.stdinOwner)
	}
	b.stdinOwner = op
	return nil
}

// writeLines writes whole lines to Stdout under the shared lock.
func (b *Builtin) writeLines(p []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.stdout().Write(p)
	return err
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
