package runtime

import (
	"reflect"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
)

// The aligner's rules, driven without goroutines or clocks. Each step is
// one input (a barrier, a cancel marker or an end from a channel) and what
// the gate loop must then do; between steps, which channels are blocked.

type alignStep struct {
	ev      string // "b" barrier, "c" cancel, "e" end
	ch      int32
	id      checkpoint.ID
	take    []checkpoint.ID
	aborted []abortedCheckpoint
	release bool
	blocked []int32 // after the step
}

func runAlign(t *testing.T, mode checkpoint.Mode, channels int, steps []alignStep) {
	t.Helper()
	a := newAligner(mode, channels)
	now := time.Unix(0, 0)
	bars := map[checkpoint.ID]*barrier{}
	for i, s := range steps {
		now = now.Add(time.Millisecond)
		var r alignResult
		switch s.ev {
		case "b":
			if bars[s.id] == nil {
				bars[s.id] = &barrier{id: s.id}
			}
			r = a.barrier(s.ch, bars[s.id], 0, now)
		case "c":
			r = a.cancel(s.id)
		case "e":
			r = a.end(s.ch, now)
		}
		var took []checkpoint.ID
		for _, tk := range r.take {
			took = append(took, tk.b.id)
		}
		if !reflect.DeepEqual(took, s.take) || !reflect.DeepEqual(r.aborted, s.aborted) || r.released != s.release {
			t.Fatalf("step %d (%s ch %d id %d): took %v aborted %v released %v, want %v %v %v",
				i, s.ev, s.ch, s.id, took, r.aborted, r.released, s.take, s.aborted, s.release)
		}
		var blocked []int32
		for c := int32(0); c < int32(channels); c++ {
			if a.blocked(c) {
				blocked = append(blocked, c)
			}
		}
		if !reflect.DeepEqual(blocked, s.blocked) {
			t.Fatalf("step %d: blocked %v, want %v", i, blocked, s.blocked)
		}
	}
}

func ids(x ...checkpoint.ID) []checkpoint.ID { return x }

func subsumed(id checkpoint.ID) abortedCheckpoint {
	return abortedCheckpoint{id, checkpoint.ReasonDeclinedSubsumed}
}

func cancelled(id checkpoint.ID) abortedCheckpoint {
	return abortedCheckpoint{id, checkpoint.ReasonDeclinedOnCancellationBarrier}
}

func TestCheckpointAlignerExactlyOnce(t *testing.T) {
	t.Run("aligns", func(t *testing.T) {
		runAlign(t, checkpoint.ExactlyOnce, 3, []alignStep{
			{ev: "b", ch: 1, id: 1, blocked: []int32{1}},
			{ev: "b", ch: 1, id: 1, blocked: []int32{1}}, // repeated: nothing
			{ev: "b", ch: 0, id: 1, blocked: []int32{0, 1}},
			{ev: "b", ch: 2, id: 1, take: ids(1), release: true},
			{ev: "b", ch: 2, id: 1}, // late copy of a taken one: ignored
			{ev: "b", ch: 2, id: 2, blocked: []int32{2}},
		})
	})
	t.Run("one channel takes at once", func(t *testing.T) {
		runAlign(t, checkpoint.ExactlyOnce, 1, []alignStep{
			{ev: "b", ch: 0, id: 7, take: ids(7), release: true},
		})
	})
	t.Run("an ended channel counts as delivered", func(t *testing.T) {
		runAlign(t, checkpoint.ExactlyOnce, 3, []alignStep{
			{ev: "e", ch: 2},
			{ev: "b", ch: 0, id: 1, blocked: []int32{0}},
			{ev: "e", ch: 1, take: ids(1), release: true}, // ends during alignment
			{ev: "b", ch: 0, id: 2, take: ids(2), release: true},
		})
	})
	t.Run("a newer barrier aborts the alignment of the older", func(t *testing.T) {
		// Flink's SingleCheckpointBarrierHandler: barrier 2 on channel 1
		// while 1 is aligned declines 1 (CHECKPOINT_DECLINED_SUBSUMED) and
		// aligns 2; barrier 1 arriving late is ignored
		runAlign(t, checkpoint.ExactlyOnce, 3, []alignStep{
			{ev: "b", ch: 0, id: 1, blocked: []int32{0}},
			{ev: "b", ch: 1, id: 2, aborted: []abortedCheckpoint{subsumed(1)}, release: true, blocked: []int32{1}},
			{ev: "b", ch: 2, id: 1, blocked: []int32{1}},
			{ev: "b", ch: 0, id: 2, blocked: []int32{0, 1}},
			{ev: "b", ch: 2, id: 2, take: ids(2), release: true},
		})
	})
	t.Run("cancel markers", func(t *testing.T) {
		runAlign(t, checkpoint.ExactlyOnce, 2, []alignStep{
			{ev: "b", ch: 0, id: 1, blocked: []int32{0}},
			{ev: "c", ch: 1, id: 1, aborted: []abortedCheckpoint{cancelled(1)}, release: true},
			{ev: "b", ch: 1, id: 1}, // its barrier after the cancel: ignored
			{ev: "c", ch: 1, id: 1}, // a second cancel: nothing
			// a cancel of a newer one cancels the one aligned
			{ev: "b", ch: 0, id: 2, blocked: []int32{0}},
			{ev: "c", ch: 1, id: 3, aborted: []abortedCheckpoint{subsumed(2), cancelled(3)}, release: true},
			{ev: "b", ch: 0, id: 3},
			// a cancel of an older one than is aligned: ignored
			{ev: "b", ch: 0, id: 5, blocked: []int32{0}},
			{ev: "c", ch: 1, id: 4, blocked: []int32{0}},
			{ev: "b", ch: 1, id: 5, take: ids(5), release: true},
		})
	})
}

func TestCheckpointAlignerAtLeastOnce(t *testing.T) {
	t.Run("counts without blocking", func(t *testing.T) {
		runAlign(t, checkpoint.AtLeastOnce, 3, []alignStep{
			{ev: "b", ch: 0, id: 1},
			{ev: "b", ch: 0, id: 2}, // a fast channel already at the next
			{ev: "b", ch: 1, id: 1},
			{ev: "b", ch: 1, id: 2},
			{ev: "b", ch: 2, id: 1, take: ids(1)},
			{ev: "b", ch: 2, id: 2, take: ids(2)},
		})
	})
	t.Run("an end completes every waiting one, in order", func(t *testing.T) {
		runAlign(t, checkpoint.AtLeastOnce, 2, []alignStep{
			{ev: "b", ch: 0, id: 1},
			{ev: "b", ch: 0, id: 2},
			{ev: "e", ch: 1, take: ids(1, 2)},
		})
	})
	t.Run("a completed one subsumes the older still waiting", func(t *testing.T) {
		runAlign(t, checkpoint.AtLeastOnce, 2, []alignStep{
			{ev: "b", ch: 0, id: 1},
			{ev: "b", ch: 0, id: 2},
			{ev: "b", ch: 1, id: 2, take: ids(2), aborted: []abortedCheckpoint{subsumed(1)}},
			{ev: "b", ch: 1, id: 1}, // late: ignored
		})
	})
	t.Run("a cancel aborts it and the older ones", func(t *testing.T) {
		runAlign(t, checkpoint.AtLeastOnce, 2, []alignStep{
			{ev: "b", ch: 0, id: 1},
			{ev: "b", ch: 0, id: 2},
			{ev: "b", ch: 0, id: 3},
			{ev: "c", ch: 1, id: 2, aborted: []abortedCheckpoint{subsumed(1), cancelled(2)}},
			{ev: "b", ch: 1, id: 2},
			{ev: "b", ch: 1, id: 3, take: ids(3)},
		})
	})
}
