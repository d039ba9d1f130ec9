package runtime

import (
	"math"
	"time"
)

// This file holds what travels between tasks: messages on bounded queues.
//
// Every (upstream subtask, downstream subtask) pair of a non-chained edge is
// a channel. A channel owns a fixed number of batch buffers (the queue
// capacity) circulating between its producer and its consumer:
//
//	producer: take a free buffer (block here when none is free: that is
//	          back-pressure), fill it with records, send it to the gate
//	consumer: receive from the gate, process the batch, give the buffer back
//
// so at most capacity batches per channel are in flight, like Flink's
// credit-based flow control with exclusive buffers. The consumer side is one
// Go channel per downstream subtask (its input gate) shared by all of the
// subtask's channels, large enough to hold every buffer of every channel and
// one end-of-partition message each, so a send to it never blocks; the
// subtask receives from one place whatever its inputs deliver, in arrival
// order, which keeps a union or a two-input operator free of deadlocks.

// msgKind tells data from control messages: checkpoint barriers, cancel
// markers, watermarks and watermark statuses travel the same queues, in
// order with the data.
type msgKind uint8

const (
	// msgData carries a batch of records.
	msgData msgKind = iota
	// msgEnd ends a channel: its producer will send nothing more.
	msgEnd
	// msgBarrier is checkpoint barrier bar: what the channel delivered
	// before it belongs to the checkpoint.
	msgBarrier
	// msgCancel says checkpoint bar.id was aborted upstream (Flink's
	// CancelCheckpointMarker).
	msgCancel
	// msgWatermark is watermark wm of the channel (eventtime.go).
	msgWatermark
	// msgStatus says the channel went idle (idle) or active again
	// (Flink's WatermarkStatus).
	msgStatus
	// msgTimer is no message of a channel: receive returns it when a
	// wall-clock processing-time timer of the chain is due (timers.go).
	msgTimer
)

// message is what a gate delivers.
type message struct {
	kind    msgKind
	channel int32    // index of the channel at the receiving gate
	buf     *batch   // msgData: the records; give it back with release
	bar     *barrier // msgBarrier, msgCancel
	wm      int64    // msgWatermark
	idle    bool     // msgStatus
	// seq, of an unaligned msgBarrier: how many data messages its channel
	// sent before it (the barrier overtakes those still queued)
	seq uint64
}

// batch is a buffer of records in the abi wire format.
type batch struct {
	data  []byte
	count int
	home  chan *batch // the free list of the channel it belongs to
	// spans splits data into its records when it holds count of them: a
	// HASH edge into a built-in aggregation parsed every record it
	// appended, so the aggregation need not parse them again. A record
	// appended without a span (any other route, a keyless record) leaves
	// it short for the rest of the batch, and the consumer parses.
	spans []span
}

// span is where the parts of one record of a batch start: its key and its
// value, and where it ends (the next record starts there).
type span struct{ key, value, end int32 }

// addSpan records the span of the record just appended, whose key and
// value are the last keyLen+valueLen bytes of data.
func (b *batch) addSpan(keyLen, valueLen int) {
	end := len(b.data)
	if len(b.spans) != b.count-1 || end > math.MaxInt32 {
		return // short already, or too large to index: the consumer parses
	}
	b.spans = append(b.spans, span{key: int32(end - valueLen - keyLen), value: int32(end - valueLen), end: int32(end)})
}

// split returns the spans of the batch's records, or nil when the batch
// must be parsed.
func (b *batch) split() []span {
	if len(b.spans) != b.count {
		return nil
	}
	return b.spans
}

// release gives a consumed batch back to its channel's producer.
func (b *batch) release() {
	b.data, b.count, b.spans = b.data[:0], 0, b.spans[:0]
	b.home <- b // never blocks: home holds every buffer of the channel
}

// gate is the input of one downstream subtask: every channel of every
// input edge delivers to queue.
type gate struct {
	queue chan message
	// prio carries the unaligned barriers, which overtake what queue
	// holds (Flink's priority events); nil unless the job takes unaligned
	// checkpoints
	prio   chan message
	inputs []int // per channel: the input index of its edge (0, or 1 for a co-operator's second input)
	ended  int   // channels that sent msgEnd
}

// channel is the producer end of one (upstream subtask, downstream
// subtask) pair. It is used by one producer at a time (under its
// edgeOut's lock).
type channel struct {
	gate  *gate
	index int32
	free  chan *batch
	cur   *batch // being filled; nil when nothing is pending
	bytes int    // capacity of a new buffer
	sent  uint64 // data messages sent
}

func newChannel(g *gate, input, capacity, bytes int) *channel {
	c := &channel{gate: g, index: int32(len(g.inputs)), free: make(chan *batch, capacity), bytes: bytes}
	g.inputs = append(g.inputs, input)
	for i := 0; i < capacity; i++ {
		c.free <- &batch{home: c.free}
	}
	return c
}

// acquire makes sure c.cur is a buffer to append to, waiting for a free one
// (back-pressure, added to *blocked) unless done closes first.
func (c *channel) acquire(done <-chan struct{}, blocked *counter) error {
	var b *batch
	select {
	case b = <-c.free:
	default:
		start := time.Now()
		select {
		case b = <-c.free:
		case <-done:
			return errStopped
		}
		blocked.add(int64(time.Since(start)))
	}
	if b.data == nil {
		b.data = make([]byte, 0, c.bytes+c.bytes/4)
	}
	c.cur = b
	return nil
}

// flush sends the pending batch, if any, to the gate.
func (c *channel) flush(done <-chan struct{}) error {
	b := c.cur
	if b == nil {
		return nil
	}
	c.cur = nil
	c.sent++
	return c.send(message{kind: msgData, channel: c.index, buf: b}, done)
}

// control flushes and sends m, a barrier or a cancel marker, after it.
// An unaligned barrier goes on the gate's priority queue, ahead of the
// data queued before it, and says how much data that was (seq): what
// the consumer delivers of it afterwards is the checkpoint's channel
// state. It is sent after the flush, so a consumer that received any
// data sent after the barrier finds the barrier on prio.
func (c *channel) control(m message, done <-chan struct{}) error {
	if err := c.flush(done); err != nil {
		return err
	}
	m.channel = c.index
	if m.kind == msgBarrier && m.bar.unaligned && c.gate.prio != nil {
		m.seq = c.sent
		select {
		case c.gate.prio <- m:
			return nil
		case <-done:
			return errStopped
		}
	}
	return c.send(m, done)
}

// end flushes and sends the end of the channel.
func (c *channel) end(done <-chan struct{}) error {
	if err := c.flush(done); err != nil {
		return err
	}
	return c.send(message{kind: msgEnd, channel: c.index}, done)
}

func (c *channel) send(m message, done <-chan struct{}) error {
	select {
	case c.gate.queue <- m:
		return nil
	default:
	}
	select { // not reached while the queue is sized right; never deadlock
	case c.gate.queue <- m:
		return nil
	case <-done:
		return errStopped
	}
}

// receive returns the next message of g, adding the time spent waiting to
// *idle; ok is false when done closed first.
func (g *gate) receive(done <-chan struct{}, idle *counter, wake func() <-chan time.Time) (m message, ok bool) {
	select {
	case m = <-g.queue:
		return m, true
	default:
	}
	var w <-chan time.Time
	if wake != nil {
		w = wake()
	}
	start := time.Now()
	select {
	case m = <-g.queue:
		idle.add(int64(time.Since(start)))
		return m, true
	case <-w:
		idle.add(int64(time.Since(start)))
		return message{kind: msgTimer}, true
	case <-done:
		return m, false
	}
}
