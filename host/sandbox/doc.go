// Package sandbox holds sluice's adversarial suite, in its tests only: one
// named test per row of the sandbox brief (../shared/design/sandbox.md),
// TestSandbox01_InfiniteLoop to TestSandbox19_NoisyNeighbour, each running
// tiny WAT fixtures (testdata/*.wat, built with wat2wasm from wabt) through
// the real plugin host, engine and connectors, and asserting what a user
// sees: the error's words (plugin, operator, subtask, cause), the job's
// final state, the host still working afterwards, and for the noisy
// neighbour the other tenant's output. BenchmarkNoisyNeighbour measures
// tenant B's throughput alone and beside tenant A's misbehaving jobs.
package sandbox
