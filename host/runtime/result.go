package runtime

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/partition"
)

// minHotSample is the smallest sample of a HASH edge that can name a hot
// key.
const minHotSample = 64 // with a mean gap of 32: about 2,000 records

// Snapshot returns the metrics so far; while the job runs they move on.
func (e *Execution) Snapshot() *Result {
	now := time.Now()
	end := now
	if f := e.finished.Load(); f != 0 {
		end = time.Unix(0, f)
	}
	r := &Result{Job: e.job.Name, Mode: string(e.job.Mode), Duration: end.Sub(e.started), Total: 0}
	byOp := map[string][]*chainOp{}
	for _, sts := range e.subtasks {
		for _, st := range sts {
			for _, co := range st.ops {
				byOp[co.spec.ID] = append(byOp[co.spec.ID], co)
			}
		}
	}
	for _, op := range e.job.Operators {
		m := OperatorMetrics{ID: op.ID, Kind: string(op.Kind), Parallelism: op.Parallelism}
		if op.Task >= 0 && op.Task < len(e.job.Tasks) {
			m.Task = e.job.Tasks[op.Task].Name
		}
		for i, co := range byOp[op.ID] {
			tc := co.st.metrics
			elapsed := tc.elapsed(now)
			idle, bp := time.Duration(tc.idle.load()), time.Duration(tc.backPressured.load())
			stateBytes, stateKeys := co.stateSize()
			m.Subtasks = append(m.Subtasks, SubtaskMetrics{
				Subtask:         i,
				RecordsIn:       co.metrics.recordsIn.load(),
				RecordsOut:      co.metrics.recordsOut.load(),
				BytesIn:         co.metrics.bytesIn.load(),
				BytesOut:        co.metrics.bytesOut.load(),
				IdleMs:          idle.Milliseconds(),
				BackPressuredMs: bp.Milliseconds(),
				BusyMs:          max(elapsed-idle-bp, 0).Milliseconds(),
				Skipped:         co.metrics.skipped.load(),
				DeadLettered:    co.metrics.deadLettered.load(),
				Restarts:        co.metrics.restarts.load(),
				LogLinesDropped: co.logDropped(),
				Gauges:          co.gaugesNow(),
				InputWatermark:  co.wmIn.Load(),
				OutputWatermark: co.wmOut.Load(),
				StateBytes:      stateBytes,
				StateKeys:       stateKeys,
			})
		}
		m.sum()
		if op.Kind == pipeline.KindSource {
			r.Done += m.RecordsOut
		}
		r.Operators = append(r.Operators, m)
	}
	r.Total = e.total()
	r.HotKeys = e.hotKeys()
	return r
}

// total is the number of records the sources will produce, or -1.
func (e *Execution) total() int64 {
	var sum int64
	for ti, t := range e.job.Tasks {
		if len(t.Operators) == 0 || e.subtasks[ti][0].ops[0].spec.Kind != pipeline.KindSource {
			continue
		}
		for _, st := range e.subtasks[ti] {
			n := st.total.Load()
			if n < 0 {
				return -1
			}
			sum += n
		}
	}
	return sum
}

// hotKeys names the keys that carry more than HotKeyShare of a HASH or
// CUSTOM edge's records, with the downstream subtask that has to process
// them.
func (e *Execution) hotKeys() []HotKey {
	var out []HotKey
	for _, edge := range e.job.Edges {
		sketches := e.hot[edge]
		if len(sketches) == 0 {
			continue
		}
		p, maxP := 1, 1
		var from *plan.Operator
		for _, op := range e.job.Operators {
			if op.ID == edge.To {
				p, maxP = op.Parallelism, op.MaxParallelism
			}
			if op.ID == edge.From {
				from = op
			}
		}
		advice := hotKeyAdvice(edge, from, e.job.Mode)
		for _, ks := range mergeHotKeys(sketches, e.opts.HotKeyShare, minHotSample) {
			hk := HotKey{From: edge.From, To: edge.To, Strategy: edge.ShipStrategy, Key: preview(ks.key), Share: ks.share, Subtask: -1, Advice: advice}
			switch {
			case edge.ShipStrategy == plan.Custom:
				hk.Subtask = ks.channel // what the user partitioner chose
			default:
				if h, err := abi.KeyHash(ks.key); err == nil {
					hk.Subtask = partition.OperatorIndexForKeyGroup(maxP, p, partition.KeyGroup(h, maxP))
				}
			}
			out = append(out, hk)
		}
	}
	return out
}

// hotKeyAdvice says what helps against a hot key on edge, whose upstream
// operator is from.
func hotKeyAdvice(edge *plan.Edge, from *plan.Operator, mode pipeline.Mode) string {
	if edge.ShipStrategy == plan.Custom {
		return fmt.Sprintf("the partitioner %q sends every record of the key to one subtask: spread the key over several channels in the partitioner, or salt the key", edge.CustomPlugin)
	}
	// Flink's rolling aggregations and reduce emit an updated result for
	// every record they read in streaming mode
	if from != nil && mode != pipeline.Batch && from.Kind.NeedsKey() {
		return fmt.Sprintf("these are %q's running results, one for every record it reads in streaming mode, so salting its key does not thin them out: "+
			"in batch mode it emits one result per key; in streaming mode pre-aggregate before its key-by (a combiner plugin)", from.ID)
	}
	return "salt the key and merge, or pre-aggregate before the key-by"
}
