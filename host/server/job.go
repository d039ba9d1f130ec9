package server

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// Job states, named as Flink names them.
const (
	Running   = "RUNNING"
	Canceling = "CANCELING"
	Finished  = "FINISHED"
	Failed    = "FAILED"
	Canceled  = "CANCELED"
)

// maxExceptions bounds the exception history of a job.
const maxExceptions = 100

// Job is one submitted job. The fields set at submission never change,
// but for exec and host, which the job drops when it ends (mu guards
// them then); the rest is guarded by mu.
type Job struct {
	ID        string
	Tenant    string
	Name      string
	Mode      string
	Submitted time.Time
	graph     *plan.JobGraph
	planJSON  []byte
	plugins   map[string]string // pipeline name -> digest
	need      usage
	// exec is the running job: through its plugin set it holds every
	// compiled module and instance. Nil once ended (final holds the
	// metrics), so that an ended job in the history keeps no module.
	exec running
	// master is the job master of a job with checkpointing, nil without
	// and once ended (ckFinal and ckPaths then hold what it showed)
	master       *mastered
	checkpointed bool
	// stop cancels the job's context, which bounds its plugin calls: a
	// cancel interrupts a call in progress instead of waiting out its
	// call-timeout (the calls ran under the server's context)
	stop  context.CancelFunc
	host  *plugin.Host // nil when the job has no plugin, and once it ended
	meter *meter
	out   *tail
	done  chan struct{} // closed once ended, host closed and quota released

	mu         sync.Mutex
	state      string
	cancelWhy  string
	endedAt    time.Time
	err        error
	final      *runtime.Result
	rates      [][]rate // [task][subtask], the last sample
	window     time.Duration
	exceptions []Exception
	// restoredFrom is the savepoint the job was submitted to start from
	restoredFrom string
	dropped      int // exceptions beyond maxExceptions
	ckFinal      checkpoint.Stats
	ckPaths      map[checkpoint.ID]string
}

// usage is what a job holds of its tenant's quotas.
type usage struct {
	slots     int
	instances int
	pages     int64
}

// rate is a task subtask's share of the last sample window, in ms per
// second, as Flink's busyTimeMsPerSecond and friends.
type rate struct {
	busy, idle, backPressured float64
}

// Exception is an error of a job: a failed plugin call, or the failure
// that ended the job (Root).
type Exception struct {
	Time     time.Time `json:"time"`
	Operator string    `json:"operator"` // operator id, or "from->to" for an edge plugin
	Subtask  int       `json:"subtask"`  // 0-based; -1 when unknown
	Plugin   string    `json:"plugin,omitempty"`
	Kind     string    `json:"kind"` // one of ErrorKinds, or "job"
	Message  string    `json:"message"`
	Root     bool      `json:"root"` // the cause of the job's failure
	// Restarted: the job master restarted the job after this failure, as
	// its restart strategy allowed (an entry of Flink's exception
	// history that the job recovered from).
	Restarted bool `json:"restarted,omitempty"`
}

// Exceptions is a job's exception history, oldest first.
type Exceptions struct {
	Job        string      `json:"job"`
	State      string      `json:"state"`
	Exceptions []Exception `json:"exceptions"`
	Dropped    int         `json:"dropped"` // not kept: the history holds the first 100
}

func (j *Job) ended() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

func (j *Job) addException(e Exception) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.exceptions) >= maxExceptions {
		j.dropped++
		return
	}
	j.exceptions = append(j.exceptions, e)
}

// cancel asks the job to stop; it ends CANCELED.
func (j *Job) cancel(why string) {
	j.mu.Lock()
	if j.state == Running {
		j.state, j.cancelWhy = Canceling, why
	}
	exec := j.exec
	j.mu.Unlock()
	if exec != nil {
		exec.Cancel()
	}
	if j.stop != nil {
		j.stop()
	}
}

// finish records how the job ended.
func (j *Job) finish(res *runtime.Result, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.final, j.err, j.endedAt = res, err, time.Now()
	j.rates = nil
	switch {
	case err == nil:
		j.state = Finished
	case j.state == Canceling || errors.Is(err, context.Canceled):
		j.state = Canceled
	default:
		j.state = Failed
	}
	if err == nil || j.state == Canceled {
		return
	}
	root := Exception{Time: j.endedAt, Subtask: -1, Kind: "job", Message: err.Error(), Root: true}
	var oe *runtime.OpError
	if errors.As(err, &oe) {
		root.Operator, root.Subtask = oe.Operator, oe.Subtask
		root.Kind = ErrorKinds[kindOf(err)]
		var pe *plugin.PluginError
		if errors.As(err, &pe) {
			root.Plugin = pe.Plugin
			// the meter already recorded this call: mark it rather than
			// repeat it
			for i := len(j.exceptions) - 1; i >= 0; i-- {
				if x := &j.exceptions[i]; x.Operator == root.Operator && x.Subtask == root.Subtask && x.Message == pe.Error() {
					x.Root = true
					return
				}
			}
		}
	}
	if len(j.exceptions) >= maxExceptions {
		j.exceptions = j.exceptions[:maxExceptions-1]
		j.dropped++
	}
	j.exceptions = append(j.exceptions, root)
}

// snapshot returns the job's metrics: the live ones while it runs, the
// final ones after.
func (j *Job) snapshot() (*runtime.Result, [][]rate, time.Duration) {
	j.mu.Lock()
	final, rates, window, exec := j.final, j.rates, j.window, j.exec
	j.mu.Unlock()
	if final != nil {
		return final, averageRates(j.graph, final), final.Duration
	}
	return exec.Snapshot(), rates, window
}

// sample computes the rates of every task subtask over the window
// between prev and cur.
func sample(g *plan.JobGraph, prev, cur *runtime.Result) [][]rate {
	window := float64((cur.Duration - prev.Duration).Milliseconds())
	out := make([][]rate, len(g.Tasks))
	for ti, t := range g.Tasks {
		c, p := cur.Operator(t.Operators[0]), prev.Operator(t.Operators[0])
		if c == nil || p == nil {
			continue
		}
		out[ti] = make([]rate, len(c.Subtasks))
		for i, cs := range c.Subtasks {
			if i >= len(p.Subtasks) || window <= 0 {
				continue
			}
			ps := p.Subtasks[i]
			perSecond := func(now, before int64) float64 {
				return min(max(float64(now-before)/window*1000, 0), 1000)
			}
			out[ti][i] = rate{busy: perSecond(cs.BusyMs, ps.BusyMs), idle: perSecond(cs.IdleMs, ps.IdleMs),
				backPressured: perSecond(cs.BackPressuredMs, ps.BackPressuredMs)}
		}
	}
	return out
}

// averageRates are the rates over a whole (ended) run.
func averageRates(g *plan.JobGraph, res *runtime.Result) [][]rate {
	zero := &runtime.Result{Operators: make([]runtime.OperatorMetrics, len(res.Operators))}
	for i, op := range res.Operators {
		zero.Operators[i] = runtime.OperatorMetrics{ID: op.ID, Subtasks: make([]runtime.SubtaskMetrics, len(op.Subtasks))}
	}
	return sample(g, zero, res)
}

// watch samples the job every SampleEvery until it ends, then records the
// end, closes the plugin host (every instance), drops the execution and
// the host (the modules with them) and releases the quota.
func (s *Server) watch(j *Job) {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.SampleEvery)
	defer t.Stop()
	exec := j.exec
	prev := exec.Snapshot()
	for {
		select {
		case <-t.C:
			cur := exec.Snapshot()
			r := sample(j.graph, prev, cur)
			j.mu.Lock()
			j.rates, j.window = r, cur.Duration-prev.Duration
			j.mu.Unlock()
			prev = cur
		case <-exec.Done():
			res, err := exec.Wait()
			j.finish(res, err)
			if j.stop != nil {
				j.stop()
			}
			if cerr := j.closeHost(); cerr != nil {
				s.log.Warn("closing a job's plugin host", "job", j.ID, "error", cerr)
			}
			j.mu.Lock()
			if j.master != nil {
				j.ckFinal, j.ckPaths = j.master.m.Stats(), j.master.checkpointPaths()
			}
			j.exec, j.host, j.master = nil, nil, nil
			j.mu.Unlock()
			s.release(j)
			s.log.Info("job ended", "job", j.ID, "tenant", j.Tenant, "state", j.status().State, "error", err)
			close(j.done)
			return
		}
	}
}

// closeHost closes the job's plugin host: every instance it made.
func (j *Job) closeHost() error {
	if j.host == nil {
		return nil
	}
	return j.host.Close(context.Background())
}

func writePlan(g *plan.JobGraph) []byte {
	var b bytes.Buffer
	_ = plan.WriteJSON(&b, g)
	return b.Bytes()
}

// restarted records a failure the job master restarted the job after.
func (j *Job) restarted(err error) {
	e := Exception{Time: time.Now(), Subtask: -1, Kind: "job", Message: err.Error(), Restarted: true}
	var oe *runtime.OpError
	if errors.As(err, &oe) {
		e.Operator, e.Subtask, e.Kind = oe.Operator, oe.Subtask, ErrorKinds[kindOf(err)]
	}
	var pe *plugin.PluginError
	if errors.As(err, &pe) {
		e.Plugin = pe.Plugin
	}
	j.addException(e)
}
