package runtime

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
