package plugin

import "github.com/sluicehq/sluice/host/runtime"

// journal wraps an operator's keyed state with an undo log of the call in
// progress, so that a failed call leaves the state as it found it: the
// host re-runs the records of a failed batch (isolating the bad one) and
// a good record's state change must count once. Every write first reads
// the value it replaces; undo restores them, last first.
type journal struct {
	inner runtime.KeyedState
	log   []undo
	buf   []byte
}

type undo struct {
	slot int
	key  []byte
	old  []byte
	had  bool
}

var _ runtime.KeyedState = (*journal)(nil)

// begin starts a call: nothing to undo yet.
func (j *journal) begin() { j.log = j.log[:0] }

// undo restores what the failed call changed.
func (j *journal) undo() error {
	for i := len(j.log) - 1; i >= 0; i-- {
		u := j.log[i]
		var err error
		if u.had {
			err = j.inner.Put(u.slot, u.key, u.old)
		} else {
			err = j.inner.Delete(u.slot, u.key)
		}
		if err != nil {
			return err
		}
	}
	j.log = j.log[:0]
	return nil
}

func (j *journal) remember(slot int, key []byte) error {
	old, had, err := j.inner.Get(slot, key, j.buf[:0])
	if err != nil {
		return err
	}
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
	if err := j.remember(slot, key); err != nil {
		return err
	}
	return j.inner.Put(slot, key, val)
}

func (j *journal) Delete(slot int, key []byte) error {
	if err := j.remember(slot, key); err != nil {
		return err
	}
	return j.inner.Delete(slot, key)
}
