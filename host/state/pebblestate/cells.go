package pebblestate

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

// Cells whose key is the record key and a namespace after it (a window's
// (key, window), Flink's (key, namespace)), in the key group the caller
// gives (runtime.KeyGroupCells): the built-in aggregations and windows
// keep their state on Pebble through these.

// kgKey is the database key of (kg, slot, key), checked.
func (s *Store) kgKey(kg, slot int, key []byte) ([]byte, error) {
	if err := checkSlot(slot); err != nil {
		return nil, err
	}
	if kg < s.start || kg > s.end {
		return nil, fmt.Errorf("key group %d is not in this subtask's range [%d, %d]", kg, s.start, s.end)
	}
	s.kbuf = append(appendPrefix(s.kbuf[:0], kg, slot), key...)
	return s.kbuf, nil
}

// GetKG copies the value of (slot, key) in key group kg into dst[:0].
func (s *Store) GetKG(kg, slot int, key, dst []byte) ([]byte, bool, error) {
	k, err := s.kgKey(kg, slot, key)
	if err != nil {
		return nil, false, err
	}
	v, closer, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.wrap(err)
	}
	out := append(dst[:0], v...)
	return out, true, s.wrap(closer.Close())
}

// PutKG stores a copy of val under (slot, key) in key group kg, within
// the disk quota.
func (s *Store) PutKG(kg, slot int, key, val []byte) error {
	k, err := s.kgKey(kg, slot, key)
	if err != nil {
		return err
	}
	if err := s.quota(int64(len(k) + len(val))); err != nil {
		return err
	}
	return s.wrap(s.db.Set(k, val, pebble.NoSync))
}

// DeleteKG removes (slot, key) of key group kg.
func (s *Store) DeleteKG(kg, slot int, key []byte) error {
	k, err := s.kgKey(kg, slot, key)
	if err != nil {
		return err
	}
	return s.wrap(s.db.Delete(k, pebble.NoSync))
}

// cellKeyGroup is the key group of a cell key: that of the record key it
// starts with (the whole key for a plugin's state).
func (s *Store) cellKeyGroup(key []byte) (int, error) {
	n, err := abi.Skip(key, 0)
	if err != nil {
		return 0, err
	}
	return s.KeyGroup(key[:n])
}

var _ runtime.KeyGroupCells = (*Store)(nil)

// StateSize is the bytes the database holds (runtime.StateSizer); its
// keys are not counted (a scan): -1.
func (s *Store) StateSize() (bytes, keys int64) {
	if s.db == nil {
		return 0, -1
	}
	return s.size(), -1
}

var _ runtime.StateSizer = (*Store)(nil)
