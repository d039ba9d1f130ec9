package abi

// Timers (Flink's TimerService and KeyedProcessFunction.onTimer): a keyed
// process plugin registers event-time and processing-time timers for a
// key, and the host calls ExportOnTimer back with that key when one fires.
// All four imports and the export are optional: a v1 plugin without them
// loads and runs as before. A plugin that imports ImportTimerRegister must
// export ExportOnTimer; the host refuses it at load otherwise.
//
// Kinds. TimerEventTime fires when the operator's input watermark reaches
// the timer's timestamp (ts <= watermark), in timestamp order, before the
// watermark goes on downstream, so what onTimer emits is never late for
// the next operator; the end of input (MaxWatermark, BATCH too) fires
// every pending one. TimerProcessingTime fires when the operator's
// processing-time clock (ImportCurrentProcessingTime) reaches it.
//
// Timers are keyed state: they are kept per key group with the key's
// other state, checkpointed with it, and a restore at another parallelism
// takes them with the key groups. One timer per (kind, key, timestamp):
// registering it again does nothing (Flink's dedup); deleting one that is
// not there is not an error.
const (
	// ImportTimerRegister: timer_register(kind i32, key_ptr i32, key_len
	// i32, ts i64) -> status i32. Registers a timer of kind (TimerEventTime
	// or TimerProcessingTime) for the key (the msgpack record key, as for
	// state_get) at ts (epoch milliseconds). StatusState on an unkeyed
	// operator, for a key outside the subtask's key groups or an unknown
	// kind; StatusHost for a bad range. A refusal fails the whole call.
	ImportTimerRegister = "timer_register"

	// ImportTimerDelete: timer_delete(kind i32, key_ptr i32, key_len i32,
	// ts i64) -> status i32. Deletes the timer of (kind, key, ts), refused
	// as timer_register is.
	ImportTimerDelete = "timer_delete"

	// ImportCurrentWatermark: current_watermark() -> i64. The operator's
	// input watermark: MinTimestamp (Long.MIN_VALUE) before the first.
	ImportCurrentWatermark = "current_watermark"

	// ImportCurrentProcessingTime: current_processing_time() -> i64. The
	// processing-time clock in epoch milliseconds: the real clock when the
	// plugin is granted clock, else the host's deterministic clock, the one
	// state TTL uses (the largest event time the subtask has been given).
	ImportCurrentProcessingTime = "current_processing_time"

	// ExportOnTimer: on_timer(kind i32, ts i64, key_ptr i32, key_len i32)
	// -> status i32. A timer of kind fired at ts. key_ptr/key_len hold its
	// key (the msgpack record key), written by the host into the buffer
	// from ExportBuffer as a process input is. The guest emits with emit,
	// as from process, and uses keyed state under that key; it may
	// register and delete timers. A failed on_timer fails the operator.
	ExportOnTimer = "sluice_on_timer"
)

// Timer kinds, the kind argument of the timer calls.
const (
	TimerEventTime      = 0
	TimerProcessingTime = 1
)

// MinTimestamp is current_watermark before the first watermark (Flink's
// Long.MIN_VALUE).
const MinTimestamp int64 = -1 << 63
