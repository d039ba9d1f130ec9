package server

import (
	"slices"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/runtime"
)

// JobMetrics is what GET /v1/jobs/{id}/metrics shows: per task its
// subtasks' times (ms per second, Flink's busyTimeMsPerSecond, ...), per
// operator its subtasks' records and bytes, the hot keys of HASH and CUSTOM edges,
// and per plugin instance its calls.
type JobMetrics struct {
	Job         string            `json:"job"`
	State       string            `json:"state"`
	DurationMs  int64             `json:"duration_ms"`
	RecordsDone int64             `json:"records_done"`
	RecordsAll  int64             `json:"records_total"`
	RateWindow  string            `json:"rate_window"` // "1s": the last sample; "run": averaged over the ended run
	Tasks       []TaskMetrics     `json:"tasks"`
	Operators   []OperatorMetrics `json:"operators"`
	HotKeys     []HotKey          `json:"hot_keys"`
	Plugins     []PluginCalls     `json:"plugins"`
}

// TaskMetrics are a task's (chain's) subtasks.
type TaskMetrics struct {
	ID          int           `json:"id"`
	Name        string        `json:"name"`
	Operators   []string      `json:"operators"`
	Parallelism int           `json:"parallelism"`
	Subtasks    []TaskSubtask `json:"subtasks"`
	// The highest busy and back-pressured time of any subtask, as Flink's
	// Web UI colours a vertex by.
	BusyMax          float64 `json:"busy_ms_per_second_max"`
	BackPressuredMax float64 `json:"back_pressured_ms_per_second_max"`
	// Skew: the busiest subtask's records in against the mean (the head
	// operator's; a source's records out). RecordsIn is per subtask.
	Skew      float64 `json:"skew"`
	RecordsIn []int64 `json:"records_in"`
	// RecordsReceived and RecordsSent are the vertex's records in and out
	// over the network, as Flink's Web UI shows them on a vertex: what its
	// head operator read (0 for a source) and what its operators sent on
	// edges that are not chained (0 for a task of sinks).
	RecordsReceived int64 `json:"records_received"`
	RecordsSent     int64 `json:"records_sent"`
}

// TaskSubtask is one subtask of a task: where its time went.
type TaskSubtask struct {
	Subtask         int     `json:"subtask"`
	Busy            float64 `json:"busy_ms_per_second"`
	Idle            float64 `json:"idle_ms_per_second"`
	BackPressured   float64 `json:"back_pressured_ms_per_second"`
	BusyMs          int64   `json:"busy_ms"`
	IdleMs          int64   `json:"idle_ms"`
	BackPressuredMs int64   `json:"back_pressured_ms"`
}

// OperatorMetrics are one operator's records and bytes, per subtask.
type OperatorMetrics struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Task        int    `json:"task"`
	Parallelism int    `json:"parallelism"`
	RecordsIn   int64  `json:"records_in"`
	RecordsOut  int64  `json:"records_out"`
	BytesIn     int64  `json:"bytes_in"`
	BytesOut    int64  `json:"bytes_out"`
	// LogLinesDropped counts the lines of guest stdout and stderr dropped
	// past the kept tail (a plugin operator's log flood).
	LogLinesDropped int64   `json:"log_lines_dropped"`
	Skew            float64 `json:"skew"`
	// CurrentInputWatermark and CurrentOutputWatermark are the lowest over
	// the subtasks, epoch ms (Flink's currentInputWatermark and
	// currentOutputWatermark); absent before the first watermark.
	CurrentInputWatermark  *int64 `json:"current_input_watermark,omitempty"`
	CurrentOutputWatermark *int64 `json:"current_output_watermark,omitempty"`
	// StateBytes and StateKeys are the keyed state the operator's
	// subtasks hold, summed (runtime.SubtaskMetrics.StateBytes): absent
	// for an operator without keyed state, keys absent on Pebble (not
	// counted).
	StateBytes *int64            `json:"state_bytes,omitempty"`
	StateKeys  *int64            `json:"state_keys,omitempty"`
	Subtasks   []OperatorSubtask `json:"subtasks"`
}

// OperatorSubtask is one subtask of an operator: Flink's numRecordsIn,
// numRecordsOut, numBytesIn, numBytesOut.
type OperatorSubtask struct {
	Subtask    int   `json:"subtask"`
	RecordsIn  int64 `json:"records_in"`
	RecordsOut int64 `json:"records_out"`
	BytesIn    int64 `json:"bytes_in"`
	BytesOut   int64 `json:"bytes_out"`
	// LogLinesDropped: the subtask's guest log lines dropped.
	LogLinesDropped int64 `json:"log_lines_dropped"`
	// Gauges are a source's or sink's own figures, named as its Flink
	// connector names them (a Kafka source's currentOffset, committedOffset
	// and records-lag per topic and partition; a Kafka sink's
	// transactions-committed, ...); none for other operators.
	Gauges []ConnectorGauge `json:"gauges,omitempty"`
	// The subtask's current watermarks; absent before the first.
	CurrentInputWatermark  *int64 `json:"current_input_watermark,omitempty"`
	CurrentOutputWatermark *int64 `json:"current_output_watermark,omitempty"`
	// The subtask's keyed state, bytes and keys; absent as the operator's.
	StateBytes *int64 `json:"state_bytes,omitempty"`
	StateKeys  *int64 `json:"state_keys,omitempty"`
}

// sizeOf is a state size for JSON: nil when unknown (-1).
func sizeOf(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}

// ConnectorGauge is one figure of a connector subtask (runtime.Gauge).
type ConnectorGauge struct {
	Name   string       `json:"name"`
	Labels []GaugeLabel `json:"labels,omitempty"` // what it is about, in order: topic, partition
	Value  float64      `json:"value"`
}

// GaugeLabel is one label of a ConnectorGauge.
type GaugeLabel struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ConnectorGauges converts the engine's gauges of a connector subtask.
func ConnectorGauges(gs []runtime.Gauge) []ConnectorGauge {
	if len(gs) == 0 {
		return nil
	}
	out := make([]ConnectorGauge, 0, len(gs))
	for _, g := range gs {
		cg := ConnectorGauge{Name: g.Name, Value: g.Value}
		for _, l := range g.Labels {
			cg.Labels = append(cg.Labels, GaugeLabel{Name: l.Name, Value: l.Value})
		}
		out = append(out, cg)
	}
	return out
}

// watermarkOf is wm for JSON: nil before the first watermark.
func watermarkOf(wm int64) *int64 {
	if wm == runtime.MinWatermark {
		return nil
	}
	return &wm
}

// HotKey is a key carrying more than half of a HASH edge's records.
type HotKey struct {
	From     string  `json:"from"`
	To       string  `json:"to"`
	Strategy string  `json:"strategy"` // HASH or CUSTOM
	Key      string  `json:"key"`      // as JSON
	Share    float64 `json:"share"`
	Subtask  int     `json:"subtask"` // the downstream subtask that owns it
	Advice   string  `json:"advice"`  // what applies to this edge
}

// PluginCalls are the calls into one plugin instance slot (an operator
// subtask, or an upstream subtask of an edge plugin).
type PluginCalls struct {
	Operator    string           `json:"operator"`
	Plugin      string           `json:"plugin"`
	Subtask     int              `json:"subtask"`
	Calls       map[string]int64 `json:"calls"`  // by call: open, process, close, partition, keys
	Errors      map[string]int64 `json:"errors"` // by kind (ErrorKinds)
	Restarts    int64            `json:"restarts"`
	MemoryBytes int64            `json:"memory_bytes"`
	// Buckets[i] counts calls that took at most CallBuckets[i] seconds
	// (cumulative, as Prometheus histograms); Count and SumSeconds are
	// every call.
	Buckets    []int64 `json:"-"`
	Count      int64   `json:"count"`
	SumSeconds float64 `json:"sum_seconds"`
}

func (st *callStats) view() PluginCalls {
	pc := PluginCalls{Operator: st.operator, Plugin: st.plugin, Subtask: st.subtask, Calls: map[string]int64{},
		Errors: map[string]int64{}, Restarts: st.restarts.Load(), MemoryBytes: st.memory.Load(),
		Buckets: make([]int64, len(CallBuckets)), SumSeconds: time.Duration(st.sumNanos.Load()).Seconds()}
	for i, n := range CallNames {
		if v := st.calls[i].Load(); v > 0 {
			pc.Calls[n] = v
		}
	}
	for i, n := range ErrorKinds {
		if v := st.errors[i].Load(); v > 0 {
			pc.Errors[n] = v
		}
	}
	var cum int64
	for i := range st.buckets {
		cum += st.buckets[i].Load()
		if i < len(CallBuckets) {
			pc.Buckets[i] = cum
		}
	}
	pc.Count = cum
	return pc
}

// JobMetrics returns the job's metrics: live while it runs, final after.
func (s *Server) JobMetrics(p Principal, id string) (JobMetrics, error) {
	j, err := s.job(p, id)
	if err != nil {
		return JobMetrics{}, err
	}
	return j.metrics(), nil
}

func (j *Job) metrics() JobMetrics {
	res, rates, window := j.snapshot()
	m := JobMetrics{Job: j.ID, State: j.status().State, DurationMs: res.Duration.Milliseconds(), RecordsDone: res.Done,
		RecordsAll: res.Total, RateWindow: window.Round(time.Millisecond).String(),
		Tasks: []TaskMetrics{}, Operators: []OperatorMetrics{}, HotKeys: []HotKey{}, Plugins: []PluginCalls{}}
	if j.ended() {
		m.RateWindow = "run"
	}
	for ti, t := range j.graph.Tasks {
		tm := TaskMetrics{ID: ti, Name: t.Name, Operators: t.Operators, Parallelism: t.Parallelism, Subtasks: []TaskSubtask{}}
		if head := res.Operator(t.Operators[0]); head != nil {
			tm.Skew = head.Skew
			for i, sm := range head.Subtasks {
				ts := TaskSubtask{Subtask: i, BusyMs: sm.BusyMs, IdleMs: sm.IdleMs, BackPressuredMs: sm.BackPressuredMs}
				if ti < len(rates) && i < len(rates[ti]) {
					r := rates[ti][i]
					ts.Busy, ts.Idle, ts.BackPressured = r.busy, r.idle, r.backPressured
				}
				tm.BusyMax = max(tm.BusyMax, ts.Busy)
				tm.BackPressuredMax = max(tm.BackPressuredMax, ts.BackPressured)
				tm.Subtasks = append(tm.Subtasks, ts)
				in := sm.RecordsIn
				if head.Kind == "source" {
					in = sm.RecordsOut
				}
				tm.RecordsIn = append(tm.RecordsIn, in)
			}
		}
		tm.RecordsReceived, tm.RecordsSent = vertexRecords(j, res, t.Operators)
		m.Tasks = append(m.Tasks, tm)
	}
	for _, op := range res.Operators {
		om := OperatorMetrics{ID: op.ID, Kind: op.Kind, Task: taskOf(j, op.ID), Parallelism: op.Parallelism,
			RecordsIn: op.RecordsIn, RecordsOut: op.RecordsOut, BytesIn: op.BytesIn, BytesOut: op.BytesOut, Skew: op.Skew,
			LogLinesDropped:        op.LogLinesDropped,
			CurrentInputWatermark:  watermarkOf(op.InputWatermark),
			CurrentOutputWatermark: watermarkOf(op.OutputWatermark),
			StateBytes:             sizeOf(op.StateBytes), StateKeys: sizeOf(op.StateKeys),
			Subtasks: make([]OperatorSubtask, 0, len(op.Subtasks))}
		for _, sm := range op.Subtasks {
			om.Subtasks = append(om.Subtasks, OperatorSubtask{Subtask: sm.Subtask, RecordsIn: sm.RecordsIn, RecordsOut: sm.RecordsOut,
				BytesIn: sm.BytesIn, BytesOut: sm.BytesOut, LogLinesDropped: sm.LogLinesDropped, Gauges: ConnectorGauges(sm.Gauges),
				CurrentInputWatermark: watermarkOf(sm.InputWatermark), CurrentOutputWatermark: watermarkOf(sm.OutputWatermark),
				StateBytes: sizeOf(sm.StateBytes), StateKeys: sizeOf(sm.StateKeys)})
		}
		m.Operators = append(m.Operators, om)
	}
	for _, hk := range res.HotKeys {
		m.HotKeys = append(m.HotKeys, HotKey{From: hk.From, To: hk.To, Strategy: hk.Strategy, Key: hk.Key, Share: hk.Share, Subtask: hk.Subtask, Advice: hk.Advice})
	}
	for _, st := range j.meter.all() {
		m.Plugins = append(m.Plugins, st.view())
	}
	return m
}

// vertexRecords is what the task of ops received (its head's records in,
// unless it is a source) and sent (the records out of its operators with
// an output edge that is not chained).
func vertexRecords(j *Job, res *runtime.Result, ops []string) (received, sent int64) {
	if len(ops) == 0 {
		return 0, 0
	}
	if head := res.Operator(ops[0]); head != nil && head.Kind != "source" {
		received = head.RecordsIn
	}
	for _, o := range j.graph.Operators {
		if !slices.Contains(ops, o.ID) {
			continue
		}
		for _, e := range o.Outputs {
			if !e.Chained {
				if m := res.Operator(o.ID); m != nil {
					sent += m.RecordsOut
				}
				break
			}
		}
	}
	return received, sent
}

func taskOf(j *Job, op string) int {
	for _, o := range j.graph.Operators {
		if o.ID == op {
			return o.Task
		}
	}
	return -1
}

// Monitor is a snapshot of everything the Prometheus metrics show: every
// tenant's usage and every running job's metrics. Ended jobs are left
// out, so their series disappear.
type Monitor struct {
	Tenants []Usage
	Jobs    []JobSample
}

// JobSample is one running job in a Monitor.
type JobSample struct {
	Tenant, ID, Name string
	Uptime           time.Duration
	Metrics          JobMetrics
	Errors           map[string]map[string]int64 // operator -> kind -> count, plugins and the job's failure
	// Checkpoints are the job's checkpoint statistics; nil when it takes
	// no checkpoints.
	Checkpoints *checkpoint.Stats
}

// Monitor returns the metrics of every tenant and running job (admin
// scope: the HTTP adapter exposes it to the admin only).
func (s *Server) Monitor() Monitor {
	s.mu.Lock()
	var running []*Job
	for _, j := range s.jobs {
		if !j.ended() {
			running = append(running, j)
		}
	}
	usage := make([]Usage, 0, len(s.names))
	for _, n := range s.names {
		usage = append(usage, s.usageLocked(s.tenants[n]))
	}
	s.mu.Unlock()
	mon := Monitor{Tenants: usage}
	for _, j := range running {
		js := JobSample{Tenant: j.Tenant, ID: j.ID, Name: j.Name, Uptime: time.Since(j.Submitted), Metrics: j.metrics(),
			Errors: map[string]map[string]int64{}}
		if st, on := j.checkpointStats(); on {
			js.Checkpoints = &st
		}
		for _, pc := range js.Metrics.Plugins {
			for k, v := range pc.Errors {
				if js.Errors[pc.Operator] == nil {
					js.Errors[pc.Operator] = map[string]int64{}
				}
				js.Errors[pc.Operator][k] += v
			}
		}
		mon.Jobs = append(mon.Jobs, js)
	}
	return mon
}
