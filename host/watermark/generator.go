package watermark

import "time"

// Emit is what one call to the generator emits, in this order: the
// ACTIVE status (Active), then a watermark (HasWatermark), or the IDLE
// status (Idle) alone.
type Emit struct {
	Active       bool
	Watermark    int64
	HasWatermark bool
	Idle         bool
}

// Generator is one source subtask's watermark generator: Flink's
// BoundedOutOfOrdernessWatermarks (monotonous is bound 0), wrapped in
// WatermarksWithIdleness when the strategy has an idleness, writing to a
// WatermarkToDataOutput that emits only watermarks above the highest so
// far and marks the output active again before a watermark after idleness.
type Generator struct {
	bound int64
	max   int64 // the highest timestamp seen, from Min + bound + 1

	idleTimeout time.Duration // 0: no idleness detection
	counter     uint64        // activity, as IdlenessTimer's
	lastCounter uint64
	inactive    time.Duration // start of inactivity; 0: no timer
	timerOn     bool
	isIdleNow   bool

	soFar int64 // WatermarkToDataOutput.maxWatermarkSoFar
	idle  bool  // the output is idle
}

// NewGenerator returns the generator of an active strategy.
func NewGenerator(s *Strategy) *Generator {
	b := s.Bound()
	return &Generator{bound: b, max: Min + b + 1, idleTimeout: s.Idleness, soFar: Min}
}

// OnEvent sees one record's timestamp.
func (g *Generator) OnEvent(ts int64) {
	if ts > g.max {
		g.max = ts
	}
	g.counter++
	g.isIdleNow = false
}

// Current is the watermark the records so far allow: max − bound − 1.
func (g *Generator) Current() int64 { return g.max - g.bound - 1 }

// OnPeriodicEmit is the periodic emit at time now (any monotonic
// reading: only differences count).
func (g *Generator) OnPeriodicEmit(now time.Duration) Emit {
	wm, ok, idle := g.periodic(now)
	switch {
	case idle:
		return g.markIdle()
	case ok:
		return g.emit(wm)
	}
	return Emit{}
}

// periodic is WatermarksWithIdleness.onPeriodicEmit: the watermark the
// wrapped generator emits (ok), or, once the input has been idle for the
// idle timeout, markIdle (idle) the first time and nothing after.
func (g *Generator) periodic(now time.Duration) (wm int64, ok, idle bool) {
	if g.idleTimeout > 0 && g.checkIfIdle(now) {
		if !g.isIdleNow {
			g.isIdleNow = true
			return 0, false, true
		}
		return 0, false, false
	}
	return g.Current(), true, false
}

// End is the emit at the end of a bounded input: the MaxWatermark.
func (g *Generator) End() Emit { return g.emit(Max) }

// Idle reports whether the output is idle.
func (g *Generator) Idle() bool { return g.idle }

// checkIfIdle is IdlenessTimer.checkIfIdle.
func (g *Generator) checkIfIdle(now time.Duration) bool {
	switch {
	case g.counter != g.lastCounter:
		g.lastCounter, g.timerOn = g.counter, false
		return false
	case !g.timerOn:
		g.inactive, g.timerOn = now, true
		return false
	}
	return now-g.inactive > g.idleTimeout
}

func (g *Generator) emit(wm int64) Emit {
	if wm <= g.soFar {
		return Emit{}
	}
	g.soFar = wm
	e := Emit{Active: g.idle, Watermark: wm, HasWatermark: true}
	g.idle = false
	return e
}

func (g *Generator) markIdle() Emit {
	if g.idle {
		return Emit{}
	}
	g.idle = true
	return Emit{Idle: true}
}
