package runtime

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/sluicehq/sluice/abi"
)

// Timers is the timer service of one subtask of a keyed operator, as
// Flink's InternalTimerServiceImpl: event-time and processing-time timers
// per key, one per (kind, key, timestamp), fired in timestamp order.
//
// A timer is keyed state: the timestamps of a key's timers of a kind are
// one value of the operator's keyed state, under the record key in slot
// SlotEventTimers or SlotProcessingTimers (ascending, 8 bytes big-endian
// each), so they live in the key's key group, go into checkpoints in the
// canonical entry format with the rest of the state (AppendKeyGroupEntry),
// rescale with their key groups and work on every StateBackend. Writes go
// through the KeyedState the Timers was made with (a plugin's undo journal
// over the backend): a failed call's registrations are undone with its
// other state writes. The queues in memory are an index over those cells
// (Flink keeps a priority queue per key group; one over the subtask's key
// groups fires in the same order), rebuilt from the backend when the
// operator opens; an entry whose timer was deleted or undone is skipped
// when it comes up.
type Timers struct {
	state  KeyedState
	queues [2]timerHeap
	seq    uint64
	buf    []byte
	val    []byte
}

// The host's own keyed-state slots, after a plugin's 0..abi.MaxStateSlots-1:
// the timers of each kind (abi.TimerEventTime, abi.TimerProcessingTime).
const (
	SlotEventTimers      = abi.MaxStateSlots
	SlotProcessingTimers = abi.MaxStateSlots + 1
	// MaxSlots bounds the slots a StateBackend holds (CheckStoreSlot).
	MaxSlots = abi.MaxStateSlots + 2
)

// NewTimers returns the timers over state, with those restored into
// backend (nil: none) queued. state is where timers are read and written;
// backend, the store under it, is scanned once here.
func NewTimers(state KeyedState, backend StateBackend) (*Timers, error) {
	t := &Timers{state: state}
	if backend == nil {
		return t, nil
	}
	start, end := backend.KeyGroups()
	for kind := range 2 {
		for kg := start; kg <= end; kg++ {
			var bad error
			err := backend.Scan(kg, timerSlot(kind), func(key, val []byte) bool {
				if len(val)%8 != 0 {
					bad = fmt.Errorf("the timers of key %s in key group %d are %d bytes, not a multiple of 8", preview(key), kg, len(val))
					return false
				}
				for i := 0; i < len(val); i += 8 {
					t.push(kind, string(key), int64(binary.BigEndian.Uint64(val[i:])))
				}
				return true
			})
			if err == nil {
				err = bad
			}
			if err != nil {
				return nil, fmt.Errorf("restoring timers: %w", err)
			}
		}
	}
	return t, nil
}

func timerSlot(kind int) int { return SlotEventTimers + kind }

func checkKind(kind int) error {
	if kind != abi.TimerEventTime && kind != abi.TimerProcessingTime {
		return fmt.Errorf("timer kind %d is unknown: 0 is event time, 1 processing time", kind)
	}
	return nil
}

// load reads the timestamps of (kind, key) into t.val.
func (t *Timers) load(kind int, key []byte) error {
	val, _, err := t.state.Get(timerSlot(kind), key, t.val[:0])
	t.val = val
	return err
}

// find is where ts is (or would go) in t.val.
func (t *Timers) find(ts int64) (int, bool) {
	n := len(t.val) / 8
	i := sort.Search(n, func(i int) bool { return int64(binary.BigEndian.Uint64(t.val[8*i:])) >= ts })
	return i, i < n && int64(binary.BigEndian.Uint64(t.val[8*i:])) == ts
}

// Register adds the timer of (kind, key, ts) when it is not there yet.
func (t *Timers) Register(kind int, key []byte, ts int64) error {
	if err := checkKind(kind); err != nil {
		return err
	}
	if err := t.load(kind, key); err != nil {
		return err
	}
	i, ok := t.find(ts)
	if ok {
		return nil
	}
	t.buf = append(append(t.buf[:0], t.val[:8*i]...), 0, 0, 0, 0, 0, 0, 0, 0)
	binary.BigEndian.PutUint64(t.buf[8*i:], uint64(ts))
	t.buf = append(t.buf, t.val[8*i:]...)
	if err := t.state.Put(timerSlot(kind), key, t.buf); err != nil {
		return err
	}
	t.push(kind, string(key), ts)
	return nil
}

// Delete removes the timer of (kind, key, ts); one not there is no error.
func (t *Timers) Delete(kind int, key []byte, ts int64) error {
	if err := checkKind(kind); err != nil {
		return err
	}
	if err := t.load(kind, key); err != nil {
		return err
	}
	return t.remove(kind, key, ts)
}

// remove takes ts out of t.val, loaded for (kind, key), and stores it.
func (t *Timers) remove(kind int, key []byte, ts int64) error {
	i, ok := t.find(ts)
	if !ok {
		return nil
	}
	if len(t.val) == 8 {
		return t.state.Delete(timerSlot(kind), key)
	}
	t.buf = append(append(t.buf[:0], t.val[:8*i]...), t.val[8*i+8:]...)
	return t.state.Put(timerSlot(kind), key, t.buf)
}

func (t *Timers) push(kind int, key string, ts int64) {
	t.seq++
	heap.Push(&t.queues[kind], timerItem{ts: ts, seq: t.seq, key: key})
}

// Next returns the earliest pending timer of kind, false when none.
func (t *Timers) Next(kind int) (int64, bool, error) {
	q := &t.queues[kind]
	for q.Len() > 0 {
		e := (*q)[0]
		if err := t.load(kind, []byte(e.key)); err != nil {
			return 0, false, err
		}
		if _, ok := t.find(e.ts); ok {
			return e.ts, true, nil
		}
		heap.Pop(q) // deleted, undone, or a duplicate entry of one that fired
	}
	return 0, false, nil
}

// Advance fires the timers of kind up to upTo (ts <= upTo), earliest
// first (equal timestamps in the order they were registered): each is
// removed, then fire is called with its key and timestamp. Timers fire
// registers are fired by the same Advance when they are due, as Flink's
// advanceWatermark loop fires them. It stops at fire's first error.
func (t *Timers) Advance(kind int, upTo int64, fire func(key []byte, ts int64) error) error {
	q := &t.queues[kind]
	for q.Len() > 0 && (*q)[0].ts <= upTo {
		e := heap.Pop(q).(timerItem)
		key := []byte(e.key)
		if err := t.load(kind, key); err != nil {
			return err
		}
		if _, ok := t.find(e.ts); !ok {
			continue // deleted, undone, or a duplicate entry of one that fired
		}
		if err := t.remove(kind, key, e.ts); err != nil {
			return err
		}
		if err := fire(key, e.ts); err != nil {
			return err
		}
	}
	return nil
}

// Queued is how many queue entries of kind are held (deleted timers
// included until they come up): zero means no timer is pending.
func (t *Timers) Queued(kind int) int { return t.queues[kind].Len() }

// timerItem is a queued timer: its time, its registration order, its key.
type timerItem struct {
	ts  int64
	seq uint64
	key string
}

type timerHeap []timerItem

func (q timerHeap) Len() int { return len(q) }
func (q timerHeap) Less(i, j int) bool {
	if q[i].ts != q[j].ts {
		return q[i].ts < q[j].ts
	}
	return q[i].seq < q[j].seq
}
func (q timerHeap) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *timerHeap) Push(x any)   { *q = append(*q, x.(timerItem)) }
func (q *timerHeap) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = timerItem{}
	*q = old[:len(old)-1]
	return e
}

// ProcessingTimeOperator is an operator whose processing-time timers run
// on the wall clock (a plugin granted clock): its task wakes it when the
// earliest is due, while its input is quiet too, as Flink's mailbox runs
// a processing-time timer between records. An operator on a clock that
// moves with its input fires its timers as it processes the input.
type ProcessingTimeOperator interface {
	Operator
	// NextProcessingTime is when (epoch ms) the earliest timer is due;
	// false when none is.
	NextProcessingTime() (int64, bool)
	// OnProcessingTime fires the timers due now, emitting to out.
	OnProcessingTime(out Collector) error
}

// wakeFunc returns what the input loop calls before it blocks: a channel
// that is ready when the chain's earliest wall-clock processing-time
// timer is due (nil: no timer, the loop waits for input alone). Nil when
// no operator of the chain has such timers.
func (s *subtask) wakeFunc() func() <-chan time.Time {
	for _, co := range s.ops {
		if _, ok := co.op.(ProcessingTimeOperator); ok && co.op != nil {
			s.pt = append(s.pt, co)
		}
	}
	if len(s.pt) == 0 {
		return nil
	}
	return s.processingWake
}

// dueNow is ready at once: a timer is already due.
var dueNow = func() chan time.Time { c := make(chan time.Time); close(c); return c }()

func (s *subtask) processingWake() <-chan time.Time {
	next, any := int64(0), false
	for _, co := range s.pt {
		if co.closed {
			continue
		}
		if t, ok := co.op.(ProcessingTimeOperator).NextProcessingTime(); ok && (!any || t < next) {
			next, any = t, true
		}
	}
	if !any {
		return nil
	}
	d := time.Until(time.UnixMilli(next))
	if d <= 0 {
		return dueNow
	}
	if s.ptTimer == nil {
		s.ptTimer = time.NewTimer(d)
	} else {
		s.ptTimer.Reset(d)
	}
	return s.ptTimer.C
}

// fireProcessing fires the due processing-time timers of the chain's
// operators, each emitting into its collector.
func (s *subtask) fireProcessing() error {
	for _, co := range s.pt {
		if co.closed {
			continue
		}
		if err := co.op.(ProcessingTimeOperator).OnProcessingTime(co.out); err != nil {
			return co.fail(err)
		}
	}
	return nil
}
