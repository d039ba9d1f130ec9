package runtime

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
)

// This file holds a subtask's side of unaligned checkpoints (Flink's
// FLIP-76; docs/checkpoints.md, "Unaligned checkpoints"). The barrier
// overtakes the data queued on the channels (it travels the gate's
// priority queue); at the first one the subtask snapshots its chain and
// forwards the barrier at once, ahead of its own queued output; the data
// it then delivers that its upstream sent before the barrier — on every
// channel, up to that channel's barrier — was in flight at the snapshot:
// it is processed as usual and also kept, and once every channel's barrier
// came the checkpoint is acknowledged with it as channel state. A restore
// replays the channel state through the head operator before any new
// input.
//
// The producer's queued output buffers, which Flink persists as output
// channel state, are here already in the consumer's gate (a send never
// blocks), so the consumer's input channel state holds them; the buffer
// being filled is flushed ahead of the barrier.

// unalignedTake is an unaligned checkpoint a subtask snapshotted and whose
// in-flight data it is persisting.
type unalignedTake struct {
	b      *barrier
	states []checkpoint.SubtaskState
	sync   time.Duration
	data   [][]byte // channel state elements (checkpoint.AppendChannelBatch)
}

// startUnaligned takes checkpoint b at the first of its barriers: it
// snapshots the chain and forwards the barrier; the acknowledgement waits
// for the in-flight data (persistUnaligned).
func (s *subtask) startUnaligned(b *barrier) error {
	ck := s.ck
	if b.id <= ck.handled || s.err != nil || s.e.failed() {
		return nil
	}
	ck.handled = b.id
	start := time.Now()
	states, err := s.snapshotChain(b.id, b.kind == checkpoint.KindCheckpoint)
	if err != nil {
		s.e.ckpt.acks.Decline(s.checkpointTask(), b.id, checkpoint.ReasonDeclined, err)
		return s.forward(message{kind: msgCancel, bar: b})
	}
	ck.taking = &unalignedTake{b: b, states: states, sync: time.Since(start)}
	return s.forward(message{kind: msgBarrier, bar: b})
}

// keepInFlight adds a data message that was in flight at the snapshot to
// the channel state of the checkpoint being taken.
func (s *subtask) keepInFlight(input int, buf *batch) {
	if t := s.ck.taking; t != nil {
		t.data = append(t.data, checkpoint.AppendChannelBatch(nil, checkpoint.ChannelBatch{Input: input, Count: buf.count, Data: buf.data}))
	}
}

// persistUnaligned acknowledges the unaligned checkpoint being taken, its
// channel state complete.
func (s *subtask) persistUnaligned(id checkpoint.ID) {
	t := s.ck.taking
	if t == nil || t.b.id != id {
		return // declined at its start (a snapshot failed) or aborted
	}
	s.ck.taking = nil
	if s.err != nil || s.e.failed() {
		return
	}
	states := append(t.states, s.channelState(t.data))
	s.e.ckpt.acks.Acknowledge(s.checkpointTask(), id, states, checkpoint.TaskMetrics{Sync: t.sync})
}

// channelState is the subtask's channel state entry holding data.
func (s *subtask) channelState(data [][]byte) checkpoint.SubtaskState {
	head := s.ops[0].spec
	return checkpoint.SubtaskState{Operator: checkpoint.ChannelStateID(head.ID), Subtask: s.index,
		Parallelism: head.Parallelism, MaxParallelism: head.MaxParallelism, Split: data}
}

// channelStateRestorer is a Restorer that also gives back channel state
// (*checkpoint.Reader).
type channelStateRestorer interface {
	ChannelState(head string, subtask, parallelism, maxParallelism int) ([]checkpoint.ChannelBatch, error)
}

// replayChannelState feeds the head operator the in-flight data of the
// checkpoint the job starts from, before any new input, in the order it
// was delivered.
func (s *subtask) replayChannelState() error {
	r, ok := s.e.deps.Restore.(channelStateRestorer)
	if !ok || s.gate == nil {
		return nil
	}
	head := s.ops[0]
	bs, err := r.ChannelState(head.spec.ID, s.index, head.spec.Parallelism, head.spec.MaxParallelism)
	if err != nil {
		return head.fail(fmt.Errorf("restoring from a checkpoint: %w", err))
	}
	if len(bs) == 0 {
		return nil
	}
	home := make(chan *batch, 1)
	for _, cb := range bs {
		b := &batch{data: append(make([]byte, 0, len(cb.Data)), cb.Data...), count: cb.Count, home: home}
		err := head.processBatch(cb.Input, b)
		b.release()
		<-home
		if err != nil {
			return err
		}
	}
	return nil
}
