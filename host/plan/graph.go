// Package plan is the pure planner: a function from a parsed pipeline to a
// job graph, exactly as Apache Flink's StreamingJobGraphGenerator would
// plan the same DataStream program. No goroutines, no I/O, no clock.
package plan

import "github.com/sluicehq/sluice/host/pipeline"

// Ship strategies, named as Flink prints them.
const (
	Forward   = "FORWARD"
	Hash      = "HASH"
	Rebalance = "REBALANCE"
	Rescale   = "RESCALE"
	Shuffle   = "SHUFFLE"
	Global    = "GLOBAL"
	Broadcast = "BROADCAST"
	Custom    = "CUSTOM"
)

// JobGraph is a planned job.
type JobGraph struct {
	Name          string
	Mode          pipeline.Mode // resolved: Streaming or Batch, never Automatic
	RequiredSlots int
	Operators     []*Operator // topological order (sources first, file order among equals)
	Tasks         []*Task     // topological order
	Edges         []*Edge     // every operator-to-operator edge, chained or not
	Pipeline      *pipeline.Pipeline

	// ModeReason says how Mode was chosen, e.g. "automatic: every source
	// is bounded".
	ModeReason string
	// OfferedSlots is the slots available to the job: the smaller of the
	// pipeline's slots: and the host's offer that is set; 0: unlimited.
	OfferedSlots int
	// Groups are the slot sharing groups in order of first use; their
	// slot ranges are consecutive, starting at 0.
	Groups []*SlotSharingGroup
	// Hints are advice a senior Flink engineer would give on this plan.
	Hints []Hint
}

// SlotSharingGroup is a set of tasks whose subtasks share slots: subtask
// i of every task in the group runs in slot FirstSlot+i.
type SlotSharingGroup struct {
	Name      string
	Slots     int // the highest parallelism among its tasks
	FirstSlot int
}

// Hint is one piece of advice about an operator or an edge.
type Hint struct {
	Operator string // the operator it is about
	Text     string
}

// Operator is one planned operator.
type Operator struct {
	ID               string
	Kind             pipeline.Kind
	Parallelism      int
	MaxParallelism   int
	SlotSharingGroup string
	Task             int  // index in JobGraph.Tasks
	Keyed            bool // its (every) input edge is HASH
	// KeyGroups[i] is the inclusive key-group range of subtask i; set for
	// keyed operators.
	KeyGroups []KeyGroupRange
	Inputs    []*Edge // in input order; Edge.InputIndex tells co-operator sides apart
	Outputs   []*Edge
	Spec      *pipeline.Operator // what the user wrote
	// State is where a keyed operator keeps its keyed state: the
	// operator's state: setting, else the pipeline's, else the host's
	// (Options.StateBackend), else the heap.
	State State
}

// State is the keyed-state backend of an operator.
type State struct {
	Backend string // "heap" or "pebble"
	// Dir is the folder that holds Pebble's databases, one per keyed
	// subtask ("": the host's working folder for state).
	Dir string
	// DiskQuota caps the bytes one subtask's Pebble database holds (0:
	// none).
	DiskQuota int64
	// Note says why the backend differs from the one asked for ("": it
	// does not).
	Note string
}

// KeyGroupRange is an inclusive range of key groups.
type KeyGroupRange struct{ Start, End int }

// Task is a chain of operators run by one goroutine per subtask.
type Task struct {
	Index            int
	Name             string   // "Source: a -> b -> c"
	Operators        []string // operator ids, head first
	Parallelism      int
	SlotSharingGroup string
	// Slots[i] is the slot subtask i occupies (as Flink's scheduler places
	// subtasks of a slot sharing group into shared slots).
	Slots []int
}

// EdgeKey names the edge from -> to in one string, "from->to": the key
// of its edge plugin's config (plugin.Set.Configs) and the name its
// plugin's calls are counted and reported under. Operator ids hold no
// '>', so it is unambiguous.
func EdgeKey(from, to string) string { return from + "->" + to }

// Edge connects two operators.
type Edge struct {
	From, To     string
	SideOutput   string // "" for the main output
	InputIndex   int    // 0, or 1 for the second input of a co-operator
	ShipStrategy string // one of the constants above
	KeyFields    []string
	KeyPlugin    string   // HASH through a key-selector plugin
	CustomPlugin string   // CUSTOM: the partitioner plugin
	CustomKeys   []string // CUSTOM: the key field, or fields (a composite key)
	Chained      bool
	Reason       string // why it did not chain; "" when chained
	// Blocking: in batch mode every edge that is not chained, FORWARD
	// included, is a BLOCKING result partition: the downstream reads it
	// only after the upstream finished. Always false in streaming mode.
	Blocking bool

	written bool // the strategy was written (a partition), not chosen by default
}
