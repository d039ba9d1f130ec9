// Package sandbox holds sluice's adversarial suite, in its tests only: one
// named test per row of the sandbox brief (../shared/design/sandbox.md),
// TestSandbox01_InfiniteLoop to TestSandbox20_CompileBomb, each running
// tiny WAT fixtures (testdata/*.wat, built with wat2wasm from wabt) through
// the real plugin host, engine and connectors, and asserting what a user
// sees: the error's words (plugin, operator, subtask, cause), the job's
// final state, the host still working afterwards, and for the noisy
// neighbour the other tenant's output. BenchmarkNoisyNeighbour measures
// tenant B's throughput alone and beside tenant A's misbehaving jobs.
//
// The cases:
//
//	01 InfiniteLoop             a guest that never returns is stopped at its call-timeout
//	02 MemoryBomb               memory.grow past the memory-pages limit
//	03 InitialMemoryAboveLimit  a module declaring more memory than allowed is refused
//	04 UnboundedRecursion       stack exhaustion traps, the host survives
//	05 EmitOutOfBounds          an emit pointing outside guest memory is refused
//	06 OutputOverLimit          more output than max-output-bytes in one call
//	07 MalformedOutput          emitted bytes that are not valid records
//	08 BadPartitioner           a custom partitioner returning -1, >= n, or unstable channels
//	09 TrapMidBatch             a trap discards the call's partial output
//	10 LifecycleErrors          open, process and close failing or trapping
//	11 RefusedAtLoad            wrong ABI marker, missing exports, unknown imports
//	12 WASIConfined             no files, no network, empty environment
//	13 Deterministic            the clock and random numbers are the same every run
//	14 CraftedConfig            path traversal, YAML alias bombs, deep nesting, huge files
//	15 HugeRecords              large records cut batches by bytes; memory stays bounded
//	16 MalformedSourceRecords   bad input lines under each on-error policy
//	17 SlowSink                 back-pressure keeps memory bounded
//	18 LogFlood                 a guest writing stderr without end is capped
//	19 NoisyNeighbour           one tenant's runaway jobs beside another's
//	20 CompileBomb              nesting, loops or locals that would stall the compiler are refused at load
package sandbox
