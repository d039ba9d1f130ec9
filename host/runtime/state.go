package runtime

import (
	"fmt"
	"unsafe"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/partition"
)

// KeyedStore is the keyed state of one subtask of a keyed operator: per
// key group (and per state slot) the keys and their values, so that a
// checkpoint can save key groups and a rescale can move whole key groups
// between subtasks, as Flink's heap state backend does. Keys keep the order
// in which they were first stored, which makes iteration (batch-mode
// finals, snapshots) deterministic. One index per slot over all key groups
// finds the cell of a key without computing its key group: the hot path of
// a keyed operator. Each key group only lists its cells in order: iteration
// walks that list and does no lookup.
//
// It implements KeyedState for plugins; built-in aggregations use its cells
// directly. One subtask goroutine uses it: it is not safe for concurrent
// use.
type KeyedStore struct {
	maxP, start, end int
	groups           [][]*slotList // [keyGroup-start][slot]
	index            []cellIndex   // [slot]: every key group's cells, deleted ones too
	hasher           keyHasher     // the index's seeded hash
	arena            arena         // keys and values of the cells of insert
	cells            []cell        // the rest of the block of cells insert hands out
	cellBlock        int           // size of the last block: 16 doubling to 256
	limit, used      int64         // Put's bytes: the cap (0: none) and what is held
	inserted         int64         // insert's bytes (keys, values, cells): a built-in aggregation's, for StateSize

	// filters, by slot: what a snapshot applies (TTL cleanup, state_kinds.go)
	filters []SnapshotFilter

	inc incremental // dirty tracking for incremental checkpoints (state_incremental.go)
}

// cellBytes is what the store counts for a cell besides its key and value
// (the cell, its place in the list and the index). A value counts the
// capacity of its buffer, which Put keeps close to its length.
const cellBytes = 64

// SetLimit caps the bytes Put may hold, keys and values with cellBytes
// each (0: no limit): a Put past it fails, naming the state-memory
// setting. The built-in aggregations' cells (insert) are not counted:
// one small cell a key, as the records bring them.
func (s *KeyedStore) SetLimit(bytes int64) { s.limit = bytes }

// Restore puts back a value a failed call changed (had) or removes one
// it added, whatever the limit: the state it returns to was within it.
func (s *KeyedStore) Restore(slot int, key, val []byte, had bool) error {
	limit := s.limit
	s.limit = 0
	defer func() { s.limit = limit }()
	if had {
		return s.Put(slot, key, val)
	}
	return s.Delete(slot, key)
}

// grow counts delta more bytes held, refusing them past the limit.
func (s *KeyedStore) grow(delta int64) error {
	if s.limit > 0 && delta > 0 && s.used+delta > s.limit {
		return fmt.Errorf("keyed state would hold %d bytes, past the limit of %d bytes for an operator's subtask (the state-memory setting, in MiB)", s.used+delta, s.limit)
	}
	s.used += delta
	return nil
}

// slotList is the cells of one slot in one key group, in first-stored
// order, deleted ones included until a compaction drops them.
type slotList struct {
	order      []*cell
	live, dead int
}

// cell is the state of one key in one slot. A deleted cell stays listed
// (and indexed) so that a key stored again keeps its first-stored place.
type cell struct {
	key   string
	val   []byte
	dead  bool
	dirty bool   // changed since the last checkpoint snapshot (listed in incremental.cells)
	slot  uint16 // its slot (below abi.MaxStateSlots)
	kg    int32  // its key group
}

// NewKeyedStore returns the empty state of the subtask owning key groups
// [start, end] of maxParallelism.
func NewKeyedStore(maxParallelism, start, end int) *KeyedStore {
	n := max(end-start+1, 0)
	return &KeyedStore{maxP: maxParallelism, start: start, end: end, groups: make([][]*slotList, n), hasher: newKeyHasher()}
}

// KeyGroup returns the key group of key (raw msgpack), checking that this
// subtask owns it.
func (s *KeyedStore) KeyGroup(key []byte) (int, error) {
	h, err := abi.KeyHash(key)
	if err != nil {
		return 0, err
	}
	kg := partition.KeyGroup(h, s.maxP)
	if kg < s.start || kg > s.end {
		return 0, fmt.Errorf("key group %d of the key is not in this subtask's range [%d, %d]: keyed state is scoped to the keys a subtask receives (the current record's key, as Flink scopes it); another key's state is out of reach, or within reach only at some parallelisms", kg, s.start, s.end)
	}
	return kg, nil
}

func (s *KeyedStore) slot(kg, slot int, create bool) *slotList {
	if slot < 0 {
		return nil
	}
	g := s.groups[kg-s.start]
	if slot >= len(g) {
		if !create {
			return nil
		}
		g = append(g, make([]*slotList, slot+1-len(g))...)
		s.groups[kg-s.start] = g
	}
	sl := g[slot]
	if sl == nil && create {
		sl = &slotList{}
		g[slot] = sl
	}
	return sl
}

// lookup returns the live cell of key, or nil.
func (s *KeyedStore) lookup(slot int, key []byte) *cell {
	if uint(slot) < uint(len(s.index)) {
		return s.index[slot].find(&s.hasher, key, false)
	}
	return nil
}

// find returns the cell of key, deleted or not, or nil.
func (s *KeyedStore) find(slot int, key []byte) *cell {
	if uint(slot) < uint(len(s.index)) {
		return s.index[slot].find(&s.hasher, key, true)
	}
	return nil
}

// insert stores a new cell for key, whose key group is kg, holding a copy
// of val, and returns it. key must not be stored in slot. Cells come in
// blocks, keys and values from the store's arena (a few blocks without
// pointers instead of three small objects per key): for the built-in
// aggregations, which never delete a key. A value that outgrows its room
// moves to the heap.
func (s *KeyedStore) insert(kg, slot int, key, val []byte) *cell {
	if len(s.cells) == 0 {
		s.cellBlock = min(max(2*s.cellBlock, 16), 256)
		s.cells = make([]cell, s.cellBlock)
	}
	c := &s.cells[0]
	s.cells = s.cells[1:]
	kv := s.arena.alloc(len(key) + len(val))
	copy(kv, key)
	copy(kv[len(key):], val)
	if len(key) > 0 {
		c.key = unsafe.String(&kv[0], len(key)) // never written again
	}
	c.val = kv[len(key):len(kv):len(kv)]
	s.add(kg, slot, c)
	s.inserted += int64(len(kv)) + cellBytes
	return c
}

// add lists and indexes the new cell c of key group kg.
func (s *KeyedStore) add(kg, slot int, c *cell) {
	c.kg, c.slot = int32(kg), uint16(slot)
	s.touch(c)
	sl := s.slot(kg, slot, true)
	sl.order = append(sl.order, c)
	sl.live++
	if len(s.index) <= slot {
		s.index = append(s.index, make([]cellIndex, slot+1-len(s.index))...)
	}
	s.index[slot].put(s.hasher.hashString(c.key), c)
}

// Get copies the value of (slot, key) into dst[:0] and returns it.
func (s *KeyedStore) Get(slot int, key []byte, dst []byte) ([]byte, bool, error) {
	if err := CheckStoreSlot(slot); err != nil {
		return nil, false, err
	}
	c := s.lookup(slot, key)
	if c == nil {
		if _, err := s.KeyGroup(key); err != nil {
			return nil, false, err // a key this subtask can never hold
		}
		return nil, false, nil
	}
	return append(dst[:0], c.val...), true, nil
}

// Put stores a copy of val under (slot, key).
func (s *KeyedStore) Put(slot int, key, val []byte) error {
	if err := CheckStoreSlot(slot); err != nil {
		return err
	}
	if len(val) > abi.MaxStateValue {
		return fmt.Errorf("a state value of %d bytes is longer than the limit of %d", len(val), abi.MaxStateValue)
	}
	return s.put(-1, slot, key, val)
}

// put stores a copy of val under (slot, key) in key group kg, or in the
// key's own key group when kg is -1 (computed only when the cell is new:
// an overwrite needs none). Put and the window's putKG share it.
func (s *KeyedStore) put(kg, slot int, key, val []byte) error {
	c := s.find(slot, key)
	if c != nil && !c.dead {
		s.touch(c)
		if cap(c.val) >= len(val) && cap(c.val) <= 2*len(val)+64 {
			c.val = append(c.val[:0], val...) // in its room: nothing more held
			return nil
		}
		// a new buffer, sized to the value: a small value kept in a large
		// one's buffer held memory the count did not see
		if err := s.grow(int64(len(val)) - int64(cap(c.val))); err != nil {
			return err
		}
		c.val = bytesCopy(val)
		return nil
	}
	if kg < 0 {
		var err error
		if kg, err = s.KeyGroup(key); err != nil {
			return err
		}
	}
	if c != nil { // deleted, stored again: in its first-stored place
		if err := s.grow(int64(len(val))); err != nil {
			return err
		}
		c.val, c.dead = bytesCopy(val), false
		s.touch(c)
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

// bytesCopy copies b into a buffer of exactly its length, which the
// store's count (Put's grow) holds it to.
func bytesCopy(b []byte) []byte {
	c := make([]byte, len(b))
	copy(c, b)
	return c
}

// checkSlot refuses a slot outside 0..abi.MaxStateSlots-1, a plugin's.
func checkSlot(slot int) error {
	if slot < 0 || slot >= abi.MaxStateSlots {
		return fmt.Errorf("state slot %d is out of range: slots are 0 to %d", slot, abi.MaxStateSlots-1)
	}
	return nil
}

// CheckStoreSlot refuses a slot a state backend does not hold: a
// plugin's slots 0..abi.MaxStateSlots-1 and the host's timer slots
// after them (SlotEventTimers, SlotProcessingTimers). The plugin's host
// functions refuse the timer slots before a backend sees them.
func CheckStoreSlot(slot int) error {
	if slot < 0 || slot >= MaxSlots {
		return fmt.Errorf("state slot %d is out of range: slots are 0 to %d (and %d to %d hold the host's timers)", slot, abi.MaxStateSlots-1, abi.MaxStateSlots, MaxSlots-1)
	}
	return nil
}

// Delete removes (slot, key).
func (s *KeyedStore) Delete(slot int, key []byte) error {
	if err := CheckStoreSlot(slot); err != nil {
		return err
	}
	kg, err := s.KeyGroup(key)
	if err != nil {
		return err
	}
	c := s.lookup(slot, key)
	if c == nil {
		return nil
	}
	s.used -= int64(cap(c.val))
	c.dead, c.val = true, nil // its buffer goes: a dead cell holds only its key
	s.touch(c)
	sl := s.slot(kg, slot, false)
	sl.live--
	sl.dead++
	if sl.dead > sl.live+16 {
		s.compact(sl, slot) // keys deleted for good must not grow the store forever
	}
	return nil
}

// Len is the number of keys stored in slot.
func (s *KeyedStore) Len(slot int) int {
	n := 0
	for kg := s.start; kg <= s.end; kg++ {
		if sl := s.slot(kg, slot, false); sl != nil {
			n += sl.live
		}
	}
	return n
}

// Range calls fn for each key of slot in key group kg, in first-stored
// order, until fn returns false. val aliases the store: copy to keep it.
func (s *KeyedStore) Range(kg, slot int, fn func(key string, val []byte) bool) {
	if kg < s.start || kg > s.end {
		return
	}
	sl := s.slot(kg, slot, false)
	if sl == nil {
		return
	}
	for _, c := range sl.order {
		if !c.dead && !fn(c.key, c.val) {
			return
		}
	}
}

// compact drops the deleted cells of sl, a list of slot, from the list and
// the index: a key stored after this goes last.
func (s *KeyedStore) compact(sl *slotList, slot int) {
	keep := sl.order[:0]
	for _, c := range sl.order {
		if c.dead {
			s.index[slot].remove(s.hasher.hashString(c.key), c)
			s.used -= int64(len(c.key)) + cellBytes
			continue
		}
		keep = append(keep, c)
	}
	clear(sl.order[len(keep):])
	sl.order, sl.dead = keep, 0
}

// KeyGroups returns the inclusive range of key groups the store holds.
func (s *KeyedStore) KeyGroups() (start, end int) { return s.start, s.end }

// arena hands out byte slices carved from blocks that hold no pointers:
// the garbage collector neither scans them nor tracks each slice. Blocks
// double from 256 bytes to 64 KiB (a store with few keys stays small). A
// block lives as long as any slice of it.
type arena struct {
	block []byte
	size  int // of the last block
}

const arenaBlock = 64 << 10

// alloc returns n bytes (len and cap n).
func (a *arena) alloc(n int) []byte {
	if n > arenaBlock/8 {
		return make([]byte, n)
	}
	if len(a.block) < n {
		a.size = min(max(2*a.size, 256, n), arenaBlock) // n > 2*size: a block that holds it
		a.block = make([]byte, a.size)
	}
	b := a.block[:n:n]
	a.block = a.block[n:]
	return b
}

var _ KeyedState = (*KeyedStore)(nil)
