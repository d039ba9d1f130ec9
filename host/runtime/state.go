package runtime

import (
	"fmt"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/partition"
)

// KeyedStore is the keyed state of one subtask of a keyed operator: a map
// per key group (and per state slot) from the key's msgpack bytes to a
// value, so that a checkpoint can save key groups and a rescale can move
// whole key groups between subtasks, as Flink's heap state backend does.
// Keys keep the order in which they were first stored, which makes
// iteration (batch-mode finals, snapshots) deterministic. An index over all
// key groups (per slot, sharing the cells) finds the cell of a key without
// computing its key group: the hot path of a keyed operator.
//
// It implements KeyedState for plugins; built-in aggregations use its cells
// directly. One subtask goroutine uses it: it is not safe for concurrent
// use.
type KeyedStore struct {
	maxP, start, end int
	groups           [][]*slotMap       // [keyGroup-start][slot]
	index            []map[string]*cell // [slot]: every key group's cells
}

type slotMap struct {
	m       map[string]*cell
	order   []string // keys in first-stored order; may hold deleted keys
	deleted bool     // order may hold stale or repeated keys
}

type cell struct{ val []byte }

// NewKeyedStore returns the empty state of the subtask owning key groups
// [start, end] of maxParallelism.
func NewKeyedStore(maxParallelism, start, end int) *KeyedStore {
	n := max(end-start+1, 0)
	return &KeyedStore{maxP: maxParallelism, start: start, end: end, groups: make([][]*slotMap, n)}
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
		return 0, fmt.Errorf("key group %d of the key is not in this subtask's range [%d, %d]", kg, s.start, s.end)
	}
	return kg, nil
}

func (s *KeyedStore) slot(kg, slot int, create bool) *slotMap {
	if slot < 0 {
		return nil
	}
	g := s.groups[kg-s.start]
	if slot >= len(g) {
		if !create {
			return nil
		}
		g = append(g, make([]*slotMap, slot+1-len(g))...)
		s.groups[kg-s.start] = g
	}
	sm := g[slot]
	if sm == nil && create {
		sm = &slotMap{m: make(map[string]*cell)}
		g[slot] = sm
	}
	return sm
}

// lookup returns the cell of key, or nil.
func (s *KeyedStore) lookup(slot int, key []byte) *cell {
	if slot < 0 || slot >= len(s.index) {
		return nil
	}
	return s.index[slot][string(key)]
}

// insert stores a new cell holding val (not copied) for key, whose key
// group is kg.
func (s *KeyedStore) insert(kg, slot int, key, val []byte) *cell {
	sm := s.slot(kg, slot, true)
	k := string(key)
	c := &cell{val: val}
	if _, ok := sm.m[k]; !ok {
		if sm.deleted && len(sm.order) > 2*len(sm.m)+16 {
			sm.compact() // keys deleted and stored again must not grow order forever
		}
		sm.order = append(sm.order, k)
	}
	sm.m[k] = c
	for len(s.index) <= slot {
		s.index = append(s.index, map[string]*cell{})
	}
	s.index[slot][k] = c
	return c
}

// Get copies the value of (slot, key) into dst[:0] and returns it.
func (s *KeyedStore) Get(slot int, key []byte, dst []byte) ([]byte, bool, error) {
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
	if slot < 0 {
		return fmt.Errorf("state slot %d is negative", slot)
	}
	if c := s.lookup(slot, key); c != nil {
		c.val = append(c.val[:0], val...)
		return nil
	}
	kg, err := s.KeyGroup(key)
	if err != nil {
		return err
	}
	s.insert(kg, slot, key, append([]byte(nil), val...))
	return nil
}

// Delete removes (slot, key).
func (s *KeyedStore) Delete(slot int, key []byte) error {
	kg, err := s.KeyGroup(key)
	if err != nil {
		return err
	}
	if sm := s.slot(kg, slot, false); sm != nil {
		if _, ok := sm.m[string(key)]; ok {
			delete(sm.m, string(key))
			delete(s.index[slot], string(key))
			sm.deleted = true
		}
	}
	return nil
}

// Len is the number of keys stored in slot.
func (s *KeyedStore) Len(slot int) int {
	n := 0
	for kg := s.start; kg <= s.end; kg++ {
		if sm := s.slot(kg, slot, false); sm != nil {
			n += len(sm.m)
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
	sm := s.slot(kg, slot, false)
	if sm == nil {
		return
	}
	if sm.deleted {
		sm.compact()
	}
	for _, k := range sm.order {
		if !fn(k, sm.m[k].val) {
			return
		}
	}
}

// compact drops deleted and repeated keys from the order.
func (sm *slotMap) compact() {
	seen := make(map[string]bool, len(sm.m))
	keep := sm.order[:0]
	for _, k := range sm.order {
		if _, ok := sm.m[k]; ok && !seen[k] {
			seen[k] = true
			keep = append(keep, k)
		}
	}
	sm.order, sm.deleted = keep, false
}

// KeyGroups returns the inclusive range of key groups the store holds.
func (s *KeyedStore) KeyGroups() (start, end int) { return s.start, s.end }

var _ KeyedState = (*KeyedStore)(nil)
