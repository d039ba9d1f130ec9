package runtime

// This file is the engine's side of checkpoints (docs/checkpoints.md):
// what the job master calls (TriggerCheckpoint, NotifyCheckpoint*), what
// it is told (CheckpointAcks), and the optional interfaces through which
// sources and operators hand over and get back their state.

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
)

// CheckpointAcks is told, for every task (one subtask of a chain), what
// became of each checkpoint it was asked to take. Its methods are called
// from the subtasks' goroutines (and from TriggerCheckpoint's, for tasks
// that ended), concurrently, and must not block long. They may call the
// Execution's checkpoint methods.
type CheckpointAcks interface {
	// Acknowledge says the barrier of id has passed the task's whole chain:
	// states holds one SubtaskState per operator of the chain that keeps
	// state (keyed state, a Snapshotter, a CheckpointedSource), in chain
	// order; a stateless task acknowledges with none. The engine does not
	// touch the states again; the callee must not change them either: a
	// task that ended acknowledges every later checkpoint with the same
	// states. A task that ended reports zero metrics.
	Acknowledge(task checkpoint.Task, id checkpoint.ID, states []checkpoint.SubtaskState, m checkpoint.TaskMetrics)
	// Decline says the task cannot take checkpoint id: an operator's
	// snapshot failed (reason declined), a newer barrier overtook it
	// during alignment (declined-subsumed), a task upstream aborted it
	// (declined on cancellation barrier).
	Decline(task checkpoint.Task, id checkpoint.ID, reason checkpoint.FailureReason, cause error)
}

// Restorer gives each subtask of each operator the state it starts with;
// *checkpoint.Reader implements it.
type Restorer interface {
	Restore(op string, subtask, parallelism, maxParallelism int) (checkpoint.Restore, error)
}

// CheckpointedSource is a Source whose position is checkpointed.
type CheckpointedSource interface {
	// SnapshotState is called on the source's goroutine, inside its
	// Collector's Emit (after the batch was handed on) or Yield, or after
	// Run returned: it returns the position after every record emitted so
	// far. Split elements are redistributed round robin on a rescale,
	// every union element goes to every new subtask.
	SnapshotState(id checkpoint.ID) (split, union [][]byte, err error)
	// RestoreState is called after Open, before Run, when the job starts
	// from a checkpoint.
	RestoreState(r checkpoint.Restore) error
}

// Snapshotter is an operator (built-in, plugin, sink) with state beyond
// the host's keyed state. SnapshotState fills Split, Union and
// Committables (the engine fills the rest); it is called on the subtask's
// goroutine between batches. RestoreState is called after Open, before
// the first batch, when the job starts from a checkpoint.
type Snapshotter interface {
	SnapshotState(id checkpoint.ID) (checkpoint.SubtaskState, error)
	RestoreState(r checkpoint.Restore) error
}

// ErrNoOperatorState, returned by a Snapshotter's SnapshotState, says the
// operator keeps no operator state after all (a plugin whose SDK exports
// the snapshot call for every operator): it contributes none, as if it
// were no Snapshotter.
var ErrNoOperatorState = errors.New("the operator keeps no operator state")

// CheckpointListener is an operator, source or sink told when a checkpoint
// completed or was aborted, on its subtask's goroutine, in the order the
// job master sent them. A two-phase-commit sink commits in
// NotifyCheckpointComplete; its error fails the job, as in Flink.
type CheckpointListener interface {
	NotifyCheckpointComplete(id checkpoint.ID) error
	NotifyCheckpointAborted(id checkpoint.ID)
}

// SourceMailbox is implemented by the Collector a Source's Run gets while
// checkpointing is on. Emit does the engine's work (inject a barrier,
// deliver a notification) after each batch it hands on; a source that
// waits — for time (a rate), for input — selects on Pending as well and
// calls Yield when it is ready, so that a barrier is injected promptly
// however slow the source. An error from Emit or Yield must be returned
// by Run as it is (or wrapped): after a stop-with-savepoint's barrier it
// says the source is to end.
type SourceMailbox interface {
	Pending() <-chan struct{}
	Yield() error
}

// errSourceStopped ends a source after the barrier of a
// stop-with-savepoint: its subtask then ends as at the end of its input.
var errSourceStopped = errors.New("the source stopped at a stop-with-savepoint")

// checkpointing is an Execution's checkpoint state (nil: off).
type checkpointing struct {
	acks      CheckpointAcks
	mode      checkpoint.Mode
	unaligned bool // Options.UnalignedCheckpoints, exactly-once

	mu        sync.Mutex
	triggered []*barrier // not yet known complete or aborted, oldest first
	last      checkpoint.ID
	stops     map[checkpoint.ID]*stopOutcome
}

// stopOutcome is how a stop-with-savepoint ended: done closes once the
// job master says, with err set when it was aborted.
type stopOutcome struct {
	done   chan struct{}
	closed bool // under checkpointing.mu
	err    error
}

// finalAck is an acknowledgement a subtask that ended makes with the
// state it ended with.
type finalAck struct {
	task   checkpoint.Task
	id     checkpoint.ID
	states []checkpoint.SubtaskState
}

// maxTriggered bounds the checkpoints kept for subtasks that end before
// their barrier reaches them (savepoints are never notified complete).
const maxTriggered = 64

// subtaskCheckpoint is one subtask's part of checkpointing.
type subtaskCheckpoint struct {
	mail mailbox
	// the subtask goroutine's own
	align *aligner
	stash [][]message // per input channel: what it delivered while blocked
	ready []message   // released from the stash, to go before the gate
	// taking: the unaligned checkpoint this subtask snapshotted and whose
	// in-flight data it persists until every channel's came
	taking  *unalignedTake
	handled checkpoint.ID
	stopID  checkpoint.ID // the stop-with-savepoint it acknowledged
	stopped bool          // a source after that barrier: Emit refuses
	// under checkpointing.mu
	finished bool
	final    []checkpoint.SubtaskState
	awaiting bool // finished, waiting for the stop-with-savepoint's outcome
	// committing: finished, waiting for a checkpoint with its final state
	// to complete (Options.FinalCheckpoint); completed is the newest
	// checkpoint its listeners were told completed
	committing bool
	completed  checkpoint.ID
}

// mailbox carries work to a subtask's goroutine: barriers to inject at a
// source, notifications of completed and aborted checkpoints.
type mailbox struct {
	mu     sync.Mutex
	items  []mail
	signal chan struct{} // holds a token while items may be waiting
}

type mail struct {
	barrier  *barrier      // inject it (a source)
	complete checkpoint.ID // or: notify complete
	aborted  checkpoint.ID // or: notify aborted
}

func (m *mailbox) push(x mail) {
	m.mu.Lock()
	m.items = append(m.items, x)
	m.mu.Unlock()
	select {
	case m.signal <- struct{}{}:
	default:
	}
}

func (m *mailbox) take() []mail {
	m.mu.Lock()
	defer m.mu.Unlock()
	items := m.items
	m.items = nil
	return items
}

// Tasks lists every task of the job, one per subtask of each chain: what
// checkpoint.NewCoordinator must wait for. A task's Vertex is the id of
// the operator at the head of its chain.
func (e *Execution) Tasks() []checkpoint.Task {
	var ts []checkpoint.Task
	for _, sts := range e.subtasks {
		for _, st := range sts {
			ts = append(ts, st.checkpointTask())
		}
	}
	return ts
}

func (s *subtask) checkpointTask() checkpoint.Task {
	return checkpoint.Task{Vertex: s.task.Operators[0], Subtask: s.index}
}

// TriggerCheckpoint starts checkpoint id: every source subtask puts its
// barrier after the records it emitted so far, on its own goroutine, as
// soon as it is between two batches or waiting. A subtask that already
// ended acknowledges at once with the state it ended with. With stop
// (stop-with-savepoint) the sources end after the barrier, and every task
// that took it waits for the savepoint's outcome before it ends: the job
// finishes once NotifyCheckpointComplete(id) came, and fails if
// NotifyCheckpointAborted(id) came instead. ids must increase.
func (e *Execution) TriggerCheckpoint(id checkpoint.ID, kind checkpoint.Kind, ts time.Time, stop bool) error {
	ck := e.ckpt
	switch {
	case e.job.Mode == pipeline.Batch:
		return fmt.Errorf("checkpoint %d: a BATCH job takes no checkpoints (as in Flink)", id)
	case ck == nil:
		return fmt.Errorf("checkpoint %d: checkpointing is off for job %q", id, e.job.Name)
	case e.finished.Load() != 0:
		return fmt.Errorf("checkpoint %d: job %q has ended", id, e.job.Name)
	case e.failed():
		return fmt.Errorf("checkpoint %d: job %q is failing", id, e.job.Name)
	}
	b := &barrier{id: id, kind: kind, ts: ts, stop: stop, unaligned: ck.unaligned && kind == checkpoint.KindCheckpoint}
	var acks []finalAck // made once the lock is released: the callee may call back
	defer func() {
		for _, a := range acks {
			ck.acks.Acknowledge(a.task, a.id, a.states, checkpoint.TaskMetrics{})
		}
	}()
	ck.mu.Lock()
	defer ck.mu.Unlock()
	if id <= ck.last {
		return fmt.Errorf("checkpoint %d: ids must increase, and %d was triggered already", id, ck.last)
	}
	ck.last = id
	ck.triggered = append(ck.triggered, b)
	if n := len(ck.triggered) - maxTriggered; n > 0 {
		ck.triggered = append(ck.triggered[:0], ck.triggered[n:]...)
	}
	if stop {
		ck.stops[id] = &stopOutcome{done: make(chan struct{})}
	}
	for _, sts := range e.subtasks {
		for _, st := range sts {
			switch {
			case st.ck.finished:
				acks = append(acks, finalAck{st.checkpointTask(), id, st.ck.final})
			case st.gate == nil: // a source
				st.ck.mail.push(mail{barrier: b})
			}
		}
	}
	return nil
}

// NotifyCheckpointComplete tells every operator that implements
// CheckpointListener that checkpoint id completed, on its own goroutine.
// Subtasks that ended are not told.
func (e *Execution) NotifyCheckpointComplete(id checkpoint.ID) {
	e.notify(id, mail{complete: id}, nil)
}

// NotifyCheckpointAborted tells every CheckpointListener that checkpoint
// id was aborted. An aborted stop-with-savepoint fails the job.
func (e *Execution) NotifyCheckpointAborted(id checkpoint.ID) {
	e.notify(id, mail{aborted: id}, fmt.Errorf("stop-with-savepoint %d was aborted", id))
}

func (e *Execution) notify(id checkpoint.ID, m mail, stopErr error) {
	ck := e.ckpt
	if ck == nil {
		return
	}
	ck.mu.Lock()
	keep := ck.triggered[:0]
	for _, b := range ck.triggered {
		// a completed checkpoint was taken by every task, older ones are
		// subsumed; an aborted one needs no acknowledgement any more
		if m.complete != 0 && b.id > id || m.aborted != 0 && b.id != id {
			keep = append(keep, b)
		}
	}
	clear(ck.triggered[len(keep):])
	ck.triggered = keep
	for _, sts := range e.subtasks {
		for _, st := range sts {
			if !st.ck.finished || st.ck.awaiting || st.ck.committing {
				st.ck.mail.push(m)
			}
		}
	}
	so := ck.stops[id]
	if so != nil && !so.closed {
		so.closed = true
		so.err = stopErr
	} else {
		so = nil
	}
	ck.mu.Unlock()
	if so != nil {
		close(so.done)
	}
}

// handleMail does what the mailbox holds, on the subtask's goroutine.
func (s *subtask) handleMail() error {
	for _, m := range s.ck.mail.take() {
		switch {
		case m.barrier != nil:
			if err := s.takeCheckpoint(m.barrier, 0); err != nil {
				return err
			}
		case m.complete != 0:
			if err := s.notifyListeners(m.complete, true); err != nil {
				return err
			}
			s.ck.completed = max(s.ck.completed, m.complete)
		case m.aborted != 0:
			_ = s.notifyListeners(m.aborted, false)
		}
	}
	return nil
}

func (s *subtask) notifyListeners(id checkpoint.ID, complete bool) error {
	for _, co := range s.ops {
		if ks, ok := co.store.(*KeyedStore); ok {
			if complete {
				ks.CheckpointComplete(id)
			} else {
				ks.CheckpointAborted(id)
			}
		}
		var l CheckpointListener
		if co.op != nil {
			l, _ = co.op.(CheckpointListener)
		} else {
			l, _ = s.source.(CheckpointListener)
		}
		if l == nil {
			continue
		}
		if !complete {
			l.NotifyCheckpointAborted(id)
			continue
		}
		if err := l.NotifyCheckpointComplete(id); err != nil {
			return co.fail(fmt.Errorf("completing checkpoint %d: %w", id, err))
		}
	}
	return nil
}

// takeCheckpoint takes checkpoint b at this subtask once its barrier has
// come on every input (alignment is how long that took): it snapshots the
// chain's operators head to tail, sends what is pending and then the
// barrier on every output channel, and acknowledges. A snapshot that
// fails declines the checkpoint, and a cancel marker goes downstream in
// place of the barrier. A subtask that failed takes none.
func (s *subtask) takeCheckpoint(b *barrier, alignment time.Duration) error {
	ck := s.ck
	if b.id <= ck.handled || s.err != nil || s.e.failed() {
		return nil
	}
	ck.handled = b.id
	start := time.Now()
	states, err := s.snapshotChain(b.id, b.kind == checkpoint.KindCheckpoint)
	if err != nil {
		s.e.ckpt.acks.Decline(s.checkpointTask(), b.id, checkpoint.ReasonDeclined, err)
		return s.forward(message{kind: msgCancel, bar: b})
	}
	if err := s.forward(message{kind: msgBarrier, bar: b}); err != nil {
		return err
	}
	if s.gate != nil && s.e.ckpt.unaligned {
		// every subtask of the task has a channel state entry in every
		// checkpoint, so that each is complete (here: none in flight)
		states = append(states, s.channelState(nil))
	}
	s.e.ckpt.acks.Acknowledge(s.checkpointTask(), b.id, states, checkpoint.TaskMetrics{Alignment: alignment, Sync: time.Since(start)})
	if b.stop {
		ck.stopID = b.id
		ck.stopped = s.source != nil
	}
	return nil
}

// abortCheckpoint declines checkpoint id (its alignment here was aborted)
// and sends a cancel marker downstream, as Flink's tasks do.
func (s *subtask) abortCheckpoint(a abortedCheckpoint) error {
	if t := s.ck.taking; t != nil && t.b.id == a.id {
		// taken unaligned, its barrier forwarded: the in-flight data will
		// not be acknowledged
		s.ck.taking = nil
		if s.err != nil || s.e.failed() {
			return nil
		}
		s.e.ckpt.acks.Decline(s.checkpointTask(), a.id, a.reason, nil)
		return s.forward(message{kind: msgCancel, bar: &barrier{id: a.id}})
	}
	if a.id <= s.ck.handled || s.err != nil || s.e.failed() {
		return nil
	}
	s.ck.handled = a.id
	s.e.ckpt.acks.Decline(s.checkpointTask(), a.id, a.reason, nil)
	return s.forward(message{kind: msgCancel, bar: &barrier{id: a.id}})
}

// forward sends what is pending on every output channel, then m: a
// barrier or a cancel marker goes after every record emitted before it.
func (s *subtask) forward(m message) error {
	for _, o := range s.outs {
		if err := o.sendControl(m); err != nil {
			return err
		}
	}
	return nil
}

// snapshotChain snapshots every operator of the chain that keeps state,
// head to tail; keyed state incrementally when incremental and the backend
// can (a checkpoint, not a savepoint or a finished task's final state):
// the heap's changed key groups, a NativeCheckpointer's own format.
func (s *subtask) snapshotChain(id checkpoint.ID, incremental bool) ([]checkpoint.SubtaskState, error) {
	var states []checkpoint.SubtaskState
	for _, co := range s.ops {
		st, has, err := s.snapshotOp(co, id, incremental)
		if err != nil {
			// an OpError, so that a job failure it causes (tolerable-failures
			// exceeded) still names the operator and subtask to errors.As
			return nil, &OpError{Operator: co.spec.ID, Subtask: s.index, Parallelism: co.spec.Parallelism,
				Err: fmt.Errorf("snapshot for checkpoint %d: %w", id, err)}
		}
		if has {
			states = append(states, st)
		}
	}
	return states, nil
}

func (s *subtask) snapshotOp(co *chainOp, id checkpoint.ID, incremental bool) (st checkpoint.SubtaskState, has bool, err error) {
	if co.op == nil {
		if cs, ok := s.source.(CheckpointedSource); ok {
			has = true
			if st.Split, st.Union, err = cs.SnapshotState(id); err != nil {
				return st, has, err
			}
		}
	} else if sn, ok := co.op.(Snapshotter); ok {
		st, err = sn.SnapshotState(id)
		switch {
		case errors.Is(err, ErrNoOperatorState):
			st, err = checkpoint.SubtaskState{}, nil
		case err != nil:
			return st, true, err
		default:
			has = true
		}
	}
	if co.store != nil {
		co.measureState(true)
	}
	if nc, ok := co.store.(NativeCheckpointer); ok && incremental {
		has = true
		st.Native, err = nc.NativeCheckpoint(id)
		switch {
		case errors.Is(err, errNotNative): // a wrapped backend without: canonical
			st.Native, err = nil, nil
		case err != nil:
			return st, true, fmt.Errorf("keyed state: %w", err)
		}
	}
	if ks, ok := co.store.(*KeyedStore); ok && incremental {
		has = true
		st.FirstKeyGroup, st.KeyGroups, st.Changes, st.Base = ks.SnapshotCheckpoint(id)
	} else if co.store != nil && st.Native == nil {
		has = true
		if st.FirstKeyGroup, st.KeyGroups, err = co.store.Snapshot(); err != nil {
			return st, true, fmt.Errorf("keyed state: %w", err)
		}
	}
	st.Operator, st.Subtask = co.spec.ID, s.index
	st.Parallelism, st.MaxParallelism = co.spec.Parallelism, co.spec.MaxParallelism
	return st, has, nil
}

// restoreOp fills co's keyed state from the checkpoint the job starts
// from, before co opens, and returns the rest for restoreState.
func (s *subtask) restoreOp(co *chainOp) (checkpoint.Restore, error) {
	spec := co.spec
	r, err := s.e.deps.Restore.Restore(spec.ID, s.index, spec.Parallelism, spec.MaxParallelism)
	if err != nil {
		return r, err
	}
	for kg, deltas := range r.Deltas { // an incremental checkpoint's chains
		b, err := MergeKeyGroupChain(r.KeyGroups[kg], deltas)
		if err != nil {
			return r, fmt.Errorf("restoring keyed state of key group %d from its chain of %d deltas: %w", kg, len(deltas), err)
		}
		if r.KeyGroups == nil {
			r.KeyGroups = map[int][]byte{}
		}
		r.KeyGroups[kg] = b
	}
	if len(r.Native) > 0 {
		nc, ok := co.store.(NativeCheckpointer)
		if !ok {
			return r, fmt.Errorf("the checkpoint holds the keyed state of %q in the %s backend's own format, and its state backend is %s now: restore it on that backend, or take a savepoint there (savepoints are canonical, any backend restores them)",
				spec.ID, r.Native[0].Format, backendName(spec))
		}
		if err := nc.RestoreNative(r.Native, r.KeyGroups); err != nil {
			return r, err
		}
	} else if len(r.KeyGroups) > 0 {
		if co.store == nil {
			return r, fmt.Errorf("the checkpoint holds keyed state for %q, which is not keyed now", spec.ID)
		}
		if err := co.store.RestoreKeyGroups(r.KeyGroups); err != nil {
			return r, err
		}
	}
	return r, nil
}

func backendName(spec *plan.Operator) string {
	if !spec.Keyed && (spec.Spec == nil || spec.Spec.Window == nil) {
		return "none (the operator is not keyed)"
	}
	if spec.State.Backend == "" {
		return "heap"
	}
	return spec.State.Backend
}

// restoreState hands co, open now, its operator state.
func (s *subtask) restoreState(co *chainOp, r checkpoint.Restore) error {
	if len(r.Split)+len(r.Union)+len(r.Committables) == 0 {
		return nil
	}
	if co.op == nil {
		if cs, ok := s.source.(CheckpointedSource); ok && len(r.Committables) == 0 {
			return cs.RestoreState(r)
		}
	} else if sn, ok := co.op.(Snapshotter); ok {
		return sn.RestoreState(r)
	}
	return fmt.Errorf("the checkpoint holds operator state for %q (%d split, %d union elements, %d committables), which keeps none now",
		co.spec.ID, len(r.Split), len(r.Union), len(r.Committables))
}

// chainCommits reports whether an operator of the chain (or its source)
// acts on completed checkpoints: it has to hear of one holding its final
// state before it closes.
func (s *subtask) chainCommits() bool {
	if _, ok := s.source.(CheckpointListener); ok && s.source != nil {
		return true
	}
	for _, co := range s.ops {
		if _, ok := co.op.(CheckpointListener); ok && co.op != nil {
			return true
		}
	}
	return false
}

// awaitFinalCheckpoint waits, doing the subtask's mail, until checkpoint
// first or a later one (they hold the final state) completed and the
// chain's listeners heard of it: then a two-phase-commit sink has
// committed everything, inside a checkpoint, and closing it commits
// nothing more.
func (s *subtask) awaitFinalCheckpoint(first checkpoint.ID) error {
	ck, cp := s.ck, s.e.ckpt
	defer func() {
		cp.mu.Lock()
		ck.committing = false
		cp.mu.Unlock()
	}()
	for {
		if err := s.handleMail(); err != nil {
			return err
		}
		if ck.completed >= first {
			return nil
		}
		select {
		case <-ck.mail.signal:
		case <-s.e.ctx.Done():
			return errStopped
		case <-s.e.srcCtx.Done(): // cancelled: no checkpoint will come
			return errStopped
		}
	}
}

// checkpointEnd is a subtask's last checkpoint work once its input ended
// cleanly: it snapshots its chain one last time and acknowledges with that
// every checkpoint triggered whose barrier never reached it (its upstream
// ended first: the state after the whole input is that checkpoint's), and
// every later one (Flink's finished tasks). After a stop-with-savepoint it
// waits for the savepoint's outcome, doing its mail meanwhile.
func (s *subtask) checkpointEnd() error {
	ck, cp := s.ck, s.e.ckpt
	cp.mu.Lock()
	last := cp.last
	cp.mu.Unlock()
	// full: the final state acknowledges every later checkpoint, whatever
	// the checkpoints before it became
	states, err := s.snapshotChain(max(last, ck.handled), false)
	if err != nil {
		return s.ops[0].fail(err) // no later checkpoint could complete without this task
	}
	if cp.unaligned && s.gate != nil {
		states = append(states, s.channelState(nil)) // nothing is in flight to an ended task
	}
	var acks []checkpoint.ID
	cp.mu.Lock()
	firstFinal := ck.handled + 1 // every checkpoint from here on holds the final state
	ck.finished, ck.final = true, states
	ck.committing = s.e.opts.FinalCheckpoint && s.chainCommits()
	for _, b := range cp.triggered {
		if b.id > ck.handled {
			acks = append(acks, b.id)
		}
	}
	ck.handled = max(ck.handled, cp.last)
	so := cp.stops[ck.stopID]
	ck.awaiting = so != nil
	cp.mu.Unlock()
	committing := ck.committing
	for _, id := range acks { // unlocked: the callee may call back
		cp.acks.Acknowledge(s.checkpointTask(), id, states, checkpoint.TaskMetrics{})
	}
	if so == nil && committing {
		return s.awaitFinalCheckpoint(firstFinal)
	}
	if so == nil {
		return nil
	}
	for {
		select {
		case <-so.done:
			if err := s.handleMail(); err != nil { // the notification came before done closed
				return err
			}
			if so.err != nil {
				s.e.fail(so.err)
				return errStopped
			}
			return nil
		case <-ck.mail.signal:
			if err := s.handleMail(); err != nil {
				return err
			}
		case <-s.e.ctx.Done():
			return errStopped
		}
	}
}
