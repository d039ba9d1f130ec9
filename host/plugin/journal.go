package plugin

import (
	"encoding/binary"

	"github.com/sluicehq/sluice/host/runtime"
)

// journal wraps an operator's keyed state with an undo log of the call in
// progress, so that a failed call leaves the state as it found it: the
// host re-runs the records of a failed batch (isolating the bad one) and
// a good record's state change must count once. The first write of a call
// to a (slot, key) reads the value it replaces; undo restores them, last
// first. Later writes to the same (slot, key) log nothing: the value the
// call found is what undo must restore, and one entry per write let a
// guest overwriting one key in a loop grow the log without bound (8 MiB
// a write: the kernel killed the host at 24 GB).
//
// A store that applies a call's writes as one batch (runtime.CallBatcher,
// the Pebble backend) is its own journal: begin starts the batch, undo
// drops it, commit applies it, and nothing is logged here.
type journal struct {
	inner runtime.KeyedState
	batch runtime.CallBatcher // inner's, or nil
	log   []undo
	seen  map[string]struct{} // slot and key of each logged write of the call
	buf   []byte
	id    []byte
}

type undo struct {
	slot int
	key  []byte
	old  []byte
	had  bool
}

var _ runtime.KeyedState = (*journal)(nil)

// restorer is a store whose undo may pass its limit (runtime.KeyedStore's
// state-memory): the state undo returns to was within it, but a key put
// back before another is taken out may cross it on the way.
type restorer interface {
	Restore(slot int, key, val []byte, had bool) error
}

func newJournal(inner runtime.KeyedState) *journal {
	j := &journal{inner: inner}
	j.batch, _ = inner.(runtime.CallBatcher)
	return j
}

// begin starts a call: nothing to undo yet.
func (j *journal) begin() {
	if j.batch != nil {
		j.batch.BeginCall()
		return
	}
	j.reset()
}

// commit ends a call that stands: its old values are dropped, or its
// batch applied (which may fail: a disk quota).
func (j *journal) commit() error {
	if j.batch != nil {
		return j.batch.CommitCall()
	}
	j.reset()
	return nil
}

// reset empties the log, dropping the old values it held (a truncated
// slice kept them from the garbage collector) and a large seen set.
func (j *journal) reset() {
	clear(j.log)
	j.log = j.log[:0]
	if cap(j.log) > 4096 {
		j.log = nil
	}
	if len(j.seen) > 1024 {
		j.seen = nil
	} else {
		clear(j.seen)
	}
}

// undo restores what the failed call changed.
func (j *journal) undo() error {
	if j.batch != nil {
		j.batch.AbortCall()
		return nil
	}
	for i := len(j.log) - 1; i >= 0; i-- {
		u := j.log[i]
		var err error
		switch r, ok := j.inner.(restorer); {
		case ok:
			err = r.Restore(u.slot, u.key, u.old, u.had)
		case u.had:
			err = j.inner.Put(u.slot, u.key, u.old)
		default:
			err = j.inner.Delete(u.slot, u.key)
		}
		if err != nil {
			return err
		}
	}
	j.reset()
	return nil
}

func (j *journal) remember(slot int, key []byte) error {
	j.id = append(binary.LittleEndian.AppendUint32(j.id[:0], uint32(slot)), key...)
	if _, logged := j.seen[string(j.id)]; logged {
		return nil
	}
	old, had, err := j.inner.Get(slot, key, j.buf[:0])
	if err != nil {
		return err
	}
	if j.seen == nil {
		j.seen = map[string]struct{}{}
	}
	j.seen[string(j.id)] = struct{}{}
	j.buf = old[:0]
	u := undo{slot: slot, key: append([]byte(nil), key...), had: had}
	if had {
		u.old = append([]byte(nil), old...)
	}
	j.log = append(j.log, u)
	return nil
}

func (j *journal) Get(slot int, key []byte, dst []byte) ([]byte, bool, error) {
	return j.inner.Get(slot, key, dst)
}

func (j *journal) Put(slot int, key, val []byte) error {
	if j.batch != nil {
		return j.inner.Put(slot, key, val)
	}
	if err := j.remember(slot, key); err != nil {
		return err
	}
	return j.inner.Put(slot, key, val)
}

func (j *journal) Delete(slot int, key []byte) error {
	if j.batch != nil {
		return j.inner.Delete(slot, key)
	}
	if err := j.remember(slot, key); err != nil {
		return err
	}
	return j.inner.Delete(slot, key)
}
