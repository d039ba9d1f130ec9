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
	// unaligned: a checkpoint (never a savepoint) of a job with
	// unaligned checkpoints: it overtakes the data on the queues
	// (channel.control sends it on the gate's priority queue) and the
	// tasks snapshot at its first arrival (Flink's FLIP-76)
	unaligned bool
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
// Unaligned (exactly-once, a barrier with unaligned set), it is Flink's
// SingleCheckpointBarrierHandler with unaligned barriers: the first
// barrier of a checkpoint, on any channel, starts it at once (start: the
// loop snapshots the chain and forwards the barrier), and no channel is
// blocked. A barrier says how many data messages its channel sent before
// it (seq); the data a channel delivers from then on while it is below
// that count, or before its barrier came at all, was in flight at the
// snapshot: data tells the loop to persist it as the checkpoint's channel
// state (and to process it as usual). Once every channel's barrier came
// and its in-flight data was delivered, the checkpoint is persisted
// (persisted: the loop acknowledges it with the channel state).
//
// In both modes a channel that ended counts as having delivered every
// barrier still to come. A cancel marker (a task upstream aborted the
// checkpoint) aborts it here too (declined on cancellation barrier), and
// the abort travels on.
type aligner struct {
	mode  checkpoint.Mode
	ended []bool
	seen  []uint64 // per channel: the data messages it delivered
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
	// unaligned: per channel, the data messages it sent before its
	// barrier (its seq; meaningful once got); closed once its in-flight
	// data was all delivered; open counts the channels not closed
	limit  []uint64
	closed []bool
	open   int
}

// alignResult is what the gate loop does after an input to the aligner:
// abort each of aborted (decline it and forward a cancel marker), then
// take each of take, in order; with released, hand back what the blocked
// channels delivered meanwhile, before anything else.
//
// Unaligned: with start, snapshot the chain and forward the barrier now,
// persisting from then on the data the aligner says is in flight; with
// persisted, that checkpoint's channel state is complete: acknowledge it.
type alignResult struct {
	aborted   []abortedCheckpoint
	take      []takeCheckpoint
	released  bool
	start     *barrier
	persisted []takeCheckpoint
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
	return &aligner{mode: mode, ended: make([]bool, channels), seen: make([]uint64, channels)}
}

// blocked reports whether what channel c delivers is held back: it
// delivered the barrier of the checkpoint being aligned (exactly-once).
func (a *aligner) blocked(c int32) bool {
	return a.mode == checkpoint.ExactlyOnce && len(a.pending) > 0 && !a.pending[0].b.unaligned && a.pending[0].got[c] && !a.ended[c]
}

// data counts a data message delivered by channel c and reports whether
// it was in flight at the snapshot of the unaligned checkpoint being
// taken: it is then part of the checkpoint's channel state.
func (a *aligner) data(c int32, now time.Time) (inFlight bool, r alignResult) {
	a.seen[c]++
	if len(a.pending) == 0 || !a.pending[0].b.unaligned {
		return false, r
	}
	p := a.pending[0]
	if p.closed[c] {
		return false, r
	}
	if p.got[c] && a.seen[c] > p.limit[c] {
		// after its barrier: cannot be, as the loop takes a channel's
		// barrier before any data it sent after it; counted as not in
		// flight, so that nothing is persisted twice
		a.close(p, c)
		a.persist(&r, now)
		return false, r
	}
	if p.got[c] && a.seen[c] == p.limit[c] {
		a.close(p, c)
		a.persist(&r, now)
	}
	return true, r
}

func (a *aligner) close(p *alignment, c int32) {
	if !p.closed[c] {
		p.closed[c] = true
		p.open--
	}
}

// persist ends the unaligned checkpoint being taken once every channel
// closed.
func (a *aligner) persist(r *alignResult, now time.Time) {
	if len(a.pending) == 0 || !a.pending[0].b.unaligned || a.pending[0].open > 0 {
		return
	}
	p := a.pending[0]
	r.persisted = append(r.persisted, takeCheckpoint{b: p.b})
	a.done = p.b.id
	a.pending = a.pending[:0]
}

// barrier takes barrier b from channel c at now; seq is the number of
// data messages c sent before it (used for unaligned barriers).
func (a *aligner) barrier(c int32, b *barrier, seq uint64, now time.Time) alignResult {
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
		if b.unaligned && a.mode == checkpoint.ExactlyOnce {
			r.start = b
		}
	}
	if p.limit != nil {
		if !p.got[c] && !a.ended[c] {
			p.got[c], p.limit[c] = true, seq
			p.missing--
			if a.seen[c] >= seq {
				a.close(p, c)
			}
		}
		a.persist(&r, now)
		return r
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
		if p.limit != nil {
			a.close(p, c) // and what it delivered before its end was persisted
		}
	}
	a.complete(&r, now)
	a.persist(&r, now)
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
	if b.unaligned && a.mode == checkpoint.ExactlyOnce {
		p.limit, p.closed, p.open = make([]uint64, len(a.ended)), make([]bool, len(a.ended)), len(a.ended)
	}
	for c, ended := range a.ended {
		if ended {
			p.got[c] = true
			p.missing--
			if p.limit != nil {
				a.close(p, int32(c))
			}
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
		if p.missing > 0 || p.limit != nil {
			continue // unaligned ones end in persist
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
