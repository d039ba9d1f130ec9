package server

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"sync"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/jobmaster"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/restartstrategy"
	"github.com/sluicehq/sluice/host/runtime"
)

// running is a job's execution as the server watches it: the engine's
// own (*runtime.Execution) or, for a job with checkpointing, the job
// master's run of it (*mastered), across its restarts.
type running interface {
	Snapshot() *runtime.Result
	Done() <-chan struct{}
	Wait() (*runtime.Result, error)
	Cancel()
}

// faultTolerance is how a tenant's job checkpoints and restarts: its
// pipeline's checkpointing: and restart-strategy: over the host's
// settings, with the storage confined to the tenant's folder.
type faultTolerance struct {
	checkpoint checkpoint.Config
	restart    restartstrategy.Config
	savepoints string // the folder the job's savepoints go under
}

// tenantCheckpointDir is the folder of a tenant's checkpoints and
// savepoints: <checkpoint-storage>/<tenant>.
func (s *Server) tenantCheckpointDir(t *tenant) string {
	return filepath.Join(s.cfg.Host.CheckpointStorage, t.cfg.Name)
}

// faultTolerance resolves a tenant pipeline's checkpointing; ok is false
// when the job takes no checkpoints. A storage the pipeline writes must be
// a relative folder, taken under the tenant's: a tenant writes nowhere
// else.
func (s *Server) faultTolerance(t *tenant, p *pipeline.Pipeline) (ft faultTolerance, ok bool, err error) {
	c := p.Checkpointing.Apply(s.cfg.Host.CheckpointConfig())
	if c.Interval <= 0 {
		return faultTolerance{}, false, nil
	}
	where := "checkpointing"
	if p.Checkpointing != nil {
		where = fmt.Sprintf("checkpointing at line %d", p.Checkpointing.Pos.Line)
	}
	if s.cfg.Host.CheckpointStorage == "" {
		return ft, false, errorf(Invalid, where, "this server keeps no checkpoints (its checkpoint-storage setting is not set): remove checkpointing: interval, or ask the operator to set checkpoint-storage")
	}
	dir := s.tenantCheckpointDir(t)
	storage := dir
	if p.Checkpointing != nil {
		if _, written := p.Checkpointing.KeyPos["storage"]; written {
			st := p.Checkpointing.Storage
			if !filepath.IsLocal(st) {
				return ft, false, errorf(Invalid, where, "storage %q is outside the tenant's checkpoint folder: on the server, storage is a relative folder (no .., not absolute) under it, or left out", st)
			}
			storage = filepath.Join(dir, st)
		}
	}
	c.Storage = storage
	if err := c.Validate(); err != nil {
		return ft, false, errorf(Invalid, where, "%v", err)
	}
	r := pipeline.RestartConfig(p.RestartStrategy, s.cfg.Host.RestartStrategy, true)
	return faultTolerance{checkpoint: c, restart: r, savepoints: filepath.Join(dir, "savepoints")}, true, nil
}

// mastered is a checkpointed job run by its job master.
type mastered struct {
	m         *jobmaster.Master
	cancel    context.CancelFunc
	done      chan struct{}
	savepoint string // the savepoints' folder

	mu    sync.Mutex
	cur   *runtime.Execution // the latest execution
	res   *jobmaster.Result
	err   error
	paths map[checkpoint.ID]string // the folders of the completed checkpoints in the statistics' history
}

// completed records a completed checkpoint's folder, and forgets those
// older than the statistics keep.
func (r *mastered) completed(id checkpoint.ID, path string) {
	keep := map[checkpoint.ID]bool{id: true}
	for _, h := range r.m.Stats().History {
		keep[h.ID] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths[id] = path
	maps.DeleteFunc(r.paths, func(id checkpoint.ID, _ string) bool { return !keep[id] })
}

func (r *mastered) checkpointPaths() map[checkpoint.ID]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.paths)
}

// checkpointPaths are the folders of the job's completed checkpoints
// still in its statistics.
func (j *Job) checkpointPaths() map[checkpoint.ID]string {
	j.mu.Lock()
	m, final := j.master, j.ckPaths
	j.mu.Unlock()
	if m != nil {
		return m.checkpointPaths()
	}
	return final
}

// startMastered starts the job master on ctx and returns once its first
// execution started, or with why it could not. The job's checkpoints go
// to <storage>/<job id>/chk-<n>, as Flink's: two jobs of a tenant with one
// name keep apart.
//
// The first execution restores from from unless it is nil; onRestart is
// called with each failure the job master restarts the job after.
func startMastered(ctx context.Context, jobID string, g *plan.JobGraph, ft faultTolerance, deps runtime.Deps, from *checkpoint.Reader, onRestart func(error)) (*mastered, error) {
	mctx, cancel := context.WithCancel(ctx)
	r := &mastered{cancel: cancel, done: make(chan struct{}), savepoint: ft.savepoints, paths: map[checkpoint.ID]string{}}
	first := make(chan error, 1)
	var once sync.Once
	start := func(ctx context.Context, acks jobmaster.Acks, restore *checkpoint.Reader) (jobmaster.Execution, error) {
		exec, err := jobmaster.StartEngine(ctx, g, deps, acks, restore, ft.checkpoint)
		if err == nil {
			r.mu.Lock()
			r.cur = exec
			r.mu.Unlock()
		}
		// after cur is set: the caller's watch reads it at once
		once.Do(func() { first <- err })
		if err != nil {
			return nil, err
		}
		return exec, nil
	}
	m, err := jobmaster.New(jobmaster.Config{Job: jobID, Checkpoint: ft.checkpoint, Restart: ft.restart, From: from, Log: deps.Logger,
		Observe: func(e jobmaster.Event) {
			switch e.Kind {
			case jobmaster.Completed:
				r.completed(e.ID, e.Path)
			case jobmaster.Restarting:
				if onRestart != nil {
					onRestart(e.Err)
				}
			}
		}}, start)
	if err != nil {
		cancel()
		return nil, err
	}
	r.m = m
	go func() {
		res, err := m.Run(mctx)
		r.mu.Lock()
		r.res, r.err = res, err
		r.mu.Unlock()
		close(r.done)
	}()
	if err := <-first; err != nil {
		<-r.done
		cancel()
		return nil, err
	}
	return r, nil
}

func (r *mastered) Snapshot() *runtime.Result {
	r.mu.Lock()
	cur := r.cur
	r.mu.Unlock()
	return cur.Snapshot()
}

func (r *mastered) Done() <-chan struct{} { return r.done }

func (r *mastered) Cancel() { r.cancel() }

// Wait returns the last execution's figures and how the job ended.
func (r *mastered) Wait() (*runtime.Result, error) {
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cancel()
	if r.res != nil && r.res.Last != nil {
		return r.res.Last, r.err
	}
	return r.cur.Snapshot(), r.err
}

// request triggers a savepoint into the job's savepoint folder; ctx is
// also ended when the job master ends, which then takes no request.
func (r *mastered) request(ctx context.Context, stop bool) (*jobmaster.Savepoint, error) {
	ctx, cancel := r.untilDone(ctx)
	defer cancel()
	return r.m.RequestSavepoint(ctx, r.savepoint, stop)
}

// untilDone is ctx, also cancelled when the job master ends.
func (r *mastered) untilDone(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-r.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// Checkpoints is what GET /v1/jobs/{id}/checkpoints shows: Flink's
// checkpoint statistics (GET /jobs/:jobid/checkpoints), simplified.
// Savepoints count as checkpoints, as in Flink.
type Checkpoints struct {
	Job   string `json:"job"`
	State string `json:"state"`
	// Checkpointing says whether the job checkpoints (its pipeline's or
	// the host's checkpointing: interval); without, the rest is empty.
	Checkpointing bool             `json:"checkpointing"`
	Counts        CheckpointCounts `json:"counts"`
	Latest        *CheckpointInfo  `json:"latest_completed,omitempty"`
	Restored      uint64           `json:"restored,omitempty"` // the checkpoint the job last restarted from
	History       []CheckpointInfo `json:"history"`            // newest first
}

// CheckpointCounts are Flink's counts, under its metric names.
type CheckpointCounts struct {
	Completed  int `json:"numberOfCompletedCheckpoints"`
	Failed     int `json:"numberOfFailedCheckpoints"`
	InProgress int `json:"numberOfInProgressCheckpoints"`
}

// CheckpointInfo is one checkpoint or savepoint.
type CheckpointInfo struct {
	ID           uint64        `json:"id"`
	Kind         string        `json:"kind"`   // checkpoint or savepoint
	Status       string        `json:"status"` // IN_PROGRESS, COMPLETED or FAILED, as Flink
	Triggered    time.Time     `json:"trigger_timestamp"`
	DurationMs   int64         `json:"end_to_end_duration_ms"`
	Size         int64         `json:"state_size"` // bytes of its state files
	Acknowledged int           `json:"num_acknowledged_subtasks"`
	Subtasks     int           `json:"num_subtasks"`
	Path         string        `json:"external_path,omitempty"` // a completed savepoint's folder
	FailureCause string        `json:"failure_message,omitempty"`
	Tasks        []SubtaskInfo `json:"subtasks,omitempty"` // in the order they acknowledged
}

// SubtaskInfo is one subtask's part of a checkpoint.
type SubtaskInfo struct {
	Task        string `json:"task"`
	Subtask     int    `json:"subtask"`
	Size        int64  `json:"state_size"`
	AlignmentMs int64  `json:"alignment_duration_ms"`
	SyncMs      int64  `json:"sync_duration_ms"`
	AsyncMs     int64  `json:"async_duration_ms"`
}

// Savepoint is what POST /v1/jobs/{id}/savepoints answers.
type Savepoint struct {
	Job  string `json:"job"`
	ID   uint64 `json:"id"`
	Stop bool   `json:"stop"`
}

var flinkStatus = map[checkpoint.Status]string{checkpoint.StatusInProgress: "IN_PROGRESS",
	checkpoint.StatusCompleted: "COMPLETED", checkpoint.StatusFailed: "FAILED"}

// checkpointStats returns the job's checkpoint statistics; ok is false
// when it takes no checkpoints.
func (j *Job) checkpointStats() (checkpoint.Stats, bool) {
	j.mu.Lock()
	m, final, on := j.master, j.ckFinal, j.checkpointed
	j.mu.Unlock()
	if m != nil {
		return m.m.Stats(), true
	}
	return final, on
}

// JobCheckpoints returns the job's checkpoint statistics.
func (s *Server) JobCheckpoints(p Principal, id string) (Checkpoints, error) {
	j, err := s.job(p, id)
	if err != nil {
		return Checkpoints{}, err
	}
	st, on := j.checkpointStats()
	out := Checkpoints{Job: j.ID, State: j.status().State, Checkpointing: on, History: []CheckpointInfo{},
		Counts:   CheckpointCounts{st.NumberOfCompletedCheckpoints, st.NumberOfFailedCheckpoints, st.NumberOfInProgressCheckpoints},
		Restored: uint64(st.Restored)}
	paths := j.checkpointPaths()
	for _, h := range st.History {
		c := CheckpointInfo{ID: uint64(h.ID), Kind: h.Kind.String(), Status: flinkStatus[h.Status], Triggered: h.Triggered,
			DurationMs: h.Duration.Milliseconds(), Size: h.Size, Acknowledged: h.Acknowledged, Subtasks: h.Tasks,
			Path: paths[h.ID], FailureCause: h.FailureCause}
		for _, t := range h.Subtasks {
			c.Tasks = append(c.Tasks, SubtaskInfo{Task: t.Task.Vertex, Subtask: t.Task.Subtask, Size: t.Size,
				AlignmentMs: t.Alignment.Milliseconds(), SyncMs: t.Sync.Milliseconds(), AsyncMs: t.Async.Milliseconds()})
		}
		out.History = append(out.History, c)
		if h.ID == st.LastCompletedID && out.Latest == nil {
			out.Latest = &out.History[len(out.History)-1]
		}
	}
	if out.Latest != nil { // not into History's backing array, which may grow
		l := *out.Latest
		out.Latest = &l
	} else if st.LastCompletedID != 0 { // older than the history keeps
		out.Latest = &CheckpointInfo{ID: uint64(st.LastCompletedID), Status: flinkStatus[checkpoint.StatusCompleted],
			DurationMs: st.LastCheckpointDuration.Milliseconds(), Size: st.LastCheckpointSize}
	}
	return out, nil
}

// TriggerSavepoint takes a savepoint of the job into the tenant's
// savepoint folder and returns once it is triggered; with stop the job
// then finishes (stop-with-savepoint). Its progress shows in
// JobCheckpoints. A job without checkpointing is refused: only the job
// master takes savepoints.
func (s *Server) TriggerSavepoint(ctx context.Context, p Principal, id string, stop bool) (Savepoint, error) {
	j, err := s.job(p, id)
	if err != nil {
		return Savepoint{}, err
	}
	if p.Admin {
		return Savepoint{}, errorf(Forbidden, "job "+id, "the admin takes no savepoint: the tenant %s does", j.Tenant)
	}
	j.mu.Lock()
	m, on := j.master, j.checkpointed
	j.mu.Unlock()
	switch {
	case !on:
		return Savepoint{}, errorf(Conflict, "job "+id, "the job takes no checkpoints, so no savepoint: submit it with checkpointing: interval set")
	case m == nil || j.ended():
		return Savepoint{}, errorf(Conflict, "job "+id, "the job already ended (%s)", j.status().State)
	}
	sp, err := m.request(ctx, stop)
	if err != nil {
		if ctx.Err() != nil {
			return Savepoint{}, errorf(Unavailable, "job "+id, "%v", err)
		}
		return Savepoint{}, errorf(Conflict, "job "+id, "%v", err)
	}
	return Savepoint{Job: j.ID, ID: uint64(sp.ID), Stop: stop}, nil
}
