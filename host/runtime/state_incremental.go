package runtime

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/sluicehq/sluice/host/checkpoint"
)

// Incremental checkpoints of the heap backend (docs/checkpoints.md,
// "Incremental checkpoints"). While tracking is on, every write to a cell
// (put, delete, a list or map write, a clear, an aggregation's or a
// window's in-place update) marks the cell dirty, once, and lists it, and
// sets its key group's bit. A checkpoint snapshot then writes, per key
// group of the subtask's range:
//
//   - nothing (checkpoint.ChangeSame) when no cell of it changed: the key
//     group keeps its chain in the previous checkpoint;
//   - a delta (checkpoint.ChangeDelta) of its dirty cells, a put or a
//     tombstone each, appended to its chain;
//   - its whole state (checkpoint.ChangeFull) when the chain would have
//     more than maxDeltas deltas or more delta bytes than its base: the
//     chain is compacted into a full copy.
//
// A snapshot is incremental only on the previous checkpoint snapshot this
// store took, and only once that checkpoint is known complete
// (CheckpointComplete); otherwise (the first checkpoint, after a restore,
// after an abort, when the previous one has not completed yet) it is full.
// A savepoint is always full and leaves the tracking alone.
//
// A delta is a list of
//
//	uvarint slot<<1 | 0, uvarint len(key), key, uvarint len(value), value   (a put)
//	uvarint slot<<1 | 1, uvarint len(key), key                              (a tombstone)
//
// in the order the cells were first changed; MergeKeyGroupChain applies a
// chain and returns the key group in the canonical format.

// maxDeltas bounds a key group's chain: its base and this many deltas.
const maxDeltas = 7

type incremental struct {
	on     bool
	cells  []*cell  // dirty, in the order they were first changed
	groups []uint64 // bitset of the key groups with a dirty cell
	chains []kgChain
	last   checkpoint.ID // the previous checkpoint snapshot (0: none since the start or a full reset)
	lastOK bool          // it completed: the next may be incremental on it
}

// kgChain is what the previous checkpoints wrote of one key group.
type kgChain struct {
	deltas      int
	base, delta int64 // bytes
}

// SetTracking turns dirty tracking on or off (off: every checkpoint is
// full). The engine turns it on for keyed stores of a checkpointed job.
func (s *KeyedStore) SetTracking(on bool) {
	s.clearDirty()
	s.inc = incremental{on: on}
	if on {
		n := len(s.groups)
		s.inc.groups = make([]uint64, (n+63)/64)
		s.inc.chains = make([]kgChain, n)
	}
}

// touch marks c (about to change, or just changed) dirty.
func (s *KeyedStore) touch(c *cell) {
	if s.inc.on && !c.dirty {
		c.dirty = true
		s.inc.cells = append(s.inc.cells, c)
		i := int(c.kg) - s.start
		s.inc.groups[i>>6] |= 1 << (i & 63)
	}
}

func (s *KeyedStore) clearDirty() {
	for _, c := range s.inc.cells {
		c.dirty = false
	}
	clear(s.inc.cells)
	s.inc.cells = s.inc.cells[:0]
	clear(s.inc.groups)
}

// SnapshotCheckpoint is the keyed state of checkpoint id: incremental on
// base when it can be (changes[i] says how key group first+i changed),
// else full (base 0, changes nil). The bytes are the caller's.
func (s *KeyedStore) SnapshotCheckpoint(id checkpoint.ID) (first int, groups [][]byte, changes []checkpoint.Change, base checkpoint.ID) {
	inc := &s.inc
	if !inc.on {
		first, groups = s.SnapshotKeyGroups()
		return first, groups, nil, 0
	}
	defer func() {
		s.clearDirty()
		inc.last, inc.lastOK = id, false
	}()
	if inc.last == 0 || !inc.lastOK {
		first, groups = s.SnapshotKeyGroups()
		for i, g := range groups {
			inc.chains[i] = kgChain{base: int64(len(g))}
		}
		return first, groups, nil, 0
	}
	n := len(s.groups)
	groups = make([][]byte, n)
	changes = make([]checkpoint.Change, n)
	for i := range changes {
		changes[i] = checkpoint.ChangeSame
	}
	for _, c := range inc.cells {
		i := int(c.kg) - s.start
		groups[i] = s.appendDelta(groups[i], c)
	}
	for i := range n {
		if inc.groups[i>>6]&(1<<(i&63)) == 0 {
			continue
		}
		ch := &inc.chains[i]
		d := int64(len(groups[i]))
		if ch.deltas+1 > maxDeltas || ch.delta+d > ch.base {
			groups[i] = s.snapshotGroup(i, nil)
			changes[i] = checkpoint.ChangeFull
			*ch = kgChain{base: int64(len(groups[i]))}
			continue
		}
		changes[i] = checkpoint.ChangeDelta
		ch.deltas++
		ch.delta += d
	}
	return s.start, groups, changes, inc.last
}

// appendDelta appends c's entry of a delta: a put of its value (TTL
// filtered as a snapshot filters it), or a tombstone.
func (s *KeyedStore) appendDelta(b []byte, c *cell) []byte {
	slot := int(c.slot)
	val, live := c.val, !c.dead
	if live && slot < len(s.filters) && s.filters[slot] != nil {
		val, live = s.filters[slot](val)
	}
	if !live {
		b = binary.AppendUvarint(b, uint64(slot)<<1|1)
		b = binary.AppendUvarint(b, uint64(len(c.key)))
		return append(b, c.key...)
	}
	b = binary.AppendUvarint(b, uint64(slot)<<1)
	b = binary.AppendUvarint(b, uint64(len(c.key)))
	b = append(b, c.key...)
	b = binary.AppendUvarint(b, uint64(len(val)))
	return append(b, val...)
}

// CheckpointComplete says checkpoint id completed: the next snapshot may
// be incremental on it if it is the store's previous one.
func (s *KeyedStore) CheckpointComplete(id checkpoint.ID) {
	if s.inc.on && id == s.inc.last {
		s.inc.lastOK = true
	}
}

// CheckpointAborted says checkpoint id was aborted: if it was the store's
// previous snapshot, the next one is full.
func (s *KeyedStore) CheckpointAborted(id checkpoint.ID) {
	if s.inc.on && id == s.inc.last {
		s.inc.last, s.inc.lastOK = 0, false
	}
}

// MergeKeyGroupChain applies the deltas of an incremental key group's
// chain, oldest first, to its base (both as the heap backend writes
// them) and returns the key group in the canonical snapshot format, for
// any backend's RestoreKeyGroups. A key keeps its place in its slot; a new
// one goes last; a key deleted and stored again keeps its place.
func MergeKeyGroupChain(base []byte, deltas [][]byte) ([]byte, error) {
	type entry struct {
		slot int
		key  string
		val  []byte
		dead bool
	}
	type at struct {
		slot int
		key  string
	}
	var ents []entry
	where := map[at]int{}
	err := ScanKeyGroupEntries(base, func(n, slot int, key, val []byte) error {
		k := at{slot, string(key)}
		if _, ok := where[k]; ok {
			return fmt.Errorf("base entry %d: key %s of slot %d is there twice", n, preview(key), slot)
		}
		where[k] = len(ents)
		ents = append(ents, entry{slot: slot, key: k.key, val: val})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for d, b := range deltas {
		for n := 0; len(b) > 0; n++ {
			op, rest, err := uvarint(b)
			if err != nil {
				return nil, fmt.Errorf("delta %d entry %d: slot: %w", d+1, n, err)
			}
			key, rest, err := lengthPrefixed(rest)
			if err != nil {
				return nil, fmt.Errorf("delta %d entry %d: key: %w", d+1, n, err)
			}
			var val []byte
			if op&1 == 0 {
				if val, rest, err = lengthPrefixed(rest); err != nil {
					return nil, fmt.Errorf("delta %d entry %d: value: %w", d+1, n, err)
				}
			}
			b = rest
			slot := int(min(op>>1, 1<<31))
			if err := checkSlot(slot); err != nil {
				return nil, fmt.Errorf("delta %d entry %d: %w", d+1, n, err)
			}
			k := at{slot, string(key)}
			i, ok := where[k]
			switch {
			case op&1 == 1 && ok:
				ents[i].dead, ents[i].val = true, nil
			case op&1 == 1:
			case ok:
				ents[i].val, ents[i].dead = val, false
			default:
				where[k] = len(ents)
				ents = append(ents, entry{slot: slot, key: k.key, val: val})
			}
		}
	}
	slices.SortStableFunc(ents, func(a, b entry) int { return a.slot - b.slot })
	out := make([]byte, 0, len(base))
	for _, e := range ents {
		if !e.dead {
			out = AppendKeyGroupEntry(out, e.slot, stringBytes(e.key), e.val)
		}
	}
	return out, nil
}
