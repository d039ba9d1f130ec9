package runtime

import "time"

// This file holds the two places barriers enter a subtask while
// checkpointing is on: a source's Collector (sourceOut), which injects
// them between batches, and the input loop (runInputCheckpointed), which
// aligns them across the input channels. With checkpointing off neither
// runs: a source gets its chain's collector, a subtask reads its gate with
// runInput.

// sourceOut is the Collector of a source while checkpointing is on: after
// each batch it hands on it does the subtask's mail (a barrier to inject:
// the source's position then includes every record emitted), and it is
// the source's SourceMailbox.
type sourceOut struct {
	c *collector
	s *subtask
}

var (
	_ EndsCollector = (*sourceOut)(nil)
	_ SourceMailbox = (*sourceOut)(nil)
)

func (o *sourceOut) Emit(port int, buf []byte, count int) error {
	return o.EmitEnds(port, buf, count, nil)
}

func (o *sourceOut) EmitEnds(port int, buf []byte, count int, ends []byte) error {
	if o.s.ck.stopped {
		return errSourceStopped
	}
	if err := o.c.EmitEnds(port, buf, count, ends); err != nil {
		return err
	}
	if len(o.s.ck.mail.signal) > 0 {
		return o.Yield()
	}
	return nil
}

// Pending is ready when the source has mail.
func (o *sourceOut) Pending() <-chan struct{} { return o.s.ck.mail.signal }

// Yield does the source's mail now.
func (o *sourceOut) Yield() error {
	if o.s.ck.stopped {
		return errSourceStopped
	}
	select {
	case <-o.s.ck.mail.signal:
	default:
	}
	if err := o.s.handleMail(); err != nil {
		return err
	}
	if o.s.ck.stopped {
		return errSourceStopped
	}
	return nil
}

// runInputCheckpointed is runInput with barriers: it feeds the head
// operator until every input channel ended, hands barriers, cancel
// markers and ends to the aligner and does what it says, holds back what
// a blocked channel delivers (exactly-once) and does the subtask's mail.
func (s *subtask) runInputCheckpointed() error {
	g, ck := s.gate, s.ck
	done := s.e.ctx.Done()
	wake := s.wakeFunc()
	for g.ended < len(g.inputs) {
		var m message
		if len(ck.ready) > 0 {
			m = ck.ready[0]
			ck.ready[0] = message{}
			ck.ready = ck.ready[1:]
		} else {
			select {
			case m = <-g.prio: // nil without unaligned checkpoints
			case m = <-g.queue:
			default:
				var w <-chan time.Time
				if wake != nil {
					w = wake()
				}
				start := time.Now()
				select {
				case m = <-g.prio:
					s.metrics.idle.add(int64(time.Since(start)))
				case m = <-g.queue:
					s.metrics.idle.add(int64(time.Since(start)))
				case <-w:
					s.metrics.idle.add(int64(time.Since(start)))
					if err := s.fireProcessing(); err != nil {
						return err
					}
					continue
				case <-ck.mail.signal:
					s.metrics.idle.add(int64(time.Since(start)))
					if err := s.handleMail(); err != nil {
						return err
					}
					continue
				case <-done:
					return errStopped
				}
			}
		}
		if len(ck.mail.signal) > 0 {
			<-ck.mail.signal
			if err := s.handleMail(); err != nil {
				return err
			}
		}
		if m.kind == msgData && g.prio != nil {
			// an unaligned barrier its channel sent before this data is on
			// prio by now: it goes first, so that data after a barrier is
			// never taken for in-flight data
			if err := s.takePriority(); err != nil {
				return err
			}
		}
		if err := s.dispatch(m); err != nil {
			return err
		}
	}
	return nil
}

// takePriority dispatches the unaligned barriers waiting on the gate's
// priority queue.
func (s *subtask) takePriority() error {
	for {
		select {
		case p := <-s.gate.prio:
			if err := s.dispatch(p); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// dispatch handles one message from the gate (or released from the
// stash).
func (s *subtask) dispatch(m message) error {
	ck, g := s.ck, s.gate
	if ck.align.blocked(m.channel) {
		ck.stash[m.channel] = append(ck.stash[m.channel], m)
		return nil
	}
	var r alignResult
	switch m.kind {
	case msgData:
		var inFlight bool
		inFlight, r = ck.align.data(m.channel, s.e.now())
		if inFlight {
			s.keepInFlight(g.inputs[m.channel], m.buf)
		}
		err := s.ops[0].processBatch(g.inputs[m.channel], m.buf)
		m.buf.release()
		if err != nil {
			return err
		}
	case msgWatermark, msgStatus:
		return s.inputTime(m)
	case msgEnd:
		g.ended++
		if err := s.inputTime(m); err != nil {
			return err
		}
		r = ck.align.end(m.channel, s.e.now())
	case msgBarrier:
		r = ck.align.barrier(m.channel, m.bar, m.seq, s.e.now())
	case msgCancel:
		r = ck.align.cancel(m.bar.id)
	}
	for _, a := range r.aborted {
		if err := s.abortCheckpoint(a); err != nil {
			return err
		}
	}
	if r.start != nil {
		if err := s.startUnaligned(r.start); err != nil {
			return err
		}
	}
	for _, t := range r.take {
		if err := s.takeCheckpoint(t.b, t.alignment); err != nil {
			return err
		}
	}
	for _, t := range r.persisted {
		s.persistUnaligned(t.b.id)
	}
	if r.released {
		// what the blocked channels held goes first, before what is
		// still to be handed on: each channel's messages stay in order
		ck.ready = append(ck.takeStash(), ck.ready...)
	}
	return nil
}

// takeStash returns what blocked channels delivered, channel by channel,
// and empties the stash.
func (ck *subtaskCheckpoint) takeStash() []message {
	var out []message
	for c, held := range ck.stash {
		out = append(out, held...)
		clear(held)
		ck.stash[c] = held[:0]
	}
	return out
}

// takeHeld returns every message held back or released but not handled.
func (ck *subtaskCheckpoint) takeHeld() []message {
	held := append(ck.takeStash(), ck.ready...)
	ck.ready = nil
	return held
}
