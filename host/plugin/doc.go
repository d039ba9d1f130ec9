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
package plugin
