// Package checkpoint holds sluice's checkpoints and savepoints: the
// coordinator that decides when one starts, completes, is declined or times
// out (a pure state machine: no goroutines, no clock, no I/O of its own),
// the on-disk format a completed checkpoint is published in, and the
// reader that restores a job from it at the same or another parallelism.
//
// This file is the contract between the engine (host/runtime), which
// produces a SubtaskState per operator and subtask when a barrier has
// passed it and consumes a Restore when a job starts from a checkpoint, and
// the storage that writes and reads them. Both sides import it; it imports
// only the standard library.
package checkpoint

// ID numbers the checkpoints of a job from 1 up; a savepoint takes an ID
// from the same sequence. A restored job continues after the ID it was
// restored from.
type ID uint64

// Kind tells a checkpoint from a savepoint. A savepoint is triggered by the
// user, is always aligned and self-contained, and is never deleted by the
// retain policy.
type Kind uint8

const (
	KindCheckpoint Kind = iota
	KindSavepoint
)

func (k Kind) String() string {
	if k == KindSavepoint {
		return "savepoint"
	}
	return "checkpoint"
}

// Mode is Flink's CheckpointingMode.
type Mode uint8

const (
	// ExactlyOnce aligns barriers at every task with several input
	// channels: a channel whose barrier came is held back until every
	// channel's came.
	ExactlyOnce Mode = iota
	// AtLeastOnce counts barriers without holding any channel back
	// (Flink's CheckpointBarrierTracker): records after the barrier on a
	// fast channel may be in the snapshot and replayed after a restore.
	AtLeastOnce
)

func (m Mode) String() string {
	if m == AtLeastOnce {
		return "at-least-once"
	}
	return "exactly-once"
}

// SubtaskState is what one subtask of one operator hands to checkpoint ID
// once the barrier has passed it. Everything is bytes the operator encoded:
// the checkpoint package stores and redistributes them, never parses them.
type SubtaskState struct {
	Operator       string // the pipeline's operator id (Flink's uid)
	Subtask        int
	Parallelism    int
	MaxParallelism int

	// Keyed state, for a keyed operator: KeyGroups[i] holds every entry of
	// key group FirstKeyGroup+i (empty when it has none), so that a restore
	// at another parallelism reads only the key groups of its new range
	// (Flink's KeyGroupRangeAssignment). len(KeyGroups) is the size of the
	// subtask's key-group range.
	FirstKeyGroup int
	KeyGroups     [][]byte
	// Native is keyed state in the backend's own format (a checkpoint
	// of a Pebble database) in place of KeyGroups: never in a savepoint
	// (native.go).
	Native *NativeState

	// Base, when not 0, makes the keyed state incremental (format 2): the
	// subtask's key groups changed since completed checkpoint Base as
	// Changes[i] says for key group FirstKeyGroup+i. ChangeFull: KeyGroups[i]
	// is the key group's whole state; ChangeDelta: KeyGroups[i] is a delta
	// (the backend's bytes, applied in order on the key group's chain in
	// Base); ChangeSame: nothing changed, KeyGroups[i] is empty and the key
	// group keeps Base's chain. A savepoint must be full (Base 0).
	Base    ID
	Changes []Change

	// Operator state (Flink's operator list state): a list of elements.
	// Split elements are redistributed round robin over the new subtasks
	// on a rescale (ListState); every Union element goes to every new
	// subtask (UnionListState), which is how a source's positions travel:
	// each new subtask reads them all and takes its share.
	Split [][]byte
	Union [][]byte

	// Committables: what a two-phase-commit sink pre-committed for this
	// checkpoint and commits once the checkpoint completes (a part file to
	// rename, a transaction to commit). After a restore they are handed
	// back to be committed again, idempotently.
	Committables [][]byte
}

// Change is how a key group of an incremental snapshot changed since its
// base checkpoint (SubtaskState.Base).
type Change uint8

const (
	ChangeFull  Change = iota // the whole key group: a new chain starts
	ChangeDelta               // a delta on the base's chain
	ChangeSame                // unchanged: the base's chain as it is
)

// Restore is what one subtask of an operator gets back when the job starts
// from a checkpoint, already redistributed for its parallelism (see
// Reader.Restore for the rules): the key groups of its range that held
// state, its share of the split elements, every union element, and its
// share of the committables the operator's subtasks pre-committed (split
// like the split elements, so that each is committed again, idempotently,
// by exactly one subtask).
type Restore struct {
	KeyGroups map[int][]byte // key group -> the entries the snapshot held (its chain's base)
	// Deltas are the rest of an incremental key group's chain, oldest
	// first, for the backend to apply on KeyGroups[kg] (host/runtime's
	// MergeKeyGroupChain). Nil for a full snapshot.
	Deltas       map[int][][]byte
	Native       []NativePart // the old subtasks' native states that overlap the range
	Split        [][]byte
	Union        [][]byte
	Committables [][]byte
}
