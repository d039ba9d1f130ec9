// Package pipeline turns a pipeline YAML file into typed structs that keep
// the line and column of everything a user wrote, and lints it, reporting
// every problem at once as file:line:col: message.
package pipeline

import "github.com/sluicehq/sluice/host/connector/spec"

// Pos is a position in a pipeline file (1-based; zero when unknown).
type Pos struct {
	Line, Col int
}

// Pipeline is a parsed pipeline file. Defaults are applied by the parser:
// Mode "streaming", Parallelism 1, Chaining true.
type Pipeline struct {
	File           string // the path it was read from ("" for bytes)
	Version        int
	Name           string
	Mode           Mode
	Parallelism    int
	MaxParallelism int // 0: computed per operator, as Flink does
	Chaining       bool
	Slots          int // 0: the host's setting decides
	Plugins        map[string]*Plugin
	Operators      []*Operator // in file order
	// Checkpointing and RestartStrategy are the checkpointing: and
	// restart-strategy: keys (checkpointing.go); nil when not written.
	Checkpointing   *Checkpointing
	RestartStrategy *RestartStrategy
	// Watermarks is the pipeline's watermarks: (watermarks.go), the
	// strategy of every source that writes none; nil when not written.
	Watermarks *Watermarks
	Pos        Pos
	// KeyPos holds where each top-level key was written (for example
	// KeyPos["slots"]), so later stages can point at a setting.
	KeyPos map[string]Pos
}

// Mode is the execution mode as written.
type Mode string

// Execution modes.
const (
	Streaming Mode = "streaming"
	Batch     Mode = "batch"
	Automatic Mode = "automatic"
)

// Plugin is one entry of the plugins: section.
type Plugin struct {
	Name   string
	Path   string // as written, relative to the pipeline file's folder
	Config map[string]any
	// ConfigPos holds where the value of each top-level config key was
	// written, so an error about one (a plugin's "config KEY: ...") can
	// point at it.
	ConfigPos map[string]Pos
	// Grants are the nondeterministic capabilities given to the plugin
	// (grant: [clock, random]); without them it sees a fake clock and a
	// seeded random stream.
	Grants    []string
	GrantsPos Pos // where grant's value was written
	Pos       Pos
}

// Grants a plugin may be given.
const (
	GrantClock  = "clock"
	GrantRandom = "random"
)

// Kind is an operator's kind: exactly one kind key per operator.
type Kind string

// Operator kinds, named as in the YAML.
const (
	KindSource    Kind = "source"
	KindMap       Kind = "map"
	KindFilter    Kind = "filter"
	KindFlatMap   Kind = "flat-map"
	KindProcess   Kind = "process"
	KindReduce    Kind = "reduce"
	KindSum       Kind = "sum"
	KindMin       Kind = "min"
	KindMax       Kind = "max"
	KindMinBy     Kind = "min-by"
	KindMaxBy     Kind = "max-by"
	KindCount     Kind = "count"
	KindCoMap     Kind = "co-map"
	KindCoProcess Kind = "co-process"
	KindSink      Kind = "sink"
)

// Operator is one entry of the operators: list.
type Operator struct {
	ID   string
	Kind Kind
	Pos  Pos

	Plugin string     // map, filter, flat-map, process, reduce, co-map, co-process
	Field  string     // sum, min, max, min-by, max-by
	Source *Connector // source
	Sink   *Connector // sink

	// Last: min-by or max-by written with first: false (Flink's
	// minBy(field, false)): of records tied on the extreme value the later
	// one is kept; by default, the first.
	Last bool

	// Window is the operator's window: or window-all: (window.go); nil
	// for a rolling aggregation.
	Window *Window

	// Inputs in order. For a co-map or co-process these are the two
	// connected inputs (connect: [a, b]); otherwise one input, or several
	// for a union. Resolved by the parser: an operator with no input: (and
	// not a source) reads the previous operator in the file.
	Inputs []Input

	KeyBy     *KeySpec       // key-by: the input edge is HASH
	Partition *PartitionSpec // partition: the input edge's strategy

	Parallelism      int // 0: the job's default
	MaxParallelism   int // 0: the job's, else computed
	DisableChaining  bool
	StartNewChain    bool
	SlotSharingGroup string // "" : inherited, as Flink does
	Config           map[string]any
	ConfigPos        map[string]Pos // as Plugin.ConfigPos, for the operator's config
	OnError          string         // "" (fail), "fail", "skip", "dead-letter"
	// KeyPos holds where each key of the operator was written (for
	// example KeyPos["parallelism"]), so later stages can point at it.
	KeyPos map[string]Pos
}

// Input names an upstream operator, or one side output of a process
// operator (input: proc.tag).
type Input struct {
	Operator   string
	SideOutput string // "" for the main output
	Pos        Pos
	// Partition: the strategy of this input's edge, written on the input
	// ({from: a, partition: broadcast}), as Flink partitions each stream
	// before a union or a connect (a.broadcast().union(b.shuffle())). Nil:
	// the operator's partition, key-by or the default.
	Partition *PartitionSpec
}

// InputPartition is the partitioning written for input i: the input's
// own, else the operator's (nil when neither gives one).
func (op *Operator) InputPartition(i int) *PartitionSpec {
	if i < len(op.Inputs) && op.Inputs[i].Partition != nil {
		return op.Inputs[i].Partition
	}
	return op.Partition
}

// Partitions lists every partitioning the operator writes: the operator's
// and each input's.
func (op *Operator) Partitions() []*PartitionSpec {
	var out []*PartitionSpec
	if op.Partition != nil {
		out = append(out, op.Partition)
	}
	for _, in := range op.Inputs {
		if in.Partition != nil {
			out = append(out, in.Partition)
		}
	}
	return out
}

// KeySpec is a key-by: one field, several fields (a composite key, hashed
// as a Flink tuple) or a key-selector plugin.
type KeySpec struct {
	Fields   []string
	FieldPos []Pos // where each of Fields was written
	Plugin   string
	Pos      Pos
}

// PartitionSpec is an explicit partition: forward, rebalance, rescale,
// shuffle, global, broadcast, or custom with a partitioner plugin and the
// field whose value is the partitioning key.
type PartitionSpec struct {
	Strategy string   // "forward", "rebalance", ..., "custom"
	Plugin   string   // custom only
	Keys     []string // custom only: the key field, or fields (a composite key, a Flink tuple)
	Pos      Pos
}

// Connector is a source or sink: its type and the rest of its options as
// written (validated by lint against the connector's spec).
type Connector struct {
	Type string
	// Options holds every key but type, validated against the connector's
	// spec, as plain Go values: string, int, float64, bool, nil, []any
	// and map[string]any (what yaml gives an `any`).
	Options map[string]any
	Pos     Pos
	// Spec is the connector's spec in the set it was parsed against; nil
	// for a Connector made in code (its methods then read the built-in
	// connector of its type).
	Spec *spec.Connector
	// Watermarks is a source's watermarks: (Flink's
	// fromSource(source, WatermarkStrategy, name)); nil when not written.
	// Pipeline.WatermarksOf gives the one a source runs with.
	Watermarks *Watermarks
}

// Map is a YAML mapping whose key order matters: the records of an
// elements source are written with their keys in the order the file gives
// (print shows them in that order). Other options and configs use
// map[string]any.
type Map struct {
	Keys   []string
	Values map[string]any
}
