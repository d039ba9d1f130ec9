package watermark

import (
	"sort"
	"time"
)

// Splits is the watermark generation of a source subtask that reads
// several splits (a Kafka source's partitions), as Flink's SourceOperator
// does it with per-split outputs: each split has its own generator (the
// strategy's, idleness included), created when the split is assigned
// (SourceOperator.createOutputForSplits) and dropped when it is finished
// (releaseOutputForSplit); at each periodic emit every split's generator
// updates its partial watermark (a deferred output of Flink's
// WatermarkOutputMultiplexer) and the combined watermark is the minimum
// over the splits that are not idle (CombinedWatermarkStatus), emitted
// when it advances; when every split is idle the subtask's output is
// marked idle. The output is the subtask's generator's (Generator: never
// backwards, marked active again before a watermark after idleness).
type Splits struct {
	strat    *Strategy
	out      *Generator
	parts    map[string]*split
	combined int64 // CombinedWatermarkStatus.combinedWatermark
}

// split is one split's generator and partial watermark
// (PartialWatermark: its watermark and idleness).
type split struct {
	gen  *Generator
	wm   int64
	idle bool
}

// NewSplits returns the per-split generation of strategy s writing to
// out, the subtask's generator, whose output it shares.
func NewSplits(s *Strategy, out *Generator) *Splits {
	return &Splits{strat: s, out: out, parts: map[string]*split{}, combined: Min}
}

// Add registers split id (assigned to the subtask): from now on it holds
// the combined watermark back until it has records or is idle. Adding a
// split already registered does nothing.
func (m *Splits) Add(id string) {
	if _, ok := m.parts[id]; !ok {
		m.parts[id] = &split{gen: NewGenerator(m.strat), wm: Min}
	}
}

// Release drops split id (finished): it holds nothing back any more.
func (m *Splits) Release(id string) { delete(m.parts, id) }

// Len is the number of registered splits.
func (m *Splits) Len() int { return len(m.parts) }

// IDs lists the registered splits, sorted.
func (m *Splits) IDs() []string {
	out := make([]string, 0, len(m.parts))
	for id := range m.parts {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// OnEvent sees the timestamp of a record of split id (registering the
// split if it was not).
func (m *Splits) OnEvent(id string, ts int64) {
	m.Add(id)
	m.parts[id].gen.OnEvent(ts)
}

// Watermark is split id's partial watermark and whether it is idle.
func (m *Splits) Watermark(id string) (int64, bool) {
	p, ok := m.parts[id]
	if !ok {
		return Min, false
	}
	return p.wm, p.idle
}

// OnPeriodicEmit is the periodic emit at now: every split's generator
// emits into its partial watermark, then the combined watermark goes to
// the output (WatermarkOutputMultiplexer.onPeriodicEmit).
func (m *Splits) OnPeriodicEmit(now time.Duration) Emit {
	for _, p := range m.parts {
		wm, ok, idle := p.gen.periodic(now)
		switch {
		case idle:
			p.idle = true
		case ok:
			p.idle = false // PartialWatermark.setWatermark
			p.wm = max(p.wm, wm)
		}
	}
	if len(m.parts) == 0 {
		return Emit{} // no outputs: the minimum is not valid, nothing changes
	}
	allIdle, lowest := true, Max
	for _, p := range m.parts {
		if !p.idle {
			allIdle = false
			lowest = min(lowest, p.wm)
		}
	}
	switch {
	case !allIdle && lowest > m.combined:
		m.combined = lowest
		return m.out.emit(lowest)
	case allIdle:
		return m.out.markIdle()
	}
	return Emit{}
}
