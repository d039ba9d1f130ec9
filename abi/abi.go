package abi

// Version is the ABI version this package describes.
const Version = 1

// ImportModule is the wasm import module that holds every host function of
// ABI v1. A guest importing from another module name (for example
// "sluice_v2") fails to link with a message naming the module.
const ImportModule = "sluice_v1"

// MarkerExport is the function every v1 plugin exports. Signature () -> ();
// the host checks that it exists and never calls it.
const MarkerExport = "sluice_abi_v1"

// MarkerPrefix is the prefix shared by every version's marker; a module that
// exports another version's marker is told which version it was built for.
const MarkerPrefix = "sluice_abi_v"

// Guest exports. Every export except the marker and buffer returns an i32
// status (see Status).
const (
	// ExportBuffer: buffer(size i32) -> ptr i32.
	// Returns a pointer to at least size writable bytes in guest memory, or 0
	// when the guest cannot allocate them. The host writes the next call's
	// input there. The region stays reserved for the host until the next
	// call to buffer: the guest keeps none of its own data there, and the
	// host may write the input of later calls there without calling buffer
	// again as long as it fits in size bytes (it calls buffer only to get a
	// larger region). During a call the guest may change that call's input
	// bytes in place (the Go SDK sets a field to a value of the same size
	// so): the host writes every call's input afresh and never reads the
	// region back. Required.
	ExportBuffer = "sluice_buffer"

	// ExportOpen: open(ptr i32, len i32, subtask i32, parallelism i32,
	// max_parallelism i32) -> status i32.
	// ptr/len hold the operator's configuration from the pipeline as a
	// msgpack map (an empty map when there is none), written by the host
	// into a buffer obtained from ExportBuffer. Called once per instance
	// before any other call except describe. Required.
	ExportOpen = "sluice_open"

	// ExportProcess: process(port i32, ptr i32, len i32, count i32) -> status i32.
	// ptr/len hold count records (a batch) arriving on input port (0, or 1
	// for the second input of a co-operator). The guest emits its results
	// with ImportEmit before it returns. Required for every kind but a
	// partitioner.
	ExportProcess = "sluice_process"

	// ExportClose: close() -> status i32. Called once at the end of the
	// input. A keyed reduce or process may emit final results here.
	// Optional.
	ExportClose = "sluice_close"

	// ExportPartition: partition(ptr i32, len i32, count i32, n i32) -> status i32.
	// ptr/len hold count records whose envelope key is the partitioning key;
	// the guest emits on port 0 exactly count little-endian i32 channel
	// indices, each in [0, n). Required for a partitioner.
	ExportPartition = "sluice_partition"

	// ExportDescribe: describe() -> status i32. Optional. The guest emits on
	// port 0 a single msgpack map (count 1) describing itself, see Describe.
	ExportDescribe = "sluice_describe"

	// ExportInitialize is the WASI reactor initialiser. When a module exports
	// it the host calls it once, before anything else.
	ExportInitialize = "_initialize"

	// ExportStart is the WASI command entry point. A module exporting it is
	// a command, not a reactor, and is refused.
	ExportStart = "_start"
)

// Host imports, all in module ImportModule.
const (
	// ImportEmit: emit(port i32, ptr i32, len i32, count i32) -> status i32.
	// Hands count records (ptr/len in guest memory) to the host on an
	// output port: 0 is the main output, other ports come from ImportPort.
	// The host copies the bytes before it returns. It returns StatusOK,
	// StatusLimit when the call's output would pass the configured
	// per-call limit (nothing is copied), StatusMalformed when the bytes
	// are not count well-formed records, or StatusHost for an out-of-bounds
	// range or unknown port. Any status but StatusOK fails the whole call,
	// whatever the guest returns: a batch is all-or-nothing.
	ImportEmit = "emit"

	// ImportEmitEnds: emit_ends(port i32, ptr i32, len i32, count i32,
	// ends i32) -> status i32. Optional: emit, with the end of each record
	// given as well. ends points to count little-endian u32 in guest
	// memory, the offset just past record i from ptr: strictly increasing,
	// the last equal to len. The host checks each record on its own against
	// its end (CheckBatchEnds), which costs it about half the time of
	// finding the ends itself; ends that disagree with the records are
	// refused like a malformed batch (StatusMalformed), an ends range out of
	// bounds like a bad range (StatusHost). A guest that keeps its output
	// record by record knows the ends for the price of a store.
	ImportEmitEnds = "emit_ends"

	// ImportPort: port(ptr i32, len i32) -> port i32.
	// Returns the output port for the side-output tag held in ptr/len
	// (UTF-8). The empty tag is the main output, 0. The same tag always
	// gets the same port within an instance. Negative on a bad range.
	ImportPort = "port"

	// ImportError: error(ptr i32, len i32).
	// Sets the text of the error for the current call; the host reports it
	// when the call returns a non-zero status. Text past MaxErrorText bytes
	// is cut.
	ImportError = "error"

	// ImportStateGet: state_get(slot i32, key_ptr i32, key_len i32,
	// buf_ptr i32, buf_cap i32) -> len i32.
	// Reads the keyed state value under (slot, key), where slot is 0 to
	// MaxStateSlots-1 (an operator's state descriptors) and key is the
	// msgpack-encoded record key. Returns the value's length and copies it
	// into buf when it fits; when len > buf_cap nothing is written and the
	// guest calls again with a larger buffer. Returns -1 when there is no
	// value, and StatusState or StatusHost (both below -1) when the call is
	// refused: state on an unkeyed operator, or a bad range. Only keyed
	// operators may call it.
	ImportStateGet = "state_get"

	// ImportStatePut: state_put(slot i32, key_ptr i32, key_len i32,
	// val_ptr i32, val_len i32) -> status i32. Stores a copy of the value;
	// a slot outside 0..MaxStateSlots-1 or a value longer than
	// MaxStateValue is refused with StatusState.
	ImportStatePut = "state_put"

	// ImportStateDel: state_del(slot i32, key_ptr i32, key_len i32) -> status i32.
	ImportStateDel = "state_del"
)

// List and map state, and clear: optional host imports (Flink's ListState,
// MapState and State.clear). A v1 plugin that does not import them loads
// and runs as before. They work under (slot, key) as state_get does: key
// is the msgpack-encoded record key of a keyed operator, slot is 0 to
// MaxStateSlots-1. A slot holds one kind of state — value (state_get,
// state_put, state_del), list (state_list_*) or map (state_map_*) — fixed
// by the plugin's describe ("state", see Describe) or by the slot's first
// use; a call using it as another kind is refused with StatusState and an
// error naming the plugin, operator, slot and both kinds. state_clear
// clears a slot of any kind. Every call below returns StatusState when it
// is refused (state on an unkeyed operator, a slot out of range, the wrong
// kind, a key outside the subtask's key groups, a list or map that would
// pass MaxStateValue in all, the state-memory limit) and StatusHost for a
// range outside guest memory; both fail the whole call.
//
// Wire layouts (all integers little-endian):
//
//	list: repeated { u32 len, len bytes }                    (elements in order)
//	map:  repeated { u32 klen, klen bytes, u32 vlen, vlen bytes }  (user keys ascending, bytewise)
//
// Elements, user keys and values are opaque bytes to the host (the SDKs
// put msgpack there). With a TTL on the slot (Describe "state" ttl-ms, or
// the operator's state-ttl), expired values, elements and entries are
// never returned: they are dropped when read (and when written next to),
// and left out of snapshots.
const (
	// ImportStateListGet: state_list_get(slot i32, key_ptr i32, key_len
	// i32, buf_ptr i32, buf_cap i32) -> len i32. Writes the list of (slot,
	// key) in the list wire layout into buf when it fits and returns its
	// length; when len > buf_cap nothing is written and the guest calls
	// again with a larger buffer (as state_get). Returns -1 when there is
	// no list (never appended to, cleared, or every element expired).
	ImportStateListGet = "state_list_get"

	// ImportStateListAppend: state_list_append(slot i32, key_ptr i32,
	// key_len i32, val_ptr i32, val_len i32) -> status i32. Adds a copy of
	// the element at the end of the list (ListState.add).
	ImportStateListAppend = "state_list_append"

	// ImportStateListUpdate: state_list_update(slot i32, key_ptr i32,
	// key_len i32, buf_ptr i32, buf_len i32) -> status i32. Replaces the
	// list with the elements in buf (the list wire layout; buf_len 0
	// clears it): ListState.update. A buf that is not that layout is
	// refused with StatusState.
	ImportStateListUpdate = "state_list_update"

	// ImportStateMapGet: state_map_get(slot i32, key_ptr i32, key_len i32,
	// ukey_ptr i32, ukey_len i32, buf_ptr i32, buf_cap i32) -> len i32.
	// The value of user key ukey in the map of (slot, key), as state_get
	// returns a value: its length, copied when it fits; -1 when absent.
	ImportStateMapGet = "state_map_get"

	// ImportStateMapPut: state_map_put(slot i32, key_ptr i32, key_len i32,
	// ukey_ptr i32, ukey_len i32, val_ptr i32, val_len i32) -> status i32.
	ImportStateMapPut = "state_map_put"

	// ImportStateMapDel: state_map_del(slot i32, key_ptr i32, key_len i32,
	// ukey_ptr i32, ukey_len i32) -> status i32. Removing an absent user
	// key is not an error. The map of a key whose last entry goes is
	// cleared.
	ImportStateMapDel = "state_map_del"

	// ImportStateMapContains: state_map_contains(slot i32, key_ptr i32,
	// key_len i32, ukey_ptr i32, ukey_len i32) -> i32. 1 when the map
	// holds ukey, 0 when not, StatusState or StatusHost when refused.
	ImportStateMapContains = "state_map_contains"

	// ImportStateMapEntries: state_map_entries(slot i32, key_ptr i32,
	// key_len i32, buf_ptr i32, buf_cap i32) -> len i32. The whole map of
	// (slot, key) in the map wire layout, user keys ascending (bytewise),
	// as state_list_get returns a list; -1 when there is no map. This is
	// MapState.entries, keys and values in one call.
	ImportStateMapEntries = "state_map_entries"

	// ImportStateClear: state_clear(slot i32, key_ptr i32, key_len i32) ->
	// status i32. Removes the state of (slot, key) whatever its kind
	// (State.clear).
	ImportStateClear = "state_clear"
)

// Status is the i32 every export (and some imports) return.
type Status int32

// Status codes. Zero is success; every failure is negative.
const (
	StatusOK          Status = 0
	StatusMalformed   Status = -1 // the input could not be decoded
	StatusOutOfMemory Status = -2 // the guest could not allocate
	StatusUser        Status = -3 // the user's function returned an error
	StatusUnsupported Status = -4 // the plugin does not implement this call
	StatusState       Status = -5 // keyed state misuse (e.g. state on an unkeyed operator)
	StatusConfig      Status = -6 // the operator configuration is invalid; error text "config KEY: ..." lets the host point at KEY in the pipeline file
	StatusHost        Status = -7 // the host refused a host call (bad range, unknown port)
	StatusLimit       Status = -8 // a limit was reached (output bytes per call)
)

// String names the status as the host reports it.
func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusMalformed:
		return "malformed input"
	case StatusOutOfMemory:
		return "out of memory"
	case StatusUser:
		return "user error"
	case StatusUnsupported:
		return "unsupported"
	case StatusState:
		return "state error"
	case StatusConfig:
		return "config error"
	case StatusHost:
		return "host refused a call"
	case StatusLimit:
		return "limit reached"
	}
	return "unknown status " + itoa(int64(s))
}

// Limits shared by both sides of the wire.
const (
	// MaxDepth is the deepest nesting of arrays and maps the scanner
	// accepts in a record.
	MaxDepth = 64
	// MaxErrorText is how much of an error text the host keeps.
	MaxErrorText = 4096
	// MaxTagLen is the longest side-output tag.
	MaxTagLen = 256
	// MaxStateSlots bounds the state slots of a keyed operator (Flink's
	// state descriptors): a slot is 0 to MaxStateSlots-1. The host keeps a
	// list per slot, so an unbounded slot number let one state_put make
	// it allocate gigabytes.
	MaxStateSlots = 1024
	// MaxStateValue is the longest keyed-state value, 16 MiB.
	MaxStateValue = 16 << 20
)

// Kind is what an operator plugin does; reported by describe.
type Kind string

// Plugin kinds.
const (
	KindMap         Kind = "map"
	KindFilter      Kind = "filter"
	KindFlatMap     Kind = "flat-map"
	KindProcess     Kind = "process"
	KindReduce      Kind = "reduce"
	KindCoMap       Kind = "co-map"
	KindCoProcess   Kind = "co-process"
	KindPartitioner Kind = "partitioner"
	KindKeySelector Kind = "key-selector"
)

// Kinds are every plugin kind, in the order messages list them.
var Kinds = []Kind{KindMap, KindFilter, KindFlatMap, KindProcess, KindReduce,
	KindCoMap, KindCoProcess, KindPartitioner, KindKeySelector, KindProcessWindow}

// Known reports whether k is one of Kinds.
func (k Kind) Known() bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Describe lists the keys of the msgpack map a guest emits from
// ExportDescribe: "kind" (a Kind), "sdk" (e.g. "go"), "name", "outputs"
// (an array of side-output tags), "keyed" (a bool), and "state": an array
// of maps declaring state slots, each {"slot": int, "kind": "value" |
// "list" | "map", "ttl-ms": int (optional, > 0: time to live in
// milliseconds), "update": "on-create-and-write" (default) |
// "on-read-and-write" (optional)}, as Flink's state descriptors with a
// StateTtlConfig. Unknown keys are ignored.
var Describe = [...]string{"kind", "sdk", "name", "outputs", "keyed", "state"}

// Window functions: optional, a v1 plugin without them loads and runs as
// before. A window's function may be a keyed reduce plugin (KindReduce,
// unchanged: its slot-0 state is the window's accumulator while it runs)
// or a process-window plugin (Flink's ProcessWindowFunction), which
// describes itself with kind KindProcessWindow. When a window fires, the
// host calls the process-window plugin's ExportProcess once, on port 0,
// with a batch of the window's records (in arrival order) after one
// header record: the envelope [max timestamp, key, {"start": start,
// "end": end}] (AppendWindowHeader), the window's bounds in epoch
// milliseconds (end exclusive, max timestamp end - 1) and the window's
// key (nil for a window-all). count is the records plus one. The plugin
// emits the window's output on port 0: each a map, to which the host
// adds the window's bounds (in the fields the pipeline names), the key
// and the max timestamp. A process-window plugin keeps no keyed state of
// its own: the window holds its contents.
const (
	// KindProcessWindow is the describe kind of a process-window plugin.
	KindProcessWindow Kind = "process-window"
	// WindowStartKey and WindowEndKey are the header's fields.
	WindowStartKey = "start"
	WindowEndKey   = "end"
)

// AppendWindowHeader appends the header record of a process-window call.
func AppendWindowHeader(dst, key []byte, start, end int64) []byte {
	v := AppendMapHeader(nil, 2)
	v = AppendInt(AppendStr(v, WindowStartKey), start)
	v = AppendInt(AppendStr(v, WindowEndKey), end)
	return AppendEnvelope(dst, end-1, true, key, v)
}

// ReadWindowHeader reads the bounds from a header record's value.
func ReadWindowHeader(v []byte) (start, end int64, err error) {
	s, ok, err := MapField(v, WindowStartKey)
	if err != nil || !ok {
		return 0, 0, errorString("window header: no " + WindowStartKey)
	}
	e, ok, err := MapField(v, WindowEndKey)
	if err != nil || !ok {
		return 0, 0, errorString("window header: no " + WindowEndKey)
	}
	if start, err = ReadInt(s); err != nil {
		return 0, 0, err
	}
	end, err = ReadInt(e)
	return start, end, err
}

type errorString string

func (e errorString) Error() string { return string(e) }

func itoa(v int64) string {
	var b [20]byte
	i := len(b)
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
