package partition

import (
	"fmt"
	"strings"
)

// The strategy names, as Flink's StreamPartitioner.toString prints them in
// plans and the UI (flink-semantics.md §2).
const (
	NameForward   = "FORWARD"
	NameHash      = "HASH"
	NameRebalance = "REBALANCE"
	NameRescale   = "RESCALE"
	NameShuffle   = "SHUFFLE"
	NameGlobal    = "GLOBAL"
	NameBroadcast = "BROADCAST"
	NameCustom    = "CUSTOM"
)

var names = []string{NameForward, NameHash, NameRebalance, NameRescale, NameShuffle, NameGlobal, NameBroadcast, NameCustom}

// Names lists the strategy names New and NewCustom build.
func Names() []string { return append([]string(nil), names...) }

// Partitioner picks downstream channels for records leaving ONE upstream
// subtask. Not safe for concurrent use: each upstream subtask owns one
// (some keep a counter or a random source). It is Flink's
// StreamPartitioner.selectChannel (flink-semantics.md §2).
type Partitioner interface {
	// Name is the strategy name: FORWARD, HASH, REBALANCE, RESCALE,
	// SHUFFLE, GLOBAL, BROADCAST or CUSTOM.
	Name() string
	// Channel returns the downstream channel in [0, n) of one record;
	// keyHash is the record key's abi.KeyHash (only HASH reads it). Not
	// called for BROADCAST (see IsBroadcast). It does not allocate.
	Channel(keyHash int32) int
}

// Config describes the edge a Partitioner serves and the upstream subtask
// that owns it.
type Config struct {
	// Upstream is the index of the upstream subtask, in
	// [0, UpstreamParallelism).
	Upstream int
	// UpstreamParallelism and DownstreamParallelism are the parallelisms
	// of the edge's two operators, each in 1..32768. The number of
	// channels n is DownstreamParallelism.
	UpstreamParallelism, DownstreamParallelism int
	// MaxParallelism (HASH only) is the downstream operator's max
	// parallelism, the number of key groups; 0 means
	// DefaultMaxParallelism(DownstreamParallelism).
	MaxParallelism int
	// Seed (REBALANCE, SHUFFLE) seeds the random source; upstream
	// subtask i draws from a stream derived from (Seed, i). The same Seed
	// gives the same channels on every run.
	Seed int64
}

// New builds the partitioner of strategy name (case-insensitive, e.g.
// "HASH" or "hash") for upstream subtask cfg.Upstream. It validates cfg:
// parallelisms in bounds, Upstream in range, equal parallelism for
// FORWARD (the error wraps ErrForwardParallelism; a planner that knows the
// operator names reports ForwardParallelismError), MaxParallelism for
// HASH. CUSTOM needs a user partitioner: use NewCustom.
func New(name string, cfg Config) (Partitioner, error) {
	name = strings.ToUpper(name)
	if err := cfg.validate(name); err != nil {
		return nil, err
	}
	s, t := cfg.UpstreamParallelism, cfg.DownstreamParallelism
	switch name {
	case NameForward:
		return newForward(cfg)
	case NameHash:
		maxP := cfg.MaxParallelism
		if maxP == 0 {
			maxP = DefaultMaxParallelism(t)
		}
		if err := checkParallelism(t, maxP); err != nil {
			return nil, fmt.Errorf("partition: HASH: downstream %w", err)
		}
		return newHash(maxP, t), nil
	case NameRebalance:
		return newRebalance(t, cfg.Seed, cfg.Upstream), nil
	case NameRescale:
		return newRescale(cfg.Upstream, s, t), nil
	case NameShuffle:
		return newShuffle(t, cfg.Seed, cfg.Upstream), nil
	case NameGlobal:
		return global{}, nil
	case NameBroadcast:
		return &Broadcast{n: t}, nil
	case NameCustom:
		return nil, fmt.Errorf("partition: CUSTOM needs a user partitioner: use NewCustom")
	}
	return nil, fmt.Errorf("partition: unknown strategy %q, want one of %s", name, strings.Join(names, ", "))
}

func (c Config) validate(name string) error {
	if c.UpstreamParallelism < 1 || c.UpstreamParallelism > MaxParallelismUpperBound {
		return fmt.Errorf("partition: %s: upstream parallelism %d not within bounds [1, %d]", name, c.UpstreamParallelism, MaxParallelismUpperBound)
	}
	if c.DownstreamParallelism < 1 || c.DownstreamParallelism > MaxParallelismUpperBound {
		return fmt.Errorf("partition: %s: downstream parallelism %d not within bounds [1, %d]", name, c.DownstreamParallelism, MaxParallelismUpperBound)
	}
	if c.Upstream < 0 || c.Upstream >= c.UpstreamParallelism {
		return fmt.Errorf("partition: %s: upstream subtask %d not in [0, %d)", name, c.Upstream, c.UpstreamParallelism)
	}
	return nil
}

// IsBroadcast reports whether p sends every record to every downstream
// channel (BROADCAST): the engine must not call p.Channel but send each
// record to all n channels.
func IsBroadcast(p Partitioner) bool {
	_, ok := p.(*Broadcast)
	return ok
}

// IsPointwise reports whether strategy name connects subtasks pointwise
// (FORWARD, RESCALE: Flink's DistributionPattern.POINTWISE, see
// PointwiseTargets) rather than all-to-all (flink-semantics.md §2).
func IsPointwise(name string) bool {
	name = strings.ToUpper(name)
	return name == NameForward || name == NameRescale
}

// DefaultName is the strategy of an edge given no partitioning: FORWARD
// between equal parallelisms, else REBALANCE (Flink
// StreamGraph.addEdgeInternal; flink-semantics.md §2).
func DefaultName(upstreamParallelism, downstreamParallelism int) string {
	if upstreamParallelism == downstreamParallelism {
		return NameForward
	}
	return NameRebalance
}
