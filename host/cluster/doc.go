// Package cluster is the pure part of running one job on several sluice
// instances over Kafka (issue #28): the cluster planner (Plan: which
// edges of a planned job cross instances, the internal topic of each, the
// consumer group, the units of work the group hands out) and the
// assignment state machines (Balance, the group leader's cooperative
// sticky assignor; Member, one instance's view of its units), in the
// manner of etcd's raft: no goroutines, no clock, no I/O. Tests and the
// Kafka driver (host/cluster/kgroup) feed them events and carry out the
// actions they return; host/cluster/unitjob makes a unit a job of its own,
// and host run --cluster runs them (docs/cluster.md).
package cluster
