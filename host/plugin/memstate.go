package plugin

import "github.com/sluicehq/sluice/host/runtime"

// MemoryState is a runtime.KeyedState held in a map, for `host plugin
// run` and tests. It is not safe for concurrent use.
type MemoryState struct {
	m map[stateKey][]byte
}

type stateKey struct {
	slot int
	key  string
}

var _ runtime.KeyedState = (*MemoryState)(nil)

// NewMemoryState returns an empty state.
func NewMemoryState() *MemoryState { return &MemoryState{m: map[stateKey][]byte{}} }

// Get appends the value under (slot, key) to dst[:0].
func (s *MemoryState) Get(slot int, key []byte, dst []byte) ([]byte, bool, error) {
	v, ok := s.m[stateKey{slot, string(key)}]
	if !ok {
		return dst[:0], false, nil
	}
	return append(dst[:0], v...), true, nil
}

// Put stores a copy of val.
func (s *MemoryState) Put(slot int, key, val []byte) error {
	s.m[stateKey{slot, string(key)}] = append([]byte(nil), val...)
	return nil
}

// Delete removes the value under (slot, key).
func (s *MemoryState) Delete(slot int, key []byte) error {
	delete(s.m, stateKey{slot, string(key)})
	return nil
}

// Len is the number of values held.
func (s *MemoryState) Len() int { return len(s.m) }
