package server

import (
	"sort"
	"time"

	"github.com/sluicehq/sluice/host/pipeline"
)

// JobStatus is what GET /v1/jobs/{id} shows.
type JobStatus struct {
	ID          string     `json:"id"`
	Tenant      string     `json:"tenant"`
	Name        string     `json:"name"`
	Mode        string     `json:"mode"`
	State       string     `json:"state"`
	Submitted   time.Time  `json:"submitted"`
	Ended       *time.Time `json:"ended,omitempty"`
	DurationMs  int64      `json:"duration_ms"`
	Slots       int        `json:"slots"`
	Instances   int        `json:"plugin_instances"`
	MemoryPages int64      `json:"memory_pages"`
	RecordsDone int64      `json:"records_done"` // produced by the sources
	// RecordsAll is what the sources will produce: -1 while it is not
	// known, for an unbounded source, and for a bounded one until every
	// source subtask has opened (the submit's answer, usually: a GET a
	// moment later has the count).
	RecordsAll int64 `json:"records_total"`
	// RecordsSunk is what the sinks received: with RecordsDone it tells a
	// job that read everything from one whose records never got through
	// (a failed job that read 100 and sank 0).
	RecordsSunk int64             `json:"records_sunk"`
	Plugins     map[string]string `json:"plugins,omitempty"`
	Error       string            `json:"error,omitempty"`
	CancelCause string            `json:"cancel_cause,omitempty"`
	// RestoredFrom is the savepoint the job was submitted to start from.
	RestoredFrom string `json:"restored_from,omitempty"`
}

func (j *Job) status() JobStatus {
	j.mu.Lock()
	st := JobStatus{ID: j.ID, Tenant: j.Tenant, Name: j.Name, Mode: j.Mode, State: j.state, Submitted: j.Submitted,
		Slots: j.need.slots, Instances: j.need.instances, MemoryPages: j.need.pages, Plugins: j.plugins, CancelCause: j.cancelWhy, RestoredFrom: j.restoredFrom}
	final, err, ended, exec := j.final, j.err, j.endedAt, j.exec
	j.mu.Unlock()
	res := final
	if res == nil {
		res = exec.Snapshot()
	}
	st.DurationMs = res.Duration.Milliseconds()
	st.RecordsDone, st.RecordsAll = res.Done, res.Total
	for _, op := range res.Operators {
		if op.Kind == string(pipeline.KindSink) {
			st.RecordsSunk += op.RecordsIn
		}
	}
	if !ended.IsZero() {
		st.Ended = &ended
	}
	if err != nil && st.State == Failed {
		st.Error = err.Error()
	}
	return st
}

// job finds a job p may see: its own, or any for the admin. Any other id
// is NotFound, whether it exists or not.
func (s *Server) job(p Principal, id string) (*Job, error) {
	s.mu.Lock()
	j := s.jobs[id]
	s.mu.Unlock()
	if j == nil || (!p.Admin && j.Tenant != p.Tenant) {
		return nil, errorf(NotFound, "job "+id, "no such job")
	}
	return j, nil
}

// Jobs lists p's jobs (every tenant's for the admin), newest first:
// running ones, then the last ended ones (setting job-history).
func (s *Server) Jobs(p Principal) []JobStatus {
	s.mu.Lock()
	var list []*Job
	for _, j := range s.jobs {
		if p.Admin || j.Tenant == p.Tenant {
			list = append(list, j)
		}
	}
	s.mu.Unlock()
	out := make([]JobStatus, 0, len(list))
	for _, j := range list {
		out = append(out, j.status())
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].Submitted.Equal(out[b].Submitted) {
			return out[a].Submitted.After(out[b].Submitted)
		}
		return out[a].ID < out[b].ID
	})
	return out
}

// Job returns one job's status.
func (s *Server) Job(p Principal, id string) (JobStatus, error) {
	j, err := s.job(p, id)
	if err != nil {
		return JobStatus{}, err
	}
	return j.status(), nil
}

// Plan returns the job's plan as plan.WriteJSON prints it.
func (s *Server) Plan(p Principal, id string) ([]byte, error) {
	j, err := s.job(p, id)
	if err != nil {
		return nil, err
	}
	return j.planJSON, nil
}

// Cancel stops a running job; it ends CANCELED. Cancelling an ended job
// is a Conflict.
func (s *Server) Cancel(p Principal, id string) (JobStatus, error) {
	j, err := s.job(p, id)
	if err != nil {
		return JobStatus{}, err
	}
	if j.ended() {
		return JobStatus{}, errorf(Conflict, "job "+id, "the job already ended (%s)", j.status().State)
	}
	j.cancel("cancelled by " + p.String())
	return j.status(), nil
}

// JobExceptions returns the job's exception history.
func (s *Server) JobExceptions(p Principal, id string) (Exceptions, error) {
	j, err := s.job(p, id)
	if err != nil {
		return Exceptions{}, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return Exceptions{Job: j.ID, State: j.state, Exceptions: append([]Exception{}, j.exceptions...), Dropped: j.dropped}, nil
}

// JobOutput returns the newest n records (every kept one when n <= 0) the
// job's collect sinks received, oldest first.
func (s *Server) JobOutput(p Principal, id string, n int) (Output, error) {
	j, err := s.job(p, id)
	if err != nil {
		return Output{}, err
	}
	recs, total := j.out.last(n)
	return Output{Job: j.ID, Total: total, Returned: len(recs), Truncated: int64(len(recs)) < total, Records: recs}, nil
}

// Wait blocks until the job ended and its resources are released, or
// until done is closed; the status says which.
func (s *Server) Wait(p Principal, id string, done <-chan struct{}) (JobStatus, error) {
	j, err := s.job(p, id)
	if err != nil {
		return JobStatus{}, err
	}
	select {
	case <-j.done:
	case <-done:
	}
	return j.status(), nil
}
