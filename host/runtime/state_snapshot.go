package runtime

import (
	"encoding/binary"
	"fmt"
)

// A KeyedStore's snapshot is one byte string per key group of its range
// (checkpoint.SubtaskState.KeyGroups), so that a restore at another
// parallelism takes whole key groups from the old subtasks whose ranges
// overlap its own, as Flink's heap keyed state backend writes and reads
// them. A key group's bytes are its live entries, slot by slot (0 up) and
// within a slot in first-stored order, each
//
//	uvarint slot, uvarint len(key), key, uvarint len(value), value
//
// The built-in aggregations' cells (slot 0: the header and the map they
// emit, aggvalue.go) and a plugin's state_* slots are entries alike. A
// restored store lists each key group's keys in the order the snapshot
// held them, so iteration stays deterministic across a restore.

// SnapshotKeyGroups encodes the live entries of every key group of the
// store's range: groups[i] is key group first+i (empty when it holds
// nothing). The bytes are the caller's: the store can change afterwards.
func (s *KeyedStore) SnapshotKeyGroups() (first int, groups [][]byte) {
	groups = make([][]byte, len(s.groups))
	for i := range s.groups {
		groups[i] = s.snapshotGroup(i, nil)
	}
	return s.start, groups
}

// snapshotGroup appends the live entries of key group start+i to b.
func (s *KeyedStore) snapshotGroup(i int, b []byte) []byte {
	for slot, sl := range s.groups[i] {
		if sl == nil || sl.live == 0 {
			continue
		}
		var filter SnapshotFilter
		if slot < len(s.filters) {
			filter = s.filters[slot]
		}
		for _, c := range sl.order {
			if c.dead {
				continue
			}
			val := c.val
			if filter != nil { // TTL: expired values stay out (state_kinds.go)
				var keep bool
				if val, keep = filter(val); !keep {
					continue
				}
			}
			b = AppendKeyGroupEntry(b, slot, []byte(c.key), val)
		}
	}
	return b
}

// RestoreKeyGroups fills an empty store with the key groups of a snapshot
// (checkpoint.Restore.KeyGroups: key group -> the bytes SnapshotKeyGroups
// wrote for it). Every key group must lie in the store's range. The bytes
// restored count towards the state-memory limit (SetLimit) as if Put had
// stored them, but are not refused by it: the next Put past the limit is.
func (s *KeyedStore) RestoreKeyGroups(groups map[int][]byte) error {
	if len(s.index) > 0 {
		return fmt.Errorf("restoring keyed state into a store that already holds state")
	}
	for kg := s.start; kg <= s.end; kg++ { // in key-group order: deterministic arena layout
		b, ok := groups[kg]
		if !ok {
			continue
		}
		if err := s.restoreGroup(kg, b); err != nil {
			return fmt.Errorf("restoring keyed state of key group %d: %w", kg, err)
		}
	}
	for kg := range groups {
		if kg < s.start || kg > s.end {
			return fmt.Errorf("restoring keyed state: key group %d is outside this subtask's range [%d, %d]", kg, s.start, s.end)
		}
	}
	s.clearDirty() // what was restored is no change: the first checkpoint is full anyway
	return nil
}

func (s *KeyedStore) restoreGroup(kg int, b []byte) error {
	return ScanKeyGroupEntries(b, func(n, slot int, key, val []byte) error {
		if s.find(slot, key) != nil {
			return fmt.Errorf("entry %d: key %s of slot %d is there twice", n, preview(key), slot)
		}
		s.insert(kg, slot, key, val)
		s.inserted -= int64(len(key)) + int64(len(val)) + cellBytes // counted in used instead
		s.used += int64(len(key)) + int64(len(val)) + cellBytes
		return nil
	})
}

// AppendKeyGroupEntry appends one entry of a key group in the canonical
// snapshot format every backend writes (docs/checkpoints.md): uvarint
// slot, uvarint key length, key, uvarint value length, value.
func AppendKeyGroupEntry(b []byte, slot int, key, val []byte) []byte {
	b = binary.AppendUvarint(b, uint64(slot))
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(val)))
	return append(b, val...)
}

// ScanKeyGroupEntries calls fn with each entry of a key group in the
// canonical format (n counts them from 0), the slot checked; key and val
// alias b. It stops at fn's first error, and says which entry is
// malformed.
func ScanKeyGroupEntries(b []byte, fn func(n, slot int, key, val []byte) error) error {
	for n := 0; len(b) > 0; n++ {
		slot, rest, err := uvarint(b)
		if err != nil {
			return fmt.Errorf("entry %d: slot: %w", n, err)
		}
		key, rest, err := lengthPrefixed(rest)
		if err != nil {
			return fmt.Errorf("entry %d: key: %w", n, err)
		}
		val, rest, err := lengthPrefixed(rest)
		if err != nil {
			return fmt.Errorf("entry %d: value: %w", n, err)
		}
		b = rest
		if err := CheckStoreSlot(int(min(slot, 1<<31))); err != nil {
			return fmt.Errorf("entry %d: %w", n, err)
		}
		if err := fn(n, int(slot), key, val); err != nil {
			return err
		}
	}
	return nil
}

func uvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, fmt.Errorf("bad length")
	}
	return v, b[n:], nil
}

func lengthPrefixed(b []byte) ([]byte, []byte, error) {
	n, rest, err := uvarint(b)
	if err != nil {
		return nil, nil, err
	}
	if n > uint64(len(rest)) {
		return nil, nil, fmt.Errorf("%d bytes, %d left", n, len(rest))
	}
	return rest[:n:n], rest[n:], nil
}
