package runtime

import (
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
)

// barrier is checkpoint barrier id travelling the queues, in order with
// the data: everything a channel delivered before it belongs to the
// checkpoint, everything after to the next one. One barrier value is
// shared by every channel it travels; it is never changed.
type barrier struct {
	id   checkpoint.ID
	kind checkpoint.Kind
	ts   time.Time
	stop bool // stop-with-savepoint: the sources end after it
}

// barrierRoom is the room a gate keeps per channel for barriers and
// cancel markers beyond its buffers and end: a checkpoint and a savepoint
// in flight, and their aborts. Past it a producer's send waits for the
// consumer, which always reads its gate, blocked channels included.
const barrierRoom = 4

// aligner decides, for one subtask's input gate, when the barriers of a
// checkpoint have come on every channel. It is a state machine without
// goroutines or clocks: the gate loop feeds it each barrier, cancel
// marker and end of channel with the time, and does what it returns.
//
// Exactly-once, it is Flink's SingleCheckpointBarrierHandler with aligned
// barriers: a channel whose barrier came is blocked (the loop holds back
// what it delivers, so its buffers fill and back-pressure its producer)
// until every channel's came; then the checkpoint is taken and every
// channel released. A barrier of a newer checkpoint while one is being
// aligned aborts the older one (declined-subsumed); a barrier of an older
// or finished one is ignored.
//
// At-least-once, it is Flink's CheckpointBarrierTracker: no channel is
// held back; the checkpoint is taken when the last channel's barrier came,
// so records after a barrier on a fast channel may be in the snapshot and
// come again after a restore. Several checkpoints may be tracked at once;
// one that completes aborts (declined-subsumed) the older ones still
// waiting, which can no longer complete.
//
// In both modes a channel that ended counts as having delivered every
// barrier still to come. A cancel marker (a task upstream aborted the
// checkpoint) aborts it here too (declined on cancellation barrier), and
// the abort travels on.
type aligner struct {
	mode  checkpoint.Mode
	ended []bool
	// done: every checkpoint up to it was taken or aborted here; its
	// barriers and cancel markers are ignored
	done    checkpoint.ID
	pending []*alignment // by id, oldest first; exactly-once: at most one
}

type alignment struct {
	b       *barrier
	got     []bool // channels whose barrier came
	missing int    // channels neither delivered it nor ended
	first   time.Time
}

// alignResult is what the gate loop does after an input to the aligner:
// abort each of aborted (decline it and forward a cancel marker), then
// take each of take, in order; with released, hand back what the blocked
// channels delivered meanwhile, before anything else.
type alignResult struct {
	aborted  []abortedCheckpoint
	take     []takeCheckpoint
	released bool
}

type abortedCheckpoint struct {
	id     checkpoint.ID
	reason checkpoint.FailureReason
}

type takeCheckpoint struct {
	b         *barrier
	alignment time.Duration // first barrier to last
}

func newAligner(mode checkpoint.Mode, channels int) *aligner {
	return &aligner{mode: mode, ended: make([]bool, channels)}
}

// blocked reports whether what channel c delivers is held back: it
// delivered the barrier of the checkpoint being aligned (exactly-once).
func (a *aligner) blocked(c int32) bool {
	return a.mode == checkpoint.ExactlyOnce && len(a.pending) > 0 && a.pending[0].got[c] && !a.ended[c]
}

// barrier takes barrier b from channel c at now.
func (a *aligner) barrier(c int32, b *barrier, now time.Time) alignResult {
	var r alignResult
	if b.id <= a.done {
		return r // an old barrier: that checkpoint was taken or aborted
	}
	if a.mode == checkpoint.ExactlyOnce && len(a.pending) > 0 {
		switch cur := a.pending[0].b.id; {
		case b.id < cur:
			return r // older than the one being aligned: ignored
		case b.id > cur:
			// a newer checkpoint overtook the one being aligned
			r.aborted = append(r.aborted, abortedCheckpoint{cur, checkpoint.ReasonDeclinedSubsumed})
			a.pending = a.pending[:0]
			a.done = b.id - 1
			r.released = true
		}
	}
	p := a.find(b.id)
	if p == nil {
		p = a.start(b, now)
	}
	if !p.got[c] && !a.ended[c] {
		p.got[c] = true
		p.missing--
	}
	a.complete(&r, now)
	return r
}

// cancel takes a cancel marker of checkpoint id from a channel: a task
// upstream aborted it.
func (a *aligner) cancel(id checkpoint.ID) alignResult {
	var r alignResult
	if id <= a.done || a.mode == checkpoint.ExactlyOnce && len(a.pending) > 0 && id < a.pending[0].b.id {
		return r // older than what is done or being aligned: ignored
	}
	for len(a.pending) > 0 && a.pending[0].b.id < id {
		// an older checkpoint cannot complete once a newer one is
		// cancelled (Flink: the cancel of the next cancels the current)
		r.aborted = append(r.aborted, abortedCheckpoint{a.pending[0].b.id, checkpoint.ReasonDeclinedSubsumed})
		a.pending = a.pending[1:]
		r.released = a.mode == checkpoint.ExactlyOnce
	}
	if len(a.pending) > 0 && a.pending[0].b.id == id {
		a.pending = a.pending[1:]
		r.released = a.mode == checkpoint.ExactlyOnce
	}
	r.aborted = append(r.aborted, abortedCheckpoint{id, checkpoint.ReasonDeclinedOnCancellationBarrier})
	a.done = id
	return r
}

// end takes the end of channel c at now.
func (a *aligner) end(c int32, now time.Time) alignResult {
	var r alignResult
	a.ended[c] = true
	for _, p := range a.pending {
		if !p.got[c] {
			p.got[c] = true // it will deliver nothing more: as if its barrier came
			p.missing--
		}
	}
	a.complete(&r, now)
	return r
}

func (a *aligner) find(id checkpoint.ID) *alignment {
	for _, p := range a.pending {
		if p.b.id == id {
			return p
		}
	}
	return nil
}

// start begins tracking checkpoint b, whose first barrier came at now.
func (a *aligner) start(b *barrier, now time.Time) *alignment {
	p := &alignment{b: b, got: make([]bool, len(a.ended)), missing: len(a.ended), first: now}
	for c, ended := range a.ended {
		if ended {
			p.got[c] = true
			p.missing--
		}
	}
	i := len(a.pending)
	for i > 0 && a.pending[i-1].b.id > b.id {
		i--
	}
	a.pending = append(a.pending, nil)
	copy(a.pending[i+1:], a.pending[i:])
	a.pending[i] = p
	return p
}

// complete takes every tracked checkpoint whose barriers all came, oldest
// first, and aborts the older ones that are still waiting.
func (a *aligner) complete(r *alignResult, now time.Time) {
	for i := len(a.pending) - 1; i >= 0; i-- {
		p := a.pending[i]
		if p.missing > 0 {
			continue
		}
		var taken []takeCheckpoint
		for _, q := range a.pending[:i+1] {
			if q.missing == 0 {
				taken = append(taken, takeCheckpoint{q.b, now.Sub(q.first)})
			} else {
				r.aborted = append(r.aborted, abortedCheckpoint{q.b.id, checkpoint.ReasonDeclinedSubsumed})
			}
		}
		r.take = append(r.take, taken...)
		a.done = p.b.id
		a.pending = append(a.pending[:0], a.pending[i+1:]...)
		r.released = r.released || a.mode == checkpoint.ExactlyOnce
		return
	}
}
