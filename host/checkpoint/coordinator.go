package checkpoint

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Task names the unit that acknowledges a checkpoint: one subtask of one
// task (a chain of operators) of the job.
type Task struct {
	Vertex  string
	Subtask int
}

func (t Task) String() string { return fmt.Sprintf("%s[%d]", t.Vertex, t.Subtask) }

// An Action is something the coordinator asks its caller to do: one of
// Inject, WriteMetadata, NotifyComplete, NotifyAbort and FailJob. The
// caller performs them in the order given.
type Action interface{ action() }

// Inject asks for a barrier of checkpoint ID at every source subtask,
// after the position it records. Stop marks a stop-with-savepoint (Flink's
// synchronous savepoint): the sources end after it and the tasks finish
// once the savepoint completes.
type Inject struct {
	ID        ID
	Timestamp time.Time
	Kind      Kind
	Stop      bool
}

// WriteMetadata says every task has acknowledged checkpoint ID: the caller
// publishes its _metadata from Files (Writer.Publish) and reports
// MetadataWritten or MetadataFailed. Files are sorted by operator and
// subtask.
type WriteMetadata struct {
	ID        ID
	Kind      Kind
	Timestamp time.Time
	Files     []SubtaskFile
}

// NotifyComplete tells every task that checkpoint ID is complete (Flink's
// notifyCheckpointComplete): a two-phase-commit sink commits everything it
// pre-committed for checkpoints up to ID. It is not sent for a savepoint
// unless it stops the job (since Flink 1.15 a savepoint commits no side
// effects) nor for a checkpoint older than one already notified.
type NotifyComplete struct {
	ID   ID
	Kind Kind
}

// NotifyAbort tells every task that checkpoint ID was aborted (Flink's
// notifyCheckpointAborted) and the caller that its directory can go. A
// two-phase-commit sink keeps what it pre-committed for it: the next
// completed checkpoint commits everything up to its own ID.
type NotifyAbort struct {
	ID     ID
	Kind   Kind
	Reason FailureReason
	Cause  string // what the task or the storage said, if anything
}

// FailJob says the job must fail (and restart per its restart strategy):
// more checkpoints failed in a row than tolerable-failures allows, or a
// task declined a stop-with-savepoint. Every pending checkpoint has been
// aborted and no new one starts until Start is called again.
type FailJob struct {
	Err error
}

func (Inject) action()         {}
func (WriteMetadata) action()  {}
func (NotifyComplete) action() {}
func (NotifyAbort) action()    {}
func (FailJob) action()        {}

// Ack is a task's acknowledgement of checkpoint ID: its snapshot is durable
// in Files (one per operator of the task that has state; none for a
// stateless task).
type Ack struct {
	Task    Task
	ID      ID
	Files   []SubtaskFile
	Metrics TaskMetrics
}

// TaskMetrics are what a task measured of its part of a checkpoint
// (Flink's CheckpointMetrics), kept for the dashboard.
type TaskMetrics struct {
	Alignment time.Duration // first barrier to last, at its input gate
	Sync      time.Duration // the synchronous part of the snapshot
	Async     time.Duration // writing the state files
}

// Decline is a task's refusal of checkpoint ID. Reason 0 is taken as
// ReasonDeclined.
type Decline struct {
	Task   Task
	ID     ID
	Reason FailureReason
	Cause  error
}

// ErrExceededTolerableFailures is FailJob's error (wrapped with the last
// failure) when tolerable-failures is exceeded; Flink's message is
// "Exceeded checkpoint tolerable failure threshold.".
var ErrExceededTolerableFailures = errors.New("exceeded checkpoint tolerable failure threshold")

// DefaultHistory is how many checkpoints Stats.History keeps (Flink's
// web.checkpoints.history).
const DefaultHistory = 10

// Options are a coordinator's starting point.
type Options struct {
	// NextID is the first checkpoint's ID; 0 means 1. A job restored from
	// checkpoint n starts at n+1.
	NextID ID
	// Restored is the checkpoint the job was restored from (0: none),
	// shown in Stats.
	Restored ID
	// History is how many checkpoints Stats keeps; 0 means DefaultHistory.
	History int
}

type coordState uint8

const (
	stateCreated   coordState = iota // before Start
	stateRunning                     // the tasks run: checkpoints may start
	stateSuspended                   // a task or the job failed: until Start
	stateFinished                    // sources ended or a stop-with-savepoint completed
	stateShutdown
)

// Coordinator is Flink's CheckpointCoordinator as a pure state machine, in
// the style of etcd's raft: no goroutines, no clock, no I/O. Every input is
// a method call carrying the current time; every output is an Action the
// caller performs. It is not safe for concurrent use: the caller serializes
// the inputs (one goroutine, or a mutex). docs/checkpoints.md lists its
// rules.
type Coordinator struct {
	cfg       Config
	tasks     []Task
	taskIndex map[Task]int
	history   int

	state    coordState
	nextID   ID
	pending  map[ID]*pending
	stopping ID // a pending stop-with-savepoint: no periodic checkpoint meanwhile

	nextDue        time.Time // the next periodic checkpoint is due
	lastCompletion time.Time
	completedAny   bool
	lastNotified   ID

	// CheckpointFailureManager
	failures        int
	countedIDs      map[ID]bool
	lastSucceededID ID

	stats Stats
	hist  []*CheckpointStats // newest first
}

type pending struct {
	id        ID
	kind      Kind
	stop      bool
	triggered time.Time
	acked     []bool
	nacked    int
	files     []SubtaskFile
	// finalizing: every task acknowledged and WriteMetadata was sent; it
	// no longer expires or is subsumed, and ends with MetadataWritten or
	// MetadataFailed.
	finalizing bool
	// declined is the error a task declined the checkpoint with, which
	// the job's failure wraps (errors.As finds the operator's error).
	declined error
	stats    *CheckpointStats
}

// NewCoordinator returns a coordinator for a job whose tasks are tasks (each
// must acknowledge a checkpoint for it to complete). It does nothing until
// Start.
func NewCoordinator(cfg Config, tasks []Task, opts Options) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		return nil, errors.New("checkpoint coordinator: a job needs at least one task")
	}
	idx := make(map[Task]int, len(tasks))
	for i, t := range tasks {
		if _, dup := idx[t]; dup {
			return nil, fmt.Errorf("checkpoint coordinator: task %s is listed twice", t)
		}
		idx[t] = i
	}
	c := &Coordinator{
		cfg:        cfg,
		tasks:      slices.Clone(tasks),
		taskIndex:  idx,
		history:    opts.History,
		nextID:     opts.NextID,
		pending:    map[ID]*pending{},
		countedIDs: map[ID]bool{},
	}
	if c.nextID == 0 {
		c.nextID = 1
	}
	if c.history <= 0 {
		c.history = DefaultHistory
	}
	c.stats.Restored = opts.Restored
	return c, nil
}

// Start says the job's tasks are running (again, after a failure):
// periodic checkpoints become due one interval from now, and savepoints
// can be triggered.
func (c *Coordinator) Start(now time.Time) {
	if c.state == stateShutdown || c.state == stateFinished {
		return
	}
	c.state = stateRunning
	c.stopping = 0
	if c.cfg.Interval > 0 {
		c.nextDue = now.Add(c.cfg.Interval)
	}
}

// NextID is the ID the next checkpoint or savepoint will take.
func (c *Coordinator) NextID() ID { return c.nextID }

// Pending lists the checkpoints in progress, oldest first.
func (c *Coordinator) Pending() []ID {
	ids := make([]ID, 0, len(c.pending))
	for id := range c.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Tick lets time pass: it expires checkpoints past their timeout and
// triggers a periodic checkpoint when one is due.
func (c *Coordinator) Tick(now time.Time) []Action {
	var out []Action
	for _, id := range c.Pending() {
		p := c.pending[id]
		if p == nil || p.finalizing || now.Before(p.triggered.Add(c.cfg.Timeout)) {
			continue
		}
		out = c.abort(out, now, p, ReasonExpired, fmt.Sprintf("not acknowledged by %s within %v", c.missing(p), c.cfg.Timeout), false)
	}
	return c.maybeTrigger(out, now)
}

// TriggerSavepoint starts a savepoint now (Flink's savepoints are forced:
// neither max-concurrent nor min-pause holds them back). With stop it is a
// stop-with-savepoint: no periodic checkpoint starts while it is pending,
// and the job is finished once it completes. It returns the savepoint's
// ID, or an error when the job is not running or already stopping.
func (c *Coordinator) TriggerSavepoint(now time.Time, stop bool) (ID, []Action, error) {
	switch c.state {
	case stateCreated:
		return 0, nil, errors.New("savepoint: the job is not running yet")
	case stateSuspended:
		return 0, nil, errors.New("savepoint: the job is restarting after a failure")
	case stateFinished:
		return 0, nil, errors.New("savepoint: the job's sources have ended")
	case stateShutdown:
		return 0, nil, errors.New("savepoint: the job has stopped")
	}
	if c.stopping != 0 {
		return 0, nil, fmt.Errorf("savepoint: stop-with-savepoint %d is in progress", c.stopping)
	}
	id, out := c.trigger(nil, now, KindSavepoint, stop)
	if stop {
		c.stopping = id
	}
	return id, out, nil
}

// Ack records a task's acknowledgement. An ack for an unknown, finished or
// aborted checkpoint, from a task the job does not have, or repeated, is
// ignored (Flink discards it too). When the last task acknowledges, the
// result holds WriteMetadata.
func (c *Coordinator) Ack(now time.Time, a Ack) []Action {
	if c.state == stateShutdown {
		return nil
	}
	p := c.pending[a.ID]
	i, known := c.taskIndex[a.Task]
	if p == nil || p.finalizing || !known || p.acked[i] {
		return nil
	}
	p.acked[i] = true
	p.nacked++
	var size int64
	for _, f := range a.Files {
		size += f.Size
	}
	p.files = append(p.files, a.Files...)
	p.stats.Acknowledged = p.nacked
	p.stats.Size += size
	p.stats.Duration = now.Sub(p.triggered)
	p.stats.Subtasks = append(p.stats.Subtasks, SubtaskStats{
		Task: a.Task, Acknowledged: now, Size: size,
		Alignment: a.Metrics.Alignment, Sync: a.Metrics.Sync, Async: a.Metrics.Async,
	})
	if p.nacked < len(c.tasks) {
		return nil
	}
	p.finalizing = true
	files := slices.Clone(p.files)
	slices.SortFunc(files, func(x, y SubtaskFile) int {
		if d := strings.Compare(x.Operator, y.Operator); d != 0 {
			return d
		}
		return x.Subtask - y.Subtask
	})
	return []Action{WriteMetadata{ID: p.id, Kind: p.kind, Timestamp: p.triggered, Files: files}}
}

// Decline aborts checkpoint d.ID because a task refused it. A decline for a
// checkpoint that is not pending, or whose metadata is being written, is
// ignored.
func (c *Coordinator) Decline(now time.Time, d Decline) []Action {
	if c.state == stateShutdown {
		return nil
	}
	p := c.pending[d.ID]
	if p == nil || p.finalizing {
		return nil
	}
	reason := d.Reason
	if reason == 0 {
		reason = ReasonDeclined
	}
	cause := d.Task.String()
	if d.Cause != nil {
		cause += ": " + d.Cause.Error()
	}
	p.declined = d.Cause
	out := c.abort(nil, now, p, reason, cause, true)
	return c.maybeTrigger(out, now)
}

// MetadataWritten completes checkpoint id: its _metadata is durable.
func (c *Coordinator) MetadataWritten(now time.Time, id ID) []Action {
	p := c.pending[id]
	if p == nil || !p.finalizing || c.state == stateShutdown {
		return nil
	}
	delete(c.pending, id)
	p.stats.Status = StatusCompleted
	p.stats.Duration = now.Sub(p.triggered)
	c.stats.NumberOfCompletedCheckpoints++
	c.stats.LastCheckpointDuration = p.stats.Duration
	c.stats.LastCheckpointSize = p.stats.Size
	c.stats.LastCompletedID = id
	c.lastCompletion = now
	c.completedAny = true
	// CheckpointFailureManager.handleCheckpointSuccess
	if id > c.lastSucceededID {
		c.lastSucceededID = id
		c.clearFailures()
	}
	var out []Action
	if p.kind == KindCheckpoint || p.stop {
		// dropSubsumedCheckpoints: older pending checkpoints (never
		// savepoints) are of no use once a newer one completed.
		for _, old := range c.Pending() {
			q := c.pending[old]
			if old < id && q.kind == KindCheckpoint && !q.finalizing {
				out = c.abort(out, now, q, ReasonSubsumed, fmt.Sprintf("checkpoint %d completed", id), false)
			}
		}
		if id > c.lastNotified {
			c.lastNotified = id
			out = append(out, NotifyComplete{ID: id, Kind: p.kind})
		}
	}
	if p.stop {
		c.stopping = 0
		c.state = stateFinished
		return out
	}
	return c.maybeTrigger(out, now)
}

// MetadataFailed aborts checkpoint id: its _metadata could not be written.
// As in Flink (FINALIZE_CHECKPOINT_FAILURE) this does not count towards
// tolerable-failures.
func (c *Coordinator) MetadataFailed(now time.Time, id ID, err error) []Action {
	p := c.pending[id]
	if p == nil || !p.finalizing || c.state == stateShutdown {
		return nil
	}
	cause := ""
	if err != nil {
		cause = err.Error()
	}
	out := c.abort(nil, now, p, ReasonFinalizeFailure, cause, false)
	return c.maybeTrigger(out, now)
}

// TaskFailed says a task failed: the job restarts, so every pending
// checkpoint is aborted (not counted) and none starts until Start. No
// FailJob follows: the caller already handles the failure.
func (c *Coordinator) TaskFailed(now time.Time, t Task, cause error) []Action {
	if c.state == stateShutdown {
		return nil
	}
	msg := t.String()
	if cause != nil {
		msg += ": " + cause.Error()
	}
	c.state = stateSuspended
	c.stopping = 0
	return c.abortAll(nil, now, ReasonTaskFailure, msg)
}

// Finished says the job's sources have ended: no checkpoint or savepoint
// starts any more. Pending ones may still complete (their barriers travel
// ahead of the end of the stream) or expire.
func (c *Coordinator) Finished(now time.Time) []Action {
	if c.state != stateShutdown {
		c.state = stateFinished
	}
	return nil
}

// Shutdown aborts every pending checkpoint and ignores every later input.
func (c *Coordinator) Shutdown(now time.Time) []Action {
	if c.state == stateShutdown {
		return nil
	}
	c.state = stateShutdown
	return c.abortAll(nil, now, ReasonCoordinatorShutdown, "")
}

func (c *Coordinator) trigger(out []Action, now time.Time, kind Kind, stop bool) (ID, []Action) {
	id := c.nextID
	c.nextID++
	st := &CheckpointStats{ID: id, Kind: kind, Status: StatusInProgress, Triggered: now, Tasks: len(c.tasks)}
	c.pending[id] = &pending{id: id, kind: kind, stop: stop, triggered: now, acked: make([]bool, len(c.tasks)), stats: st}
	c.hist = append([]*CheckpointStats{st}, c.hist...)
	if len(c.hist) > c.history {
		c.hist = c.hist[:c.history]
	}
	return id, append(out, Inject{ID: id, Timestamp: now, Kind: kind, Stop: stop})
}

// maybeTrigger starts a periodic checkpoint if one is due and allowed.
// Flink's CheckpointRequestDecider: a due checkpoint waits while
// max-concurrent checkpoints are pending and starts as soon as one ends;
// min-pause after the last completed checkpoint moves it later. Due times
// missed while it waited are dropped, not made up in a burst.
func (c *Coordinator) maybeTrigger(out []Action, now time.Time) []Action {
	if c.state != stateRunning || c.stopping != 0 || c.cfg.Interval == 0 || now.Before(c.nextDue) {
		return out
	}
	if len(c.pending) >= c.cfg.MaxConcurrent {
		return out
	}
	if c.cfg.MinPause > 0 && c.completedAny {
		if earliest := c.lastCompletion.Add(c.cfg.MinPause); now.Before(earliest) {
			c.nextDue = earliest
			return out
		}
	}
	due := c.nextDue
	_, out = c.trigger(out, now, KindCheckpoint, false)
	c.nextDue = due.Add(c.cfg.Interval)
	if !c.nextDue.After(now) {
		c.nextDue = now.Add(c.cfg.Interval)
	}
	return out
}

func (c *Coordinator) abortAll(out []Action, now time.Time, reason FailureReason, cause string) []Action {
	for _, id := range c.Pending() {
		out = c.abort(out, now, c.pending[id], reason, cause, false)
	}
	return out
}

// abort ends pending checkpoint p as failed and applies Flink's
// CheckpointFailureManager: a failure the coordinator saw (fromTask false:
// expiry, metadata, subsumption) of a savepoint is not counted; a task's
// decline of a stop-with-savepoint fails the job; every other failure
// goes against the counter.
func (c *Coordinator) abort(out []Action, now time.Time, p *pending, reason FailureReason, cause string, fromTask bool) []Action {
	delete(c.pending, p.id)
	if c.stopping == p.id {
		c.stopping = 0
	}
	p.stats.Status = StatusFailed
	p.stats.Duration = now.Sub(p.triggered)
	p.stats.FailureReason = reason
	p.stats.FailureCause = cause
	c.stats.NumberOfFailedCheckpoints++
	out = append(out, NotifyAbort{ID: p.id, Kind: p.kind, Reason: reason, Cause: cause})
	if c.state != stateRunning && c.state != stateFinished {
		return out // the job is already failing or stopping
	}
	what := fmt.Sprintf("%s %d: %s", p.kind, p.id, reason)
	if cause != "" {
		what += " (" + cause + ")"
	}
	switch {
	case !fromTask && p.kind == KindSavepoint:
		return out
	case fromTask && p.kind == KindSavepoint && p.stop:
		return c.failJob(out, now, withCause(fmt.Errorf("stop-with-savepoint failed: %s", what), p.declined))
	}
	if p.id <= c.lastSucceededID {
		return out // older than the last success: it no longer says anything
	}
	if reason.Counted() && !c.countedIDs[p.id] {
		c.countedIDs[p.id] = true
		c.failures++
	}
	c.stats.ConsecutiveFailures = c.failures
	if c.failures > c.cfg.TolerableFailures {
		c.clearFailures()
		return c.failJob(out, now, withCause(fmt.Errorf("%w (tolerable-failures %d), last: %s", ErrExceededTolerableFailures, c.cfg.TolerableFailures, what), p.declined))
	}
	return out
}

func (c *Coordinator) failJob(out []Action, now time.Time, err error) []Action {
	c.state = stateSuspended
	c.stopping = 0
	out = append(out, FailJob{Err: err})
	return c.abortAll(out, now, ReasonJobFailure, "")
}

func (c *Coordinator) clearFailures() {
	c.failures = 0
	clear(c.countedIDs)
	c.stats.ConsecutiveFailures = 0
}

// missing names the tasks that have not acknowledged p (up to 3).
func (c *Coordinator) missing(p *pending) string {
	var names []string
	for i, ok := range p.acked {
		if !ok {
			names = append(names, c.tasks[i].String())
		}
	}
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
	return strings.Join(names, ", ")
}

// Stats returns a copy of the checkpoint statistics, safe to keep.
func (c *Coordinator) Stats() Stats {
	s := c.stats
	s.NumberOfInProgressCheckpoints = len(c.pending)
	s.History = make([]CheckpointStats, len(c.hist))
	for i, h := range c.hist {
		s.History[i] = *h
		s.History[i].Subtasks = slices.Clone(h.Subtasks)
	}
	return s
}

// causedError is a job failure whose text already holds its cause's,
// and which unwraps to both.
type causedError struct{ err, cause error }

func (e *causedError) Error() string   { return e.err.Error() }
func (e *causedError) Unwrap() []error { return []error{e.err, e.cause} }

// withCause is err, also unwrapping to the decline's cause when there is
// one, so that errors.As finds the failed operator's error in a job
// failure the coordinator reports as text.
func withCause(err, cause error) error {
	if cause == nil {
		return err
	}
	return &causedError{err, cause}
}
