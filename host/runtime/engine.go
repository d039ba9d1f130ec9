package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
)

// Options tune the engine. Zero values take the defaults.
type Options struct {
	// BatchSize cuts a batch on an edge between tasks at this many records
	// (default 1024).
	BatchSize int
	// BatchBytes cuts a batch at this many bytes (default 64 KiB).
	BatchBytes int
	// Linger is how long a partly filled batch may wait before it is sent
	// (Flink's buffer timeout; default 5ms).
	Linger time.Duration
	// QueueCapacity is the number of batches in flight per (upstream
	// subtask, downstream subtask) channel (default 4). Memory for edges is
	// at most channels * QueueCapacity * ~BatchBytes.
	QueueCapacity int
	// Seed seeds REBALANCE's start channels and SHUFFLE (default 0: the
	// same channels on every run).
	Seed int64
	// DrainTimeout bounds how long the job drains after a failure (records
	// already emitted still reach the sinks) before it is torn down
	// (default 10s).
	DrainTimeout time.Duration
	// HotKeyShare is the share of a HASH or CUSTOM edge's records above which the
	// summary names the key as hot (default 0.5).
	HotKeyShare float64
	// StateBytes caps the keyed state a plugin operator's subtask holds,
	// keys and values (KeyedStore.SetLimit); 0: no limit.
	StateBytes int64
	// CheckpointMode: exactly-once aligns barriers at a task with several
	// input channels, at-least-once only counts them (Flink's
	// CheckpointBarrierTracker). Used when Deps.Checkpoints is set.
	CheckpointMode checkpoint.Mode
	// FinalCheckpoint: a subtask whose input ended and whose chain commits
	// on checkpoints (a CheckpointListener, such as a two-phase-commit
	// sink) waits, before it closes, until a checkpoint holding its final
	// state completes, as Flink's tasks wait for the final checkpoint
	// (FLIP-147). Without it such a sink commits its last records at
	// Close, outside any checkpoint, and a crash between that commit and
	// the job's end replays them from the last checkpoint. Set it only
	// when checkpoints are triggered periodically: the wait is for the
	// next one.
	FinalCheckpoint bool
	// FullCheckpoints turns off the heap backend's incremental
	// checkpoints: no dirty tracking, every checkpoint writes all keyed
	// state (state_incremental.go). Savepoints are always full.
	FullCheckpoints bool
}

// Defaults of Options.
const (
	DefaultBatchSize     = 1024
	DefaultBatchBytes    = 64 << 10
	DefaultLinger        = 5 * time.Millisecond
	DefaultQueueCapacity = 4
	DefaultDrainTimeout  = 10 * time.Second
	DefaultHotKeyShare   = 0.5
)

func (o Options) withDefaults() Options {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.Linger <= 0 {
		o.Linger = DefaultLinger
	}
	if o.QueueCapacity <= 0 {
		o.QueueCapacity = DefaultQueueCapacity
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.HotKeyShare <= 0 {
		o.HotKeyShare = DefaultHotKeyShare
	}
	return o
}

// Deps is what a run needs from outside the engine.
type Deps struct {
	Plugins    Plugins    // plugin-backed operators, partitioners, key selectors
	Connectors Connectors // sources and sinks
	Logger     *slog.Logger
	// Checkpoints is told what became of each checkpoint at each task;
	// nil turns checkpointing off (no barrier work at all).
	Checkpoints CheckpointAcks
	// Restore gives each subtask the state it starts with; nil: a fresh
	// start.
	Restore Restorer
	// Now is the engine's processing time (periodic watermarks, idleness);
	// nil: the wall clock. Tests give a fake one.
	Now func() time.Time
	// StateBackends opens keyed state on the backends other than the heap
	// (host/state/pebblestate); nil: heap only.
	StateBackends StateBackends
	Options
}

// Execution is a running job. Its methods are safe for concurrent use.
type Execution struct {
	job  *plan.JobGraph
	deps Deps
	opts Options
	log  *slog.Logger

	ctx         context.Context // torn down: every blocking operation gives up
	cancel      context.CancelCauseFunc
	srcCtx      context.Context // sources stop: the job drains
	stopSources context.CancelFunc

	subtasks [][]*subtask // [task][subtask]
	outs     []*edgeOut
	hot      map[*plan.Edge][]*hotKeys
	ckpt     *checkpointing // nil: checkpointing off
	et       bool           // some source generates watermarks (eventtime.go)

	mu    sync.Mutex
	err   error
	drain *time.Timer

	wg       sync.WaitGroup
	started  time.Time
	finished atomic.Int64 // UnixNano; 0 while running
	done     chan struct{}
	result   *Result
}

// Run executes job until it ends, fails or ctx is cancelled, and returns
// what it did. On failure the error is the first one, naming operator and
// subtask (*OpError); the Result is returned too.
func Run(ctx context.Context, job *plan.JobGraph, deps Deps) (*Result, error) {
	e, err := Start(ctx, job, deps)
	if err != nil {
		return nil, err
	}
	return e.Wait()
}

// Start launches job and returns at once. Cancelling ctx tears the job
// down.
func Start(ctx context.Context, job *plan.JobGraph, deps Deps) (*Execution, error) {
	if job == nil || len(job.Tasks) == 0 {
		return nil, errors.New("runtime: empty job graph")
	}
	if deps.Connectors == nil {
		return nil, errors.New("runtime: no connectors for sources and sinks")
	}
	if job.Mode == pipeline.Batch {
		for _, op := range job.Operators {
			if op.Kind == pipeline.KindSource && !deps.Connectors.Bounded(op.Spec.Source) {
				return nil, fmt.Errorf("%w: source %q never ends", ErrBatchUnbounded, op.ID)
			}
		}
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Execution{job: job, deps: deps, opts: deps.Options.withDefaults(), log: log, done: make(chan struct{})}
	e.ctx, e.cancel = context.WithCancelCause(ctx)
	e.srcCtx, e.stopSources = context.WithCancel(e.ctx)
	if deps.Restore != nil && job.Mode == pipeline.Batch {
		return nil, errors.New("runtime: a BATCH job cannot start from a checkpoint (as in Flink, BATCH jobs take none)")
	}
	if deps.Checkpoints != nil && job.Mode != pipeline.Batch {
		e.ckpt = &checkpointing{acks: deps.Checkpoints, mode: e.opts.CheckpointMode, stops: map[checkpoint.ID]*stopOutcome{}}
	}
	e.et = e.eventTimeOn()
	if err := e.build(); err != nil {
		e.stopSources()
		e.cancel(err)
		return nil, err
	}
	e.started = time.Now()
	log.Info("job started", "job_name", job.Name, "mode", string(job.Mode), "tasks", len(job.Tasks))
	for _, sts := range e.subtasks {
		for _, st := range sts {
			e.wg.Add(1)
			go st.run()
		}
	}
	if every, sources := e.timedSources(); len(sources) > 0 {
		go e.watermarkLoop(every, sources)
	}
	flushed := make(chan struct{})
	go e.flushLoop(flushed)
	go e.finish(flushed)
	return e, nil
}

// Wait blocks until the job ended and returns its result and first error.
func (e *Execution) Wait() (*Result, error) {
	<-e.done
	return e.result, e.err
}

// Done is closed when the job has ended.
func (e *Execution) Done() <-chan struct{} { return e.done }

// Cancel tears the job down; Wait returns context.Canceled.
func (e *Execution) Cancel() { e.cancel(context.Canceled) }

// finish waits for every subtask, then stops the flusher and records the
// result.
func (e *Execution) finish(flushed chan struct{}) {
	e.wg.Wait()
	e.finished.Store(time.Now().UnixNano())
	e.mu.Lock()
	if e.drain != nil {
		e.drain.Stop()
	}
	// Cancel (or the caller's context) ended it, not a failure: the
	// cause of a teardown after a hung drain is that drain's error
	canceled := e.ctx.Err() != nil && errors.Is(context.Cause(e.ctx), context.Canceled)
	if e.err == nil && e.ctx.Err() != nil {
		e.err = fmt.Errorf("job %q cancelled: %w", e.job.Name, context.Cause(e.ctx))
	}
	e.mu.Unlock()
	e.stopSources()
	e.cancel(context.Canceled)
	<-flushed
	e.result = e.Snapshot()
	// Wait returns the error: the caller reports it. job_name, not job:
	// a caller's logger may carry job (the server's is its job id).
	switch {
	case canceled:
		e.log.Info("job cancelled", "job_name", e.job.Name, "duration", e.result.Duration)
	case e.err != nil:
		e.log.Info("job failed", "job_name", e.job.Name, "error", e.err)
	default:
		e.log.Info("job finished", "job_name", e.job.Name, "duration", e.result.Duration)
	}
	close(e.done)
}

// fail records the first failure and starts the drain: sources stop, what
// was emitted flows on to the sinks, and a timer tears the job down if the
// drain hangs.
func (e *Execution) fail(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return
	}
	e.err = err
	e.log.Info("subtask failed, draining the job", "error", err)
	e.stopSources()
	e.drain = time.AfterFunc(e.opts.DrainTimeout, func() {
		e.teardown(fmt.Errorf("drain after failure took longer than %v", e.opts.DrainTimeout))
	})
}

func (e *Execution) failed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err != nil
}

func (e *Execution) teardown(cause error) { e.cancel(cause) }

// hardStopped reports whether the job is being torn down.
func (e *Execution) hardStopped() bool { return e.ctx.Err() != nil }

// flushLoop is the linger timer: it sends every batch that has waited
// since the last tick. An output busy in its owner's hands is skipped: its
// owner is filling it.
func (e *Execution) flushLoop(flushed chan struct{}) {
	defer close(flushed)
	t := time.NewTicker(e.opts.Linger)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			for _, o := range e.outs {
				if o.mu.TryLock() {
					if !o.ended {
						_ = o.flushPending() // fails only when torn down
					}
					o.mu.Unlock()
				}
			}
		case <-e.ctx.Done():
			return
		}
	}
}
