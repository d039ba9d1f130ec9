package runtime

import (
	"sync/atomic"
	"time"
)

// counter is a metric written by one goroutine and read by any: an atomic
// add per batch, never per record.
type counter struct{ v atomic.Int64 }

func (c *counter) add(n int64) { c.v.Add(n) }
func (c *counter) load() int64 { return c.v.Load() }

// opCounters are the metrics of one operator subtask (Flink's
// numRecordsIn/Out, numBytesIn/Out).
type opCounters struct {
	recordsIn, recordsOut counter
	bytesIn, bytesOut     counter
	// records the error policy dropped or sent to the dead-letter output,
	// and plugin instances replaced after a record poisoned one
	skipped, deadLettered, restarts counter
}

// taskCounters are the metrics of one task subtask, the goroutine that runs
// a chain: time waiting for input (idle), waiting for a free output buffer
// (back-pressured), and the rest (busy), as Flink's idleTimeMsPerSecond,
// backPressuredTimeMsPerSecond and busyTimeMsPerSecond.
type taskCounters struct {
	idle, backPressured counter // nanoseconds
	started, ended      atomic.Int64
}

func (t *taskCounters) elapsed(now time.Time) time.Duration {
	s := t.started.Load()
	if s == 0 {
		return 0
	}
	e := t.ended.Load()
	if e == 0 {
		e = now.UnixNano()
	}
	return time.Duration(e - s)
}

// SubtaskMetrics are one operator subtask's figures. The times are those of
// the task subtask running the operator (every operator of a chain shares
// them).
type SubtaskMetrics struct {
	Subtask               int
	RecordsIn, RecordsOut int64
	BytesIn, BytesOut     int64
	BusyMs, IdleMs        int64
	BackPressuredMs       int64
	// Skipped and DeadLettered count the records the operator's on-error
	// dropped or sent to its dead-letter output; Restarts the plugin
	// instances replaced after a record poisoned one; LogLinesDropped the
	// lines of guest stdout/stderr dropped past the kept tail.
	Skipped, DeadLettered int64
	Restarts              int64
	LogLinesDropped       int64
	// Gauges are the connector's own figures (Gauges), nil for an
	// operator whose source or sink has none.
	Gauges []Gauge
	// InputWatermark and OutputWatermark are the operator subtask's
	// current watermarks (Flink's currentInputWatermark and
	// currentOutputWatermark): MinWatermark before the first,
	// MaxWatermark once its input ended.
	InputWatermark, OutputWatermark int64
	// StateBytes and StateKeys are the subtask's keyed state as last
	// measured (every 250 ms between batches, at each checkpoint, at the
	// end): the bytes it holds on its backend (heap: what state-memory
	// counts; Pebble: disk and memtables) and its keys. -1: not keyed,
	// not measured yet, or (keys on Pebble) not counted.
	StateBytes, StateKeys int64
}

// OperatorMetrics are one operator's figures, per subtask and summed.
type OperatorMetrics struct {
	ID          string
	Kind        string
	Task        string // the chain it runs in
	Parallelism int
	Subtasks    []SubtaskMetrics

	RecordsIn, RecordsOut int64
	BytesIn, BytesOut     int64
	// BackPressuredMs is summed over the subtasks: with p subtasks it can
	// be up to p times the job's time. MaxBackPressuredMs is the busiest
	// subtask's, at most the job's time: what the summary shows, as
	// Flink's web UI shows back-pressure per subtask.
	BackPressuredMs       int64
	MaxBackPressuredMs    int64
	Skipped, DeadLettered int64
	Restarts              int64
	LogLinesDropped       int64
	// InputWatermark and OutputWatermark are the lowest over the
	// subtasks: the operator's event-time progress, as Flink's web UI
	// shows an operator's watermark.
	InputWatermark, OutputWatermark int64
	// StateBytes and StateKeys are summed over the subtasks; -1 when no
	// subtask measured one (StateKeys: when any subtask did not count).
	StateBytes, StateKeys int64
	// Skew is the busiest subtask's records in against the mean over the
	// subtasks (1 is even; p means one subtask got everything). Sources
	// are measured on records out. 0 when nothing arrived.
	Skew float64
}

// HotKey is a key that carried more than Options.HotKeyShare of a HASH or
// CUSTOM edge's sampled records.
type HotKey struct {
	From, To string
	Strategy string  // HASH or CUSTOM
	Key      string  // rendered as JSON
	Share    float64 // estimated fraction of the edge's records
	Subtask  int     // the downstream subtask that owns it
	// Advice is what applies to this edge: salt or pre-aggregate a key-by,
	// spread a custom partitioner, or, on the merge edge after a keyed
	// aggregation in streaming mode, what salting cannot do there.
	Advice string
}

// Result is what a run did.
type Result struct {
	Job       string
	Mode      string
	Duration  time.Duration
	Operators []OperatorMetrics // in plan order
	HotKeys   []HotKey
	// Done and Total are the records the sources produced and, for bounded
	// jobs, will produce (-1: unknown or unbounded).
	Done, Total int64
}

// Operator returns the metrics of operator id, or nil.
func (r *Result) Operator(id string) *OperatorMetrics {
	for i := range r.Operators {
		if r.Operators[i].ID == id {
			return &r.Operators[i]
		}
	}
	return nil
}

func (m *OperatorMetrics) sum() {
	m.sumState()
	var maxIn, maxOut int64
	m.InputWatermark, m.OutputWatermark = MaxWatermark, MaxWatermark
	if len(m.Subtasks) == 0 {
		m.InputWatermark, m.OutputWatermark = MinWatermark, MinWatermark
	}
	for _, s := range m.Subtasks {
		m.InputWatermark = min(m.InputWatermark, s.InputWatermark)
		m.OutputWatermark = min(m.OutputWatermark, s.OutputWatermark)
		m.RecordsIn += s.RecordsIn
		m.RecordsOut += s.RecordsOut
		m.BytesIn += s.BytesIn
		m.BytesOut += s.BytesOut
		m.BackPressuredMs += s.BackPressuredMs
		m.MaxBackPressuredMs = max(m.MaxBackPressuredMs, s.BackPressuredMs)
		m.Skipped += s.Skipped
		m.DeadLettered += s.DeadLettered
		m.Restarts += s.Restarts
		m.LogLinesDropped += s.LogLinesDropped

		maxIn = max(maxIn, s.RecordsIn)
		maxOut = max(maxOut, s.RecordsOut)
	}
	n := float64(len(m.Subtasks))
	switch {
	case m.RecordsIn > 0:
		m.Skew = float64(maxIn) / (float64(m.RecordsIn) / n)
	case m.RecordsOut > 0:
		m.Skew = float64(maxOut) / (float64(m.RecordsOut) / n)
	}
}

// sumState sums the subtasks' state sizes: -1 when none measured one,
// keys -1 too when a subtask measured bytes but did not count keys.
func (m *OperatorMetrics) sumState() {
	m.StateBytes, m.StateKeys = -1, -1
	counted := true
	for _, s := range m.Subtasks {
		if s.StateBytes < 0 {
			continue
		}
		m.StateBytes = max(m.StateBytes, 0) + s.StateBytes
		if s.StateKeys < 0 {
			counted = false
		}
		m.StateKeys = max(m.StateKeys, 0) + max(s.StateKeys, 0)
	}
	if !counted {
		m.StateKeys = -1
	}
}
