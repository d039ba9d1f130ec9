// Package jobmaster runs one job with checkpoints, as Flink's JobMaster
// does for a job: it drives the checkpoint coordinator (host/checkpoint)
// from one loop, writes the state the tasks acknowledge with into the
// checkpoint storage, publishes each checkpoint's metadata, keeps the
// retained number, tells the engine what completed or was aborted, takes
// savepoints, and on a failure restarts the job from its latest completed
// checkpoint as its restart strategy (host/restart) says.
//
// The engine is reached through Execution and Starter, which
// *runtime.Execution and runtime.Start satisfy, so the package is tested
// with a fake engine.
package jobmaster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/restartstrategy"
	"github.com/sluicehq/sluice/host/runtime"
)

// Execution is one run of the job in the engine (*runtime.Execution).
type Execution interface {
	// Tasks are the tasks that acknowledge each checkpoint.
	Tasks() []checkpoint.Task
	TriggerCheckpoint(id checkpoint.ID, kind checkpoint.Kind, ts time.Time, stop bool) error
	NotifyCheckpointComplete(id checkpoint.ID)
	NotifyCheckpointAborted(id checkpoint.ID)
	Wait() (*runtime.Result, error)
	Done() <-chan struct{}
	Cancel()
}

// Acks is what the engine tells the job master (runtime.CheckpointAcks),
// from its goroutines. The job master's never blocks.
type Acks interface {
	Acknowledge(task checkpoint.Task, id checkpoint.ID, states []checkpoint.SubtaskState, m checkpoint.TaskMetrics)
	Decline(task checkpoint.Task, id checkpoint.ID, reason checkpoint.FailureReason, cause error)
}

// Starter starts one execution of the job, with acks as the engine's
// runtime.Deps.Checkpoints and, unless restore is nil (a fresh start),
// restore as its runtime.Deps.Restore.
type Starter func(ctx context.Context, acks Acks, restore *checkpoint.Reader) (Execution, error)

// Config is how one job runs.
type Config struct {
	// Job names the job's folder under Checkpoint.Storage.
	Job        string
	Checkpoint checkpoint.Config
	Restart    restartstrategy.Config
	// From is what the first execution restores from (host run --from),
	// nil for a fresh start. A restart with no completed checkpoint of
	// its own restores from it again.
	From *checkpoint.Reader
	Log  *slog.Logger // nil: no logs

	// Now, Tick, After and Rand stand in for the clock and randomness in
	// tests. Now defaults to time.Now; Tick (each value the time of its
	// tick) to a 10ms ticker; After to time.After; Rand to math/rand/v2
	// (the restart jitter).
	Now   func() time.Time
	Tick  <-chan time.Time
	After func(time.Duration) <-chan time.Time
	Rand  func(n int64) int64
	// Observe, when set, is called from the job master's loop with each
	// event it handled.
	Observe func(Event)
}

// EventKind says what happened.
type EventKind uint8

const (
	Completed  EventKind = iota + 1 // a checkpoint or savepoint completed (Path)
	Aborted                         // a checkpoint or savepoint was aborted (Err)
	Failed                          // the execution failed (Err)
	Started                         // an execution started, the first or a restart (Path: what it restored from, "" fresh)
	Restarting                      // the restart strategy restarts the job after the failure Err
)

// Event is one thing the job master did.
type Event struct {
	Kind EventKind
	ID   checkpoint.ID
	Path string
	Err  error
}

// Result is how the job ended.
type Result struct {
	Last      *runtime.Result // the last execution's figures
	Stats     checkpoint.Stats
	Restarts  int
	Savepoint string // the stop-with-savepoint's folder, when the job stopped with one
}

// Master runs one job.
type Master struct {
	cfg     Config
	start   Starter
	backoff *restartstrategy.Backoff
	jobDir  string
	acks    *ackQueue
	reqs    chan savepointReq

	mu    sync.Mutex
	stats checkpoint.Stats // the latest, for Stats
}

// Stats returns the job's checkpoint statistics as of the loop's latest
// step; safe to call from any goroutine while Run runs.
func (m *Master) Stats() checkpoint.Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

func (m *Master) publish(s checkpoint.Stats) {
	m.mu.Lock()
	m.stats = s
	m.mu.Unlock()
}

// New checks the configuration.
func New(cfg Config, start Starter) (*Master, error) {
	if err := cfg.Checkpoint.Validate(); err != nil {
		return nil, err
	}
	if cfg.Checkpoint.Interval > 0 && cfg.Checkpoint.Storage == "" {
		return nil, errors.New("checkpointing: storage is not set: set checkpointing: storage: in the pipeline, or the checkpoint-storage setting")
	}
	b, err := restartstrategy.New(cfg.Restart, cfg.Rand)
	if err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := &Master{cfg: cfg, start: start, backoff: b, acks: newAckQueue(), reqs: make(chan savepointReq)}
	if cfg.Checkpoint.Storage != "" {
		m.jobDir = checkpoint.JobDir(cfg.Checkpoint.Storage, cfg.Job)
	}
	return m, nil
}

// savepointReq is a savepoint asked for by TriggerSavepoint.
type savepointReq struct {
	dir       string
	stop      bool
	triggered chan checkpoint.ID // the savepoint's id, once triggered
	reply     chan savepointReply
}

// Savepoint is a savepoint triggered and not yet known to be complete.
type Savepoint struct {
	ID    checkpoint.ID
	reply chan savepointReply
}

// Wait returns the savepoint's folder once it is complete, or why it
// failed.
func (s *Savepoint) Wait(ctx context.Context) (string, error) {
	select {
	case r := <-s.reply:
		return r.path, r.err
	case <-ctx.Done():
		select { // an answer that came with the end wins
		case r := <-s.reply:
			return r.path, r.err
		default:
			return "", ctx.Err()
		}
	}
}

type savepointReply struct {
	path string
	err  error
}

// TriggerSavepoint takes a savepoint into a new folder under dir and
// returns its path once it is complete; with stop the job then finishes
// (stop-with-savepoint) and Run returns.
func (m *Master) TriggerSavepoint(ctx context.Context, dir string, stop bool) (string, error) {
	sp, err := m.RequestSavepoint(ctx, dir, stop)
	if err != nil {
		return "", err
	}
	return sp.Wait(ctx)
}

// RequestSavepoint triggers a savepoint into a new folder under dir and
// returns once it is triggered (its id known) or refused; Savepoint.Wait
// waits for it to complete. With stop the job then finishes
// (stop-with-savepoint) and Run returns.
func (m *Master) RequestSavepoint(ctx context.Context, dir string, stop bool) (*Savepoint, error) {
	if dir == "" {
		return nil, errors.New("savepoint: no target folder")
	}
	req := savepointReq{dir: dir, stop: stop, triggered: make(chan checkpoint.ID, 1), reply: make(chan savepointReply, 1)}
	select {
	case m.reqs <- req:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case id := <-req.triggered:
		return &Savepoint{ID: id, reply: req.reply}, nil
	case r := <-req.reply: // refused before it was triggered
		return nil, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Run runs the job until it finishes, fails for good or ctx is
// cancelled.
func (m *Master) Run(ctx context.Context) (*Result, error) {
	tick := m.cfg.Tick
	if tick == nil {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	c := &core{m: m, writers: map[checkpoint.ID]*checkpoint.Writer{}, savepoints: map[checkpoint.ID]savepointReq{}}
	res := &Result{}
	restore := m.cfg.From
	for attempt := 0; ; attempt++ {
		exec, err := m.start(ctx, m.acks, restore)
		if err == nil {
			err = c.attach(exec, restore)
		}
		if err != nil && (attempt == 0 || ctx.Err() != nil) {
			return res, err
		}
		if err == nil {
			m.observe(Event{Kind: Started, Path: pathOf(restore)})
			var out outcome
			out, res.Last, err = c.supervise(ctx, exec, tick)
			res.Stats = c.coord.Stats()
			m.publish(res.Stats)
			switch out {
			case finished:
				res.Savepoint = c.stopped
				return res, nil
			case cancelled:
				return res, err
			}
		}
		// the execution failed (or could not start): the strategy decides
		now := m.cfg.Now()
		m.observe(Event{Kind: Failed, Err: err})
		d := m.backoff.Failure(now)
		if !d.Restart {
			return res, fmt.Errorf("%w (restart strategy %s: no restart left)", err, m.cfg.Restart.Strategy)
		}
		m.cfg.Log.Warn("job failed; restarting", "job", m.cfg.Job, "in", d.Delay, "err", err)
		m.observe(Event{Kind: Restarting, Err: err})
		if err := m.wait(ctx, d.Delay); err != nil {
			return res, err
		}
		res.Restarts++
		restore = m.latest()
	}
}

func pathOf(r *checkpoint.Reader) string {
	if r == nil {
		return ""
	}
	return r.Path
}

// wait lets the restart delay pass, refusing savepoints meanwhile.
func (m *Master) wait(ctx context.Context, d time.Duration) error {
	after := m.cfg.After(d)
	for {
		select {
		case <-after:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case req := <-m.reqs:
			req.reply <- savepointReply{err: errors.New("savepoint: the job is restarting after a failure")}
		}
	}
}

// latest is what a restart restores from: the newest whole checkpoint in
// the job's folder, passing over (and logging) newer broken ones; else
// what the job was started from; else nothing.
func (m *Master) latest() *checkpoint.Reader {
	if m.jobDir != "" {
		r, skipped, err := checkpoint.Latest(m.jobDir)
		for _, s := range skipped {
			m.cfg.Log.Warn("skipping a checkpoint that cannot be restored", "path", s.Path, "err", s.Err)
		}
		if err == nil {
			return r
		}
		m.cfg.Log.Info("no completed checkpoint to restart from", "err", err)
	}
	return m.cfg.From
}

func (m *Master) observe(e Event) {
	if m.cfg.Observe != nil {
		m.cfg.Observe(e)
	}
}

// ackQueue hands the engine's acknowledgements to the loop without ever
// blocking the engine (it calls Acknowledge under its own locks, even
// from TriggerCheckpoint).
type ackQueue struct {
	mu     sync.Mutex
	events []ackEvent
	signal chan struct{} // holds one token while events is not empty
}

type ackEvent struct {
	task    checkpoint.Task
	id      checkpoint.ID
	states  []checkpoint.SubtaskState
	metrics checkpoint.TaskMetrics
	decline bool
	reason  checkpoint.FailureReason
	cause   error
}

func newAckQueue() *ackQueue { return &ackQueue{signal: make(chan struct{}, 1)} }

func (q *ackQueue) push(e ackEvent) {
	q.mu.Lock()
	q.events = append(q.events, e)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *ackQueue) drain() []ackEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	e := q.events
	q.events = nil
	return e
}

func (q *ackQueue) Acknowledge(task checkpoint.Task, id checkpoint.ID, states []checkpoint.SubtaskState, m checkpoint.TaskMetrics) {
	q.push(ackEvent{task: task, id: id, states: states, metrics: m})
}

func (q *ackQueue) Decline(task checkpoint.Task, id checkpoint.ID, reason checkpoint.FailureReason, cause error) {
	q.push(ackEvent{task: task, id: id, decline: true, reason: reason, cause: cause})
}

var _ Acks = (*ackQueue)(nil)

// outcome is how one execution ended.
type outcome uint8

const (
	finished outcome = iota
	failed
	cancelled
)

// core is the job master's state between events: the coordinator, the
// writer of each checkpoint in progress, the savepoints asked for. Its
// methods handle one event each and run on the loop's goroutine only.
type core struct {
	m          *Master
	coord      *checkpoint.Coordinator
	tasks      []checkpoint.Task
	exec       Execution
	writers    map[checkpoint.ID]*checkpoint.Writer
	savepoints map[checkpoint.ID]savepointReq
	restored   checkpoint.ID
	jobErr     error  // a FailJob's, for the execution it cancelled
	stopped    string // the completed stop-with-savepoint's folder
}

// attach makes exec the current execution: a coordinator for its tasks
// (the same one again after a restart, so IDs and statistics go on).
func (c *core) attach(exec Execution, restore *checkpoint.Reader) error {
	tasks := exec.Tasks()
	c.exec, c.jobErr = exec, nil
	if restore != nil {
		c.restored = restore.Meta.ID
	}
	if c.coord == nil || !slices.Equal(tasks, c.tasks) {
		next := checkpoint.ID(1)
		if c.coord != nil {
			next = c.coord.NextID()
		}
		if c.m.jobDir != "" {
			n, err := checkpoint.NextID(c.m.jobDir)
			if err != nil {
				exec.Cancel()
				<-exec.Done()
				return err
			}
			next = max(next, n)
		}
		if restore != nil {
			next = max(next, restore.Meta.ID+1)
		}
		coord, err := checkpoint.NewCoordinator(c.m.cfg.Checkpoint, tasks, checkpoint.Options{NextID: next, Restored: c.restored})
		if err != nil {
			exec.Cancel()
			<-exec.Done()
			return err
		}
		c.coord, c.tasks = coord, tasks
	}
	c.coord.Start(c.m.cfg.Now())
	return nil
}

// supervise runs the loop of one execution.
func (c *core) supervise(ctx context.Context, exec Execution, tick <-chan time.Time) (outcome, *runtime.Result, error) {
	m := c.m
	for {
		m.publish(c.coord.Stats())
		select {
		case <-ctx.Done():
			exec.Cancel()
			res, _ := exec.Wait()
			c.end(m.cfg.Now(), errors.New("the job was cancelled"))
			return cancelled, res, ctx.Err()
		case now := <-tick: // the time it ticked
			c.perform(now, c.coord.Tick(now))
		case <-m.acks.signal:
			c.handleAcks()
		case req := <-m.reqs:
			now := m.cfg.Now()
			id, actions, err := c.coord.TriggerSavepoint(now, req.stop)
			if err != nil {
				req.reply <- savepointReply{err: err}
				continue
			}
			c.savepoints[id] = req
			req.triggered <- id // buffered: never blocks
			c.perform(now, actions)
		case <-exec.Done():
			res, err := exec.Wait()
			c.handleAcks() // what came before the end (a last savepoint's acks)
			now := m.cfg.Now()
			if err == nil && c.jobErr == nil {
				c.perform(now, c.coord.Finished(now))
				c.end(now, errors.New("the job finished"))
				return finished, res, nil
			}
			if c.jobErr != nil {
				err = c.jobErr
			}
			c.perform(now, c.coord.TaskFailed(now, checkpoint.Task{Vertex: m.cfg.Job}, err))
			c.endSavepoints(fmt.Errorf("savepoint: the job failed: %w", err))
			return failed, res, err
		}
	}
}

// end aborts what is still pending and answers the savepoints asked for.
func (c *core) end(now time.Time, why error) {
	c.perform(now, c.coord.Shutdown(now))
	c.endSavepoints(fmt.Errorf("savepoint: %w", why))
}

func (c *core) endSavepoints(err error) {
	for id, req := range c.savepoints {
		req.reply <- savepointReply{err: err}
		delete(c.savepoints, id)
	}
}

// handleAcks writes the acknowledged states (on this goroutine, not the
// engine's) and tells the coordinator.
func (c *core) handleAcks() {
	for _, e := range c.m.acks.drain() {
		now := c.m.cfg.Now()
		if e.decline {
			c.perform(now, c.coord.Decline(now, checkpoint.Decline{Task: e.task, ID: e.id, Reason: e.reason, Cause: e.cause}))
			continue
		}
		w := c.writers[e.id]
		if w == nil {
			continue // aborted, finished or never triggered: the coordinator ignores it too
		}
		files := make([]checkpoint.SubtaskFile, 0, len(e.states))
		var werr error
		for _, st := range e.states {
			f, err := w.Write(st)
			if err != nil {
				werr = err
				break
			}
			files = append(files, f)
		}
		after := c.m.cfg.Now()
		if werr != nil {
			c.perform(after, c.coord.Decline(after, checkpoint.Decline{Task: e.task, ID: e.id, Reason: checkpoint.ReasonAsyncFailure, Cause: werr}))
			continue
		}
		e.metrics.Async += after.Sub(now)
		c.perform(after, c.coord.Ack(after, checkpoint.Ack{Task: e.task, ID: e.id, Files: files, Metrics: e.metrics}))
	}
}

// perform does what the coordinator asks, in order; the inputs it makes
// (a write's success or failure) are performed in turn.
func (c *core) perform(now time.Time, actions []checkpoint.Action) {
	m := c.m
	for _, a := range actions {
		switch a := a.(type) {
		case checkpoint.Inject:
			var w *checkpoint.Writer
			var err error
			reason := checkpoint.ReasonIO
			if a.Kind == checkpoint.KindSavepoint {
				w, err = checkpoint.CreateSavepoint(c.savepoints[a.ID].dir, m.cfg.Job, a.ID)
			} else {
				w, err = checkpoint.CreateCheckpoint(m.cfg.Checkpoint.Storage, m.cfg.Job, a.ID)
			}
			if err == nil {
				c.writers[a.ID] = w
				if err = c.exec.TriggerCheckpoint(a.ID, a.Kind, a.Timestamp, a.Stop); err != nil {
					reason = checkpoint.ReasonDeclinedTaskNotReady
				}
			}
			if err != nil {
				c.perform(now, c.coord.Decline(now, checkpoint.Decline{Task: c.tasks[0], ID: a.ID, Reason: reason, Cause: err}))
			}
		case checkpoint.WriteMetadata:
			w := c.writers[a.ID]
			if err := w.Publish(a.Timestamp, a.Files); err != nil {
				c.perform(now, c.coord.MetadataFailed(now, a.ID, err))
				continue
			}
			delete(c.writers, a.ID)
			m.cfg.Log.Info("checkpoint completed", "kind", a.Kind, "id", a.ID, "path", w.Dir())
			if req, ok := c.savepoints[a.ID]; ok {
				delete(c.savepoints, a.ID)
				req.reply <- savepointReply{path: w.Dir()}
				if req.stop {
					c.stopped = w.Dir()
				}
			}
			c.perform(now, c.coord.MetadataWritten(now, a.ID))
			m.observe(Event{Kind: Completed, ID: a.ID, Path: w.Dir()}) // after the notification and the retain
		case checkpoint.NotifyComplete:
			c.exec.NotifyCheckpointComplete(a.ID)
			if m.jobDir != "" && a.Kind == checkpoint.KindCheckpoint {
				removed, err := checkpoint.Retain(m.jobDir, m.cfg.Checkpoint.Retain, append(c.coord.Pending(), c.restored)...)
				if err != nil {
					m.cfg.Log.Warn("removing old checkpoints", "err", err)
				}
				for _, r := range removed {
					m.cfg.Log.Debug("removed an old checkpoint", "path", r)
				}
			}
		case checkpoint.NotifyAbort:
			c.exec.NotifyCheckpointAborted(a.ID)
			err := fmt.Errorf("%s %d aborted: %s", a.Kind, a.ID, a.Reason)
			if a.Cause != "" {
				err = fmt.Errorf("%w: %s", err, a.Cause)
			}
			if w := c.writers[a.ID]; w != nil {
				delete(c.writers, a.ID)
				if derr := w.Discard(); derr != nil {
					m.cfg.Log.Warn("discarding an aborted checkpoint", "err", derr)
				}
			}
			if req, ok := c.savepoints[a.ID]; ok {
				delete(c.savepoints, a.ID)
				req.reply <- savepointReply{err: err}
			}
			m.cfg.Log.Warn("checkpoint aborted", "id", a.ID, "err", err)
			m.observe(Event{Kind: Aborted, ID: a.ID, Err: err})
		case checkpoint.FailJob:
			c.jobErr = a.Err
			c.exec.Cancel()
		}
	}
}
