package runtime

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/pipeline"
)

// The aligner's unaligned rules (Flink's SingleCheckpointBarrierHandler
// with unaligned barriers), driven without goroutines or clocks: the
// first barrier starts the checkpoint, nothing is blocked, and the data a
// channel delivers before its own barrier's count (seq) is in flight.
func TestAlignerUnaligned(t *testing.T) {
	now := time.Unix(0, 0)
	b1 := &barrier{id: 1, unaligned: true}
	a := newAligner(checkpoint.ExactlyOnce, 3)
	// before any barrier: channel 0 delivered 1 message, channel 1 two
	for _, c := range []int32{0, 1, 1} {
		if in, r := a.data(c, now); in || !reflect.DeepEqual(r, alignResult{}) {
			t.Fatalf("data before the checkpoint: in flight %v, %+v", in, r)
		}
	}
	// channel 0's barrier overtakes 2 more messages it sent (seq 3)
	r := a.barrier(0, b1, 3, now)
	if r.start != b1 || len(r.take)+len(r.persisted)+len(r.aborted) != 0 {
		t.Fatalf("first barrier: %+v, want start only", r)
	}
	for c := int32(0); c < 3; c++ {
		if a.blocked(c) {
			t.Fatalf("channel %d blocked in an unaligned checkpoint", c)
		}
	}
	steps := []struct {
		ch       int32
		inFlight bool
		persist  bool
	}{
		{0, true, false},  // seq 2 of channel 0: overtaken
		{1, true, false},  // channel 1, barrier not come: in flight
		{0, true, false},  // seq 3 of channel 0: the last overtaken
		{0, false, false}, // seq 4: after its barrier
		{2, true, false},
	}
	for i, s := range steps {
		in, r := a.data(s.ch, now)
		if in != s.inFlight || (len(r.persisted) > 0) != s.persist {
			t.Fatalf("step %d (data on %d): in flight %v, persisted %v; want %v %v", i, s.ch, in, r.persisted, s.inFlight, s.persist)
		}
	}
	// channel 1's barrier: it sent 3, and 3 were delivered: closed
	if r := a.barrier(1, b1, 3, now); r.start != nil || len(r.persisted) != 0 {
		t.Fatalf("barrier on 1: %+v", r)
	}
	// channel 2's: one more of its messages is still queued
	if r := a.barrier(2, b1, 2, now); len(r.persisted) != 0 {
		t.Fatalf("barrier on 2 with data in flight: %+v", r)
	}
	in, r := a.data(2, now)
	if !in || len(r.persisted) != 1 || r.persisted[0].b != b1 {
		t.Fatalf("last in-flight message: in flight %v, %+v; want persisted 1", in, r)
	}
	if in, _ := a.data(1, now); in {
		t.Fatal("data after the checkpoint persisted")
	}
	// an old barrier is ignored; the next checkpoint with an ended channel
	if r := a.barrier(1, b1, 9, now); !reflect.DeepEqual(r, alignResult{}) {
		t.Fatalf("old barrier: %+v", r)
	}
	b2 := &barrier{id: 2, unaligned: true}
	a.end(2, now)
	if r := a.barrier(0, b2, a.seen[0], now); r.start != b2 || len(r.persisted) != 0 {
		t.Fatalf("checkpoint 2 start: %+v", r)
	}
	// a newer barrier subsumes it
	b3 := &barrier{id: 3, unaligned: true}
	r = a.barrier(1, b3, a.seen[1], now)
	if r.start != b3 || !reflect.DeepEqual(r.aborted, []abortedCheckpoint{{2, checkpoint.ReasonDeclinedSubsumed}}) {
		t.Fatalf("newer barrier: %+v", r)
	}
	// channel 0 ends with nothing in flight: every channel closed
	if r := a.end(0, now); len(r.persisted) != 1 || r.persisted[0].b != b3 {
		t.Fatalf("end of the last open channel: %+v", r)
	}
	// a cancel marker aborts one being taken
	b := &barrier{id: 4, unaligned: true}
	a2 := newAligner(checkpoint.ExactlyOnce, 2)
	a2.barrier(0, b, 0, now)
	if r := a2.cancel(4); !reflect.DeepEqual(r.aborted, []abortedCheckpoint{{4, checkpoint.ReasonDeclinedOnCancellationBarrier}}) {
		t.Fatalf("cancel: %+v", r)
	}
	if in, _ := a2.data(1, now); in {
		t.Fatal("data after a cancelled checkpoint persisted")
	}
}

// gatedConnectors are ckConnectors whose sinks block in their first
// Process until open closes.
type gatedConnectors struct {
	*ckConnectors
	open    chan struct{}
	entered chan struct{} // a sink is in its first Process
}

func (c *gatedConnectors) Sink(spec *pipeline.Operator, subtask, p int) (Operator, error) {
	op, err := c.ckConnectors.Sink(spec, subtask, p)
	return &gatedSink{Operator: op, open: c.open, entered: c.entered}, err
}

type gatedSink struct {
	Operator
	open, entered chan struct{}
}

func (s *gatedSink) Process(input int, b []byte, count int, out Collector) error {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	<-s.open
	return s.Operator.Process(input, b, count, out)
}

const unalignedJob = `
version: 1
name: keyed
operators:
  - id: src
    source: { type: generator, preset: sequence, count: %d }
  - id: total
    key-by: k
    sum: v
  - id: out
    sink: { type: discard }
`

// TestUnalignedCheckpointOvertakesBackPressure: a keyed job whose sink is
// stuck (back-pressure: the sum's four input buffers are all taken). The
// unaligned barrier overtakes the three queued batches: the sum snapshots
// after the one batch it was processing and persists the three as channel
// state; the aligned barrier waits behind them and persists nothing. A
// run restored from either checkpoint, through the checkpoint files, ends
// with the totals of an uninterrupted run; the unaligned one is refused at
// another parallelism.
func TestUnalignedCheckpointOvertakesBackPressure(t *testing.T) {
	const count, hold = 1000, 40 // 4 batches of 10 before the checkpoint
	want := map[int64]int64{}
	for n := int64(0); n < count; n++ {
		want[n%10] += n
	}
	for _, unaligned := range []bool{true, false} {
		name := map[bool]string{true: "unaligned", false: "aligned"}[unaligned]
		t.Run(name, func(t *testing.T) {
			job := fmt.Sprintf(unalignedJob, count)
			acks := newAckRecorder()
			conn := &gatedConnectors{ckConnectors: newCkConnectors(), open: make(chan struct{}), entered: make(chan struct{}, 1)}
			conn.keys, conn.hold = 10, hold
			opts := Options{BatchSize: 10, Linger: time.Hour, QueueCapacity: 4, UnalignedCheckpoints: unaligned}
			e, err := Start(context.Background(), planYAML(t, job, nil), Deps{Connectors: conn, Checkpoints: acks, Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			<-conn.held
			<-conn.entered // the sum is inside its first batch, three are queued
			if err := e.TriggerCheckpoint(1, checkpoint.KindCheckpoint, time.Now(), false); err != nil {
				t.Fatal(err)
			}
			// the source acknowledges once its barrier is sent; the sum is
			// still stuck in its first batch
			acks.waitFor(t, "the source to send its barrier", func() bool { return len(acks.acks[1]) == 1 })
			close(conn.open)
			acks.waitAcked(t, e, 1)
			acks.mu.Lock()
			var inFlight, records int
			for _, st := range acks.states[1] {
				if _, ok := checkpoint.ChannelStateOf(st.Operator); ok {
					for _, el := range st.Split {
						cb, err := checkpoint.ParseChannelBatch(el)
						if err != nil {
							t.Fatal(err)
						}
						inFlight++
						records += cb.Count
					}
				}
			}
			acks.mu.Unlock()
			if unaligned && (inFlight != 3 || records != 30) {
				t.Errorf("unaligned: %d batches (%d records) in flight, want the 3 (30) the barrier overtook", inFlight, records)
			}
			if !unaligned && inFlight != 0 {
				t.Errorf("aligned: %d batches in flight, want none", inFlight)
			}
			rd := acks.publish(t, t.TempDir(), 1)
			e.Cancel()
			if _, err := e.Wait(); !errors.Is(err, context.Canceled) {
				t.Fatalf("first run: %v", err)
			}
			if unaligned {
				edit := func(pl *pipeline.Pipeline) { pl.Operators[1].Parallelism = 2; pl.Operators[2].Parallelism = 2 }
				conn3 := newCkConnectors()
				conn3.keys = 10
				_, err := Run(context.Background(), planYAML(t, job, edit), Deps{Connectors: conn3, Restore: rd})
				if !errors.Is(err, checkpoint.ErrRescaleChannelState) {
					t.Errorf("restore at another parallelism: %v, want %v", err, checkpoint.ErrRescaleChannelState)
				}
			}
			conn2 := newCkConnectors()
			conn2.keys = 10
			if _, err := Run(context.Background(), planYAML(t, job, nil), Deps{Connectors: conn2, Restore: rd}); err != nil {
				t.Fatal(err)
			}
			got := lastPerKey(conn2.fakeConnectors)
			for k, v := range want {
				if got[k] != v {
					t.Errorf("key %d: total %d after the restore, want %d (uninterrupted)", k, got[k], v)
				}
			}
		})
	}
}
