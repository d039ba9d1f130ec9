// Package fuel adds deterministic CPU budgets to WebAssembly modules by
// rewriting them before they are compiled. wazero has no instruction
// metering, and its only interruption, WithCloseOnContextDone, calls into
// Go at every loop header (4–40× slower on loop-heavy guests). Instrument
// instead makes every defined function charge a fuel counter at its entry,
// at every loop header and before every bulk memory or table instruction,
// and trap when the counter goes negative. On wazero 1.12's compiler a
// loop header's check is a register subtract and a not-taken fused
// compare-and-branch.
//
// It is a binary-to-binary transform, standard library only. The module's
// sections, types, imports, functions, tables, memories and exports are
// decoded by internal/wasmbin, the host's one Wasm binary reader
// (InstrumentModule takes a module already decoded, as Load has it); this
// package decodes the rest and every instruction of the MVP and of the proposals wazero accepts by
// default (multi-value, sign extension, saturating truncation, bulk memory,
// reference types, fixed-width SIMD) plus threads/atomics; it refuses tail
// calls, exception handling, typed function references, GC, relaxed SIMD
// and memory64 rather than guess at their encodings. It also checks every
// vector count in the module against the bytes holding it, caps locals at
// 50000 per function and checks type indices, because wazero 1.12
// allocates from such counts (a 20-byte module can ask for gigabytes) and
// panics on some bad type indices: run Instrument before CompileModule.
// For the same reason it enforces compile limits (limits.go, ErrLimit):
// block nesting (MaxNesting), blocks and loops per function (MaxBlocks,
// MaxLoops), parameters and results per type (MaxParams, MaxResults) and
// locals plus parameters per module (MaxModuleLocals), past which wazero's
// compiler, which ignores its context, runs for seconds to minutes or
// allocates gigabytes on modules of a few kilobytes. CheckLimits checks
// the same limits without rewriting, for modules compiled unmetered.
// References are to the WebAssembly Core Specification 2.0, chapter 5
// "Binary Format".
//
// # What the rewrite does
//
//   - A global (mut i64) is appended after all other globals, imported
//     ones first, so its index is imported+defined globals and no
//     existing index moves. It is exported as ExportName; a module that
//     already exports that name, or that names a global index it does not
//     have (which would become the counter), is refused.
//   - A function without loops charges the global at its entry:
//     global.get; i64.const cost; i64.sub; global.set; global.get;
//     i64.const 0; i64.ge_s; if; else; unreachable; end.
//   - A function with loops copies the global into a new local at its
//     entry (charging it there), charges the local at each loop header,
//     stores it back to the global before every call, return, branch to
//     the function's label and at its end, reloads it after every call,
//     and stores it before trapping. See emitter for the measurements
//     behind the sequences.
//   - Costs follow Options.Model: by default the weighted instruction
//     count of the region the site heads (see CostRegion), plus, at run
//     time, the size of each bulk memory or table operation.
//   - With Options.Refuel, a site that leaves the counter negative first
//     calls the import RefuelModule.RefuelName (appended after the
//     module's function imports, so defined functions move up one index
//     and every reference to them is renumbered) and traps only if the
//     counter it returns is still negative. The out-of-line code is laid
//     out so that the hot path does not jump over it (see emitter, also
//     for what the call still costs): a function's entry runs the function again
//     after refuelling (through a small thunk, appended after the bodies,
//     for functions without loops) and a loop header branches back to the
//     header.
//
// # Host protocol
//
// Compile the output of Instrument instead of the plugin's bytes (cache
// the output by the input's hash). After instantiating, look up the
// counter once: mod.ExportedGlobal(fuel.ExportName).(api.MutableGlobal),
// and wrap it with NewMeter. Then for every call into the instance,
// including _initialize:
//
//	m.Begin(budget)              // counter = budget
//	err := fn.CallWithStack(ctx, stack)
//	used, err := m.End(err)      // counter read back
//
// A call that returns normally leaves budget-used in the counter. A call
// that trapped with the counter negative ran out of fuel: End wraps
// ErrExhausted and the trap ("wasm error: unreachable"). Guest code cannot
// address the counter; only the inserted checks (which store it and trap
// at once) and host functions that charge fuel make it negative. So a
// negative counter after a failed call means the budget ran out, and a
// non-negative one means the failure was something else (another trap, a
// host function error, a closed module); after such a failure the counter
// may lag the work done since the function last stored it. Either way a
// trap leaves the instance in an unknown state: discard it.
//
// A runaway call stops before it executes an instruction its budget cannot
// pay for: the check at the head of a region charges the whole region
// first, so the counter ends between -cost and -1, where cost is the
// charge of that site. Each instruction's charge is meant to cover its
// time (see cost.go), so a budget bounds time too: about 0.03–0.2 ns per
// fuel on the reference machine, the upper end for tight loops. Time spent
// in host functions is not fuel: they should honour the call's context, or
// charge fuel themselves by lowering the same counter (the guest traps at
// its next site if that makes it negative; a call that finishes first
// returns normally with a negative counter).
//
// A start function runs during instantiation, before the host can set the
// counter, with Options.InitialFuel (0 by default, so it traps).
//
// # Slices
//
// With Options.Refuel the host can hand a call its budget a slice at a
// time and act between slices (yield the thread, wait for a rate):
//
//	m.BeginSliced(budget, slice) // counter = the first slice
//	// the refuel import: stack[0] = uint64(m.Refuel(int64(stack[0])))
//	used, err := m.End(err)
//
// Refuel adds the next slice (more if one site's charge needs it) until
// the budget is spent, then returns a still negative counter, so the
// guest traps exactly where it would have with the whole budget at once:
// the same instruction, the same counter. A refuel import that returns
// its argument unchanged makes the module behave as without Refuel.
package fuel
