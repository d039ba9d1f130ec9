package runtime

// Keyed state whose cell key is not the record key alone: a window
// operator's cells are (key, window) and (key, timer), Flink's
// (key, namespace). Their key group is the record key's, which the
// caller computes: KeyGroup of the whole cell key would hash the window
// in. The snapshot writes each cell under its key group, so these cells
// checkpoint and rescale with the key they belong to.

// putKG stores a copy of val under (slot, key) in key group kg.
func (s *KeyedStore) putKG(kg, slot int, key, val []byte) error {
	c := s.find(slot, key)
	if c != nil && !c.dead {
		if cap(c.val) >= len(val) && cap(c.val) <= 2*len(val)+64 {
			c.val = append(c.val[:0], val...)
			return nil
		}
		if err := s.grow(int64(len(val)) - int64(cap(c.val))); err != nil {
			return err
		}
		c.val = bytesCopy(val)
		return nil
	}
	if c != nil { // deleted, stored again
		if err := s.grow(int64(len(val))); err != nil {
			return err
		}
		c.val, c.dead = bytesCopy(val), false
		sl := s.slot(kg, slot, true)
		sl.live++
		sl.dead--
		return nil
	}
	if err := s.grow(int64(len(key)) + int64(len(val)) + cellBytes); err != nil {
		return err
	}
	s.add(kg, slot, &cell{key: string(key), val: bytesCopy(val)})
	return nil
}

// deleteKG removes (slot, key) of key group kg.
func (s *KeyedStore) deleteKG(kg, slot int, key []byte) {
	c := s.lookup(slot, key)
	if c == nil {
		return
	}
	s.used -= int64(cap(c.val))
	c.dead, c.val = true, nil
	sl := s.slot(kg, slot, false)
	sl.live--
	sl.dead++
	if sl.dead > sl.live+16 {
		s.compact(sl, slot)
	}
}
