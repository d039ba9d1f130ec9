package runtime

import (
	"encoding/binary"
	"fmt"

	"github.com/sluicehq/sluice/abi"
)

// Keyed state whose cell key is not the record key alone: a window
// operator's cells are (key, window) and (key, timer), Flink's
// (key, namespace). Their key group is the record key's, which the
// caller computes: KeyGroup of the whole cell key would hash the window
// in. The snapshot writes each cell under its key group, so these cells
// checkpoint and rescale with the key they belong to.

// putKG stores a copy of val under (slot, key) in key group kg.
func (s *KeyedStore) putKG(kg, slot int, key, val []byte) error {
	return s.put(kg, slot, key, val)
}

// deleteKG removes (slot, key) of key group kg.
func (s *KeyedStore) deleteKG(kg, slot int, key []byte) {
	c := s.lookup(slot, key)
	if c == nil {
		return
	}
	s.used -= int64(cap(c.val))
	c.dead, c.val = true, nil
	s.touch(c)
	sl := s.slot(kg, slot, false)
	sl.live--
	sl.dead++
	if sl.dead > sl.live+16 {
		s.compact(sl, slot)
	}
}

// appendKG adds one record (an envelope) to the list cell (slot, key) of
// key group kg: a 4-byte big-endian count, then the records (a window's
// contents for a process-window function, Flink's ListState.add).
func (s *KeyedStore) appendKG(kg, slot int, key, rec []byte) error {
	return s.appendRecords(kg, slot, key, rec, 1)
}

// appendRecords adds count records to the list cell (slot, key), growing
// its buffer in place (amortised: a window's contents grow by a record
// at a time).
func (s *KeyedStore) appendRecords(kg, slot int, key, recs []byte, count int) error {
	c := s.lookup(slot, key)
	if c == nil {
		v := make([]byte, 4, 4+len(recs))
		binary.BigEndian.PutUint32(v, uint32(count))
		return s.put(kg, slot, key, append(v, recs...))
	}
	n := len(c.val) + len(recs)
	if n > abi.MaxStateValue {
		return fmt.Errorf("a window's contents of %d bytes would pass the state value limit of %d", n, abi.MaxStateValue)
	}
	if n > cap(c.val) {
		nc := max(2*cap(c.val), n, 64)
		if err := s.grow(int64(nc - cap(c.val))); err != nil {
			return err
		}
		v := make([]byte, len(c.val), nc)
		copy(v, c.val)
		c.val = v
	}
	c.val = append(c.val, recs...)
	binary.BigEndian.PutUint32(c.val, binary.BigEndian.Uint32(c.val)+uint32(count))
	return nil
}
