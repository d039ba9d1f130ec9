// Package plugin runs sluice plugins: WebAssembly modules that implement
// ABI v1 (package abi), executed in-process by wazero. It is the only
// package of the host that imports wazero.
//
// A [Host] owns one wazero runtime (one memory class: every instance it
// creates shares the same page limit) with an optional on-disk compilation
// cache. [Host.Load] and [Host.LoadFile] check a module against ABI v1
// before compiling it (size, marker, exports, imports, memory) and compile
// each distinct module once. A [Module] then makes instances through the
// adapters the engine uses: [Operator] (runtime.Operator), [Partitioner]
// (runtime.CustomPartitioner), [KeySelector] (runtime.KeySelector), and
// [Set], which implements runtime.Plugins.
//
// Every instance belongs to one subtask and is used from one goroutine. A
// call into the guest that traps, passes its deadline, calls proc_exit or
// breaks the ABI poisons the instance: the call fails with a *[PluginError]
// naming the plugin, operator, subtask, export and cause, the instance is
// closed, and the next call runs on a fresh instance (opened again with the
// same configuration). Output is buffered per call and handed on only when
// the call succeeds: a batch is all-or-nothing.
//
// When the engine gives an operator an error policy (OpenContext.Reject),
// a failed batch is narrowed down to its bad records by bisection
// (package bisect, adapted in isolate.go): under skip or dead-letter the good records' output comes
// out exactly once and in order and each bad record goes to the policy;
// under fail the job's error names the first bad record (position and
// key). Keyed-state writes of failed calls are undone (journal.go). A
// record that poisoned the instance counts as a crash of the restart
// policy (package restart, applied in restart.go): Config.RestartAttempts
// within RestartWindow, each after RestartDelay, then the job fails.
//
// Calls are bounded by an interrupter (interrupt.go): by default fuel
// metering (package fuel rewrites the module; the module is decoded once,
// by package wasmbin, for the checks and the rewrite) handed out in slices,
// between which a long call gives way to other tenants and pays its fuel
// rate (package sched).
//
// Guests get no file system, network, environment or arguments, fake
// clocks and a seeded random stream unless the pipeline grants a plugin
// clock or random (grants.go). Files are opened through os.Root of the
// allowed folders (LoadFileIn). CheckFile checks a module's header
// without compiling it (host lint). What a job does with its pipeline's
// plugins (load them into a Set, check the pipeline's uses of them and
// its memory budget) is package jobplugins': this package knows modules
// and instances, not pipelines.
package plugin
