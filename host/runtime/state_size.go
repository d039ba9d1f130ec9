package runtime

import (
	"sync/atomic"
	"time"
)

// StateSizer is an optional interface of a StateBackend: the bytes its
// keyed state holds (the heap: what counts towards state-memory; Pebble:
// the database on disk and in its memtables) and its keys, -1 when
// counting them would cost a scan (Pebble).
type StateSizer interface {
	StateSize() (bytes, keys int64)
}

// StateSize implements StateSizer: the bytes state-memory counts and
// those of the cells a built-in aggregation inserted (as first built: a
// value that grew since is counted at its first size), and the live keys
// of every slot.
func (s *KeyedStore) StateSize() (bytes, keys int64) {
	for slot := range s.index {
		keys += int64(s.Len(slot))
	}
	return s.used + s.inserted, keys
}

// StateSize forwards to the wrapped backend.
func (c *cellBackend) StateSize() (bytes, keys int64) {
	if sz, ok := c.StateBackend.(StateSizer); ok {
		return sz.StateSize()
	}
	return -1, -1
}

// stateGauge is an operator subtask's keyed-state size as its goroutine
// last measured it, for Snapshot on any goroutine.
type stateGauge struct {
	bytes, keys atomic.Int64
	measured    bool      // the subtask goroutine's
	at          time.Time // when it last measured
}

// measureEvery is how often a subtask measures its keyed state between
// batches.
const measureStateEvery = 250 * time.Millisecond

// measureState records co's keyed-state size, at most every
// measureStateEvery unless force.
func (o *chainOp) measureState(force bool) {
	if o.store == nil {
		return
	}
	sz, ok := o.store.(StateSizer)
	if !ok {
		return
	}
	now := time.Now()
	if !force && o.state.measured && now.Sub(o.state.at) < measureStateEvery {
		return
	}
	o.state.measured, o.state.at = true, now
	b, k := sz.StateSize()
	o.state.bytes.Store(b)
	o.state.keys.Store(k)
	o.hasState.Store(true)
}

// stateSize is what Snapshot shows: -1, -1 for an operator without keyed
// state or before its first measure.
func (o *chainOp) stateSize() (bytes, keys int64) {
	if !o.hasState.Load() {
		return -1, -1
	}
	return o.state.bytes.Load(), o.state.keys.Load()
}
