package server

import (
	"errors"
	"github.com/sluicehq/sluice/host/checkpoint"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// The exports a metered call is counted under.
const (
	callOpen = iota
	callProcess
	callClose
	callPartition
	callKeys
	numCalls
)

// CallNames names the counted calls, as the call label of the metrics.
var CallNames = [numCalls]string{"open", "process", "close", "partition", "keys"}

// ErrorKinds names the kinds of error counted per operator: the causes of
// a *plugin.PluginError, then "operator" for any other failure.
var ErrorKinds = [...]string{"trap", "deadline", "canceled", "exit", "memory_limit", "abi",
	"output_limit", "malformed_output", "state", "status", "plugin", "operator"}

var pluginCauses = []error{plugin.ErrTrap, plugin.ErrDeadline, plugin.ErrCanceled, plugin.ErrExit,
	plugin.ErrMemoryLimit, plugin.ErrABI, plugin.ErrOutputLimit, plugin.ErrMalformedOutput,
	plugin.ErrState, plugin.ErrStatus}

// kindOf classifies err as one of ErrorKinds (by index).
func kindOf(err error) int {
	var pe *plugin.PluginError
	if !errors.As(err, &pe) {
		return len(ErrorKinds) - 1
	}
	for i, c := range pluginCauses {
		if errors.Is(err, c) {
			return i
		}
	}
	return len(ErrorKinds) - 2
}

// CallBuckets are the upper bounds (seconds) of the call duration
// histogram: 10 µs to 5 s.
var CallBuckets = [...]float64{1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 0.01, 0.05, 0.1, 0.5, 1, 5}

// callStats are the plugin calls of one operator subtask (or one
// upstream subtask of an edge's partitioner or key selector). Written by
// the subtask's goroutine, read by anyone.
type callStats struct {
	operator string // operator id, or "from->to" for an edge plugin
	plugin   string
	subtask  int

	calls    [numCalls]atomic.Int64
	errors   [len(ErrorKinds)]atomic.Int64
	restarts atomic.Int64
	memory   atomic.Int64                       // bytes of the live instance's linear memory
	buckets  [len(CallBuckets) + 1]atomic.Int64 // the last: above every bound
	sumNanos atomic.Int64
}

// memoryReporter is what host/plugin's adapters offer (metrics_export.go).
type memoryReporter interface{ MemoryBytes() uint64 }

// meter counts the plugin calls of one job and reports their errors.
type meter struct {
	onError func(Exception)
	mu      sync.Mutex
	stats   []*callStats
}

func (m *meter) newStats(operator, plugin string, subtask int) *callStats {
	st := &callStats{operator: operator, plugin: plugin, subtask: subtask}
	m.mu.Lock()
	m.stats = append(m.stats, st)
	m.mu.Unlock()
	return st
}

func (m *meter) all() []*callStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*callStats(nil), m.stats...)
}

// observe records one call that took d and ended with err, and the
// instance's memory afterwards.
func (m *meter) observe(st *callStats, call int, start time.Time, err error, inst any) {
	d := time.Since(start)
	st.calls[call].Add(1)
	st.sumNanos.Add(int64(d))
	b := len(CallBuckets)
	for i, ub := range CallBuckets {
		if d.Seconds() <= ub {
			b = i
			break
		}
	}
	st.buckets[b].Add(1)
	if r, ok := inst.(memoryReporter); ok {
		st.memory.Store(int64(r.MemoryBytes()))
	}
	if err == nil {
		return
	}
	var pe *plugin.PluginError
	m.failed(st, err, errors.As(err, &pe) && pe.Poisoned)
}

// failed counts one plugin failure by kind (and a restart when it cost
// the instance) and reports it as an exception.
func (m *meter) failed(st *callStats, err error, restart bool) {
	k := kindOf(err)
	st.errors[k].Add(1)
	if restart {
		st.restarts.Add(1)
	}
	if m.onError != nil {
		m.onError(Exception{Time: time.Now(), Operator: st.operator, Subtask: st.subtask, Plugin: st.plugin,
			Kind: ErrorKinds[k], Message: err.Error()})
	}
}

// rejected records one record a plugin failed on that the on-error took
// (skipped or dead-lettered).
func (m *meter) rejected(st *callStats, f *runtime.RecordFailure) {
	if f.Err != nil {
		m.failed(st, f.Err, f.Restart)
	}
}

// meteredPlugins wraps the runtime.Plugins of a job so that every call
// into a plugin is counted, timed and its errors recorded.
type meteredPlugins struct {
	inner runtime.Plugins
	m     *meter
}

var _ runtime.Plugins = (*meteredPlugins)(nil)

func (mp *meteredPlugins) Operator(opID, plugin string, subtask int) (runtime.Operator, error) {
	op, err := mp.inner.Operator(opID, plugin, subtask)
	if err != nil {
		return nil, err
	}
	mo := &meteredOperator{op: op, m: mp.m, st: mp.m.newStats(opID, plugin, subtask)}
	if sn, ok := op.(runtime.Snapshotter); ok {
		// a plugin with operator state (sluice_snapshot): the wrapper
		// must not hide it from the engine's checkpoints
		return meteredStatefulOperator{mo, sn}, nil
	}
	return mo, nil
}

// meteredStatefulOperator is a metered plugin operator that keeps
// operator state: its snapshots and restores pass through unmetered.
type meteredStatefulOperator struct {
	*meteredOperator
	sn runtime.Snapshotter
}

var _ runtime.Snapshotter = meteredStatefulOperator{}

func (o meteredStatefulOperator) SnapshotState(id checkpoint.ID) (checkpoint.SubtaskState, error) {
	return o.sn.SnapshotState(id)
}

func (o meteredStatefulOperator) RestoreState(r checkpoint.Restore) error {
	return o.sn.RestoreState(r)
}

func (mp *meteredPlugins) Partitioner(plugin, from, to string, subtask int) (runtime.CustomPartitioner, error) {
	p, err := mp.inner.Partitioner(plugin, from, to, subtask)
	if err != nil {
		return nil, err
	}
	return &meteredPartitioner{p: p, m: mp.m, st: mp.m.newStats(plan.EdgeKey(from, to), plugin, subtask)}, nil
}

func (mp *meteredPlugins) KeySelector(plugin, from, to string, subtask int) (runtime.KeySelector, error) {
	k, err := mp.inner.KeySelector(plugin, from, to, subtask)
	if err != nil {
		return nil, err
	}
	return &meteredKeySelector{k: k, m: mp.m, st: mp.m.newStats(plan.EdgeKey(from, to), plugin, subtask)}, nil
}

type meteredOperator struct {
	op runtime.Operator
	m  *meter
	st *callStats
}

func (o *meteredOperator) Open(oc *runtime.OpenContext) error {
	if reject := oc.Reject; reject != nil {
		// under skip and dead-letter the plugin's failures end in Reject,
		// not in a failed call: count and list them too
		wrapped := *oc
		wrapped.Reject = func(f *runtime.RecordFailure) error {
			err := reject(f)
			if err == nil { // a fail comes back as the call's error, counted there
				o.m.rejected(o.st, f)
			}
			return err
		}
		oc = &wrapped
	}
	start := time.Now()
	err := o.op.Open(oc)
	o.m.observe(o.st, callOpen, start, err, o.op)
	return err
}

func (o *meteredOperator) Process(input int, batch []byte, count int, out runtime.Collector) error {
	start := time.Now()
	err := o.op.Process(input, batch, count, out)
	o.m.observe(o.st, callProcess, start, err, o.op)
	return err
}

func (o *meteredOperator) Close(out runtime.Collector) error {
	if out == nil { // teardown: only releases the instance
		err := o.op.Close(nil)
		o.st.memory.Store(0)
		return err
	}
	start := time.Now()
	err := o.op.Close(out)
	o.m.observe(o.st, callClose, start, err, nil)
	o.st.memory.Store(0)
	return err
}

type meteredPartitioner struct {
	p  runtime.CustomPartitioner
	m  *meter
	st *callStats
}

func (p *meteredPartitioner) Partition(batch []byte, count, n int, out []int32) error {
	start := time.Now()
	err := p.p.Partition(batch, count, n, out)
	p.m.observe(p.st, callPartition, start, err, p.p)
	return err
}

func (p *meteredPartitioner) Close() error {
	p.st.memory.Store(0)
	return p.p.Close()
}

type meteredKeySelector struct {
	k  runtime.KeySelector
	m  *meter
	st *callStats
}

func (k *meteredKeySelector) Keys(batch []byte, count int, dst []byte) ([]byte, error) {
	start := time.Now()
	out, err := k.k.Keys(batch, count, dst)
	k.m.observe(k.st, callKeys, start, err, k.k)
	return out, err
}

func (k *meteredKeySelector) Close() error {
	k.st.memory.Store(0)
	return k.k.Close()
}

// ProcessWatermark passes watermarks through to a plugin operator that
// takes them (runtime.WatermarkOperator): the runtime finds the interface
// on this wrapper. One that does not take them ignores them, as the
// runtime does.
func (o *meteredOperator) ProcessWatermark(wm int64, out runtime.Collector) error {
	if w, ok := o.op.(runtime.WatermarkOperator); ok {
		return w.ProcessWatermark(wm, out)
	}
	return nil
}

// NextProcessingTime and OnProcessingTime pass a plugin operator's
// wall-clock processing-time timers through
// (runtime.ProcessingTimeOperator).
func (o *meteredOperator) NextProcessingTime() (int64, bool) {
	if p, ok := o.op.(runtime.ProcessingTimeOperator); ok {
		return p.NextProcessingTime()
	}
	return 0, false
}

func (o *meteredOperator) OnProcessingTime(out runtime.Collector) error {
	if p, ok := o.op.(runtime.ProcessingTimeOperator); ok {
		return p.OnProcessingTime(out)
	}
	return nil
}

// LogLinesDropped passes the plugin operator's count of dropped guest
// log lines through (runtime.GuestLog): the runtime finds it on the
// operator it is given, this wrapper.
func (o *meteredOperator) LogLinesDropped() int64 {
	if gl, ok := o.op.(runtime.GuestLog); ok {
		return gl.LogLinesDropped()
	}
	return 0
}
