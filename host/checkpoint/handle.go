package checkpoint

// The handles below are what the storage writes into a checkpoint's
// _metadata about one state file, and what a task hands the coordinator in
// its Ack once its files are durable (Flink's state handles): where each
// key group and each element list lies in the file, with a CRC-32C
// (Castagnoli) of its bytes. docs/checkpoints.md gives the byte layout.

// Extent is a byte range of a state file and the CRC-32C of its bytes.
type Extent struct {
	_msgpack struct{} `msgpack:",as_array"`
	Offset   int64
	Length   int64
	CRC      uint32
}

// Section is an element list of a state file (split, union or committable
// elements): Count elements, each a uvarint length and that many bytes,
// in Length bytes at Offset.
type Section struct {
	_msgpack struct{} `msgpack:",as_array"`
	Offset   int64
	Length   int64
	Count    int
	CRC      uint32
}

// Link is one byte range of a key group's chain: in state file File of
// checkpoint Checkpoint of the same job (<job dir>/chk-<Checkpoint>/File).
type Link struct {
	_msgpack   struct{} `msgpack:",as_array"`
	Checkpoint ID
	File       string
	Offset     int64
	Length     int64
	CRC        uint32
}

// SubtaskMeta describes the state file of one subtask of one operator.
type SubtaskMeta struct {
	Subtask int    `msgpack:"subtask"`
	File    string `msgpack:"file"` // a base name inside the checkpoint's directory
	Size    int64  `msgpack:"size"` // the whole file, header included

	// Keyed state: KeyGroups[i] is key group FirstKeyGroup+i; the extents
	// lie back to back in key-group order, so a range of key groups is
	// one contiguous byte range of the file.
	FirstKeyGroup int      `msgpack:"first_key_group"`
	KeyGroups     []Extent `msgpack:"key_groups"`
	// Native is keyed state in a backend's own format, in place of
	// KeyGroups (native.go).
	Native *NativeMeta `msgpack:"native,omitempty"`

	// Chains (format 2, an incremental checkpoint; nil otherwise):
	// Chains[i] is key group FirstKeyGroup+i as a chain of byte ranges,
	// the first its whole state (the base), each next one a delta on it.
	// A link lies in this file (Checkpoint is this checkpoint's id, File
	// its own file, the range one of KeyGroups) or in the state file of an
	// older checkpoint of the same job, which is then kept for as long as
	// a retained checkpoint references it (Retain).
	Chains [][]Link `msgpack:"chains,omitempty"`

	Split        Section `msgpack:"split"`
	Union        Section `msgpack:"union"`
	Committables Section `msgpack:"committables"`
}

// SubtaskFile is a SubtaskMeta with the operator it belongs to: what
// Writer.Write returns and a task acknowledges a checkpoint with.
type SubtaskFile struct {
	Operator       string
	Parallelism    int
	MaxParallelism int
	SubtaskMeta
}
