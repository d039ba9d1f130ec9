package runtime

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
)

// BenchmarkCheckpointKeyed: BenchmarkKeyedShuffle's job (2 sources ->
// HASH on accountId -> 2 keyed sums -> discard) without checkpointing,
// and with an exactly-once checkpoint triggered every 100 ms: barriers
// through the queues, alignment at the sums, a snapshot of the sums'
// keyed state (1000 keys) and of nothing else, acknowledgements, and the
// completion notified. The states are dropped, not written: this is the
// engine's part of a checkpoint. Figures: records/s, cpu-ns/rec and the
// checkpoints completed.
func BenchmarkCheckpointKeyed(b *testing.B) {
	b.Run("none", func(b *testing.B) { benchRun(b, shufflePipeline, nil) })
	b.Run("barriers-100ms", func(b *testing.B) {
		acks := &countingAcks{}
		benchRunWith(b, shufflePipeline, nil, Deps{Checkpoints: acks}, checkpointEvery(acks, 100*time.Millisecond))
		b.ReportMetric(float64(acks.done.Load()), "checkpoints")
	})
}

// countingAcks counts the acknowledgements of each checkpoint and drops
// the states.
type countingAcks struct {
	tasks int
	mu    sync.Mutex
	n     map[checkpoint.ID]int
	ch    chan struct{}
	done  atomic.Int64
}

func (a *countingAcks) Acknowledge(_ checkpoint.Task, id checkpoint.ID, _ []checkpoint.SubtaskState, _ checkpoint.TaskMetrics) {
	a.mu.Lock()
	if a.n == nil {
		a.n = map[checkpoint.ID]int{}
	}
	a.n[id]++
	ch := a.ch
	a.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (a *countingAcks) Decline(checkpoint.Task, checkpoint.ID, checkpoint.FailureReason, error) {}

func (a *countingAcks) wake() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ch == nil {
		a.ch = make(chan struct{}, 1)
	}
	return a.ch
}

func (a *countingAcks) completed(id checkpoint.ID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n[id] == a.tasks {
		a.done.Add(1)
		return true
	}
	return false
}

// checkpointEvery triggers a checkpoint every d while the job runs, one
// at a time, and notifies each complete once every task acknowledged it
// (acks counts them).
func checkpointEvery(acks *countingAcks, d time.Duration) func(*Execution) {
	return func(e *Execution) {
		acks.tasks = len(e.Tasks())
		t := time.NewTicker(d)
		defer t.Stop()
		for id := checkpoint.ID(1); ; id++ {
			select {
			case <-e.Done():
				return
			case now := <-t.C:
				if e.TriggerCheckpoint(id, checkpoint.KindCheckpoint, now, false) != nil {
					return // ended meanwhile
				}
			}
			for done := acks.completed(id); ; {
				if done {
					e.NotifyCheckpointComplete(id)
					break
				}
				select {
				case <-e.Done():
					return
				case <-acks.wake():
					done = acks.completed(id)
				}
			}
		}
	}
}
