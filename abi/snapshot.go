package abi

// Operator state (Flink's operator list state): what a plugin keeps in its
// own memory beyond the host's keyed state (a running count, a buffer, a
// position), checkpointed through two optional exports. A v1 plugin that
// exports neither loads and runs as before; a host that predates them
// ignores them. The export table tells the host: it calls them only when
// both are exported.
//
// Elements. The state is a list of elements, each one msgpack value. A
// checkpoint keeps each subtask's list; a restore at the same parallelism
// gives every subtask its own list back, and one at another parallelism
// deals all the elements out round robin over the new subtasks (Flink's
// ListState redistribution), so a subtask may get none, its own, or
// several. A guest whose state is one blob emits one element (the SDKs emit
// it as a msgpack bin); a guest whose state splits (one element per
// partition it reads, per buffered record) emits one element each, so a
// rescale can spread them.
//
// Why emit and msgpack values: it is how every other call hands bytes to
// the host (describe and a key selector emit msgpack values on port 0 just
// so), it needs no new import, and the host checks each element is one
// well-formed value, so the elements are self-delimiting in the checkpoint.
const (
	// ExportSnapshot: snapshot() -> status i32. Optional (with
	// ExportRestore). Called on the subtask's goroutine between two
	// batches, when a checkpoint barrier passes the operator, under the
	// usual call limits (fuel, call-timeout). The guest emits its state on
	// port 0 as count msgpack values, one per element (count 0, or no
	// emit: no state); one or more emits. It must not change its state.
	// Its bytes over all emits may not pass the instance's memory limit
	// (the memory-pages setting): state that lives in guest memory is
	// never larger. A non-zero status or a trap declines the checkpoint
	// (the job goes on; the instance is replaced after a trap).
	// StatusUnsupported means the operator keeps no operator state (an
	// SDK that exports snapshot for every operator returns it for one that
	// declared none): the host snapshots nothing for it and refuses to
	// restore elements into it.
	ExportSnapshot = "sluice_snapshot"

	// ExportRestore: restore(ptr i32, len i32) -> status i32. Optional
	// (with ExportSnapshot). ptr/len hold one element, the msgpack value
	// as snapshot emitted it, written by the host into the buffer from
	// ExportBuffer. When a job starts from a checkpoint the host calls it
	// after open and before the first batch, once per element the subtask
	// gets, in the checkpoint's order; not at all when it gets none. After
	// a rescale a subtask may get several elements (from several old
	// subtasks): the guest merges them (a count adds them up).
	ExportRestore = "sluice_restore"
)
