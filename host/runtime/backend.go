package runtime

import (
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/plan"
)

// StateBackend is what the engine needs of the keyed state of one subtask
// of a keyed operator: values per (slot, key), kept per key group so that a
// checkpoint saves whole key groups and a restore at another parallelism
// takes whole key groups, as Flink's keyed state backends do. The heap
// KeyedStore implements it, and so does host/state/pebblestate. Every
// backend passes the conformance kit in host/runtime/statetest.
//
// A snapshot is the canonical savepoint format of state_snapshot.go, one
// byte string per key group, whatever the backend: a savepoint taken on
// one backend restores on the other. One subtask goroutine uses a
// backend: it need not be safe for concurrent use.
type StateBackend interface {
	KeyedState
	// KeyGroup returns the key group of key (raw msgpack), refusing a key
	// outside the subtask's key-group range.
	KeyGroup(key []byte) (int, error)
	// KeyGroups returns the inclusive key-group range the backend holds.
	KeyGroups() (start, end int)
	// Count is the number of keys stored in slot.
	Count(slot int) (int, error)
	// Scan calls fn for each key of slot in key group kg until fn returns
	// false. key and val alias the backend: copy them to keep them.
	Scan(kg, slot int, fn func(key, val []byte) bool) error
	// Snapshot encodes every key group of the range (groups[i] is key
	// group first+i) in the canonical format. The bytes are the
	// caller's.
	Snapshot() (first int, groups [][]byte, err error)
	// RestoreKeyGroups fills an empty backend with key groups of a
	// snapshot (key group -> its bytes), each in the backend's range.
	RestoreKeyGroups(groups map[int][]byte) error
	// Close releases what the backend holds (files, memory).
	Close() error
}

// CallBatcher is an optional interface of a StateBackend that applies the
// writes of one guest call as one batch: BeginCall starts collecting
// them (reads see them), CommitCall applies them at once, AbortCall drops
// them, which undoes the call. A backend without it is undone by the
// plugin adapter's journal, value by value.
type CallBatcher interface {
	BeginCall()
	CommitCall() error
	AbortCall()
}

// NativeCheckpointer is an optional interface of a StateBackend that
// takes checkpoints in its own format (Pebble's checkpoint), as Flink's
// RocksDB backend takes incremental checkpoints: NativeCheckpoint is the
// synchronous part, on the subtask's goroutine between two batches; the
// checkpoint storage copies the folder it returns afterwards. Savepoints
// stay canonical (Snapshot). RestoreNative fills an empty backend from
// the native states of the old subtasks that overlap its range, and from
// canonical key groups (of old subtasks that had ended).
type NativeCheckpointer interface {
	NativeCheckpoint(id checkpoint.ID) (*checkpoint.NativeState, error)
	RestoreNative(parts []checkpoint.NativePart, groups map[int][]byte) error
}

// KeyGroupCells is an optional interface of a StateBackend for cells
// whose key is the record key and a namespace after it (a window's (key,
// window)), in the key group the caller gives: what the built-in
// aggregations and windows keep their state in on a backend other than
// the heap (cellBackend).
type KeyGroupCells interface {
	GetKG(kg, slot int, key, dst []byte) ([]byte, bool, error)
	PutKG(kg, slot int, key, val []byte) error
	DeleteKG(kg, slot int, key []byte) error
}

// StateBackends opens the state backend of one subtask of a keyed
// operator, for the backends the engine does not hold itself (heap is
// built in). Deps.StateBackends; nil: only the heap.
type StateBackends interface {
	Open(req BackendRequest) (StateBackend, error)
}

// BackendRequest is what a backend is opened for.
type BackendRequest struct {
	Job            string
	Operator       string
	Subtask        int // from 0
	Parallelism    int
	MaxParallelism int
	Start, End     int        // the key-group range
	State          plan.State // the operator's state settings
}

// Count is Len, for StateBackend.
func (s *KeyedStore) Count(slot int) (int, error) { return s.Len(slot), nil }

// Scan is Range, for StateBackend.
func (s *KeyedStore) Scan(kg, slot int, fn func(key, val []byte) bool) error {
	s.Range(kg, slot, func(key string, val []byte) bool { return fn(stringBytes(key), val) })
	return nil
}

// Snapshot is SnapshotKeyGroups, for StateBackend.
func (s *KeyedStore) Snapshot() (int, [][]byte, error) {
	first, groups := s.SnapshotKeyGroups()
	return first, groups, nil
}

// Close does nothing: the heap's memory goes with the store.
func (s *KeyedStore) Close() error { return nil }

var _ StateBackend = (*KeyedStore)(nil)
