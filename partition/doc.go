// Package partition decides which downstream subtask receives each record,
// the way Apache Flink does, so that a Flink user can predict the subtask
// of every record (docs: flink-semantics.md §1 and §2).
//
// It holds Flink's key-group arithmetic (KeyGroupRangeAssignment and
// MathUtils.murmurHash, keygroup.go), the pointwise pairing of subtasks
// (EdgeManagerBuildUtil.connectPointwise, pointwise.go), one file per edge
// strategy (Flink's StreamPartitioner subclasses: forward.go, hash.go,
// rebalance.go, rescale.go, shuffle.go, global.go, broadcast.go, custom.go)
// and a conformance kit (conformance.go, conformance_custom.go) that any
// partitioner, a plugin's included, can be run through.
//
// A [Partitioner] belongs to ONE upstream subtask and is not safe for
// concurrent use. Channels are absolute downstream subtask indices in
// [0, DownstreamParallelism), also for the pointwise strategies (FORWARD,
// RESCALE), where Flink numbers channels within the subset.
//
// The package imports only the standard library and abi.
package partition
