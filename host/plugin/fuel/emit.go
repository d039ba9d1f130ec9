package fuel

import "github.com/sluicehq/sluice/internal/wasmbin"

// Opcodes of the inserted code (§5.4).
const (
	opLocalGet     = 0x20
	opLocalSet     = 0x21
	opLocalTee     = 0x22
	opI64ExtendI32 = 0xad // i64.extend_i32_u
	opI64Shl       = 0x86
	opI64ShrU      = 0x88
	opI64Add       = 0x7c
	opBr           = 0x0c
	opReturn       = 0x0f
	valI32         = 0x7f
)

// emitter writes the code of the sites of one function body.
//
// A body without loops works on the global directly; its checks are
//
//	global.get $fuel; i64.const cost; i64.sub; global.set $fuel
//	global.get $fuel; i64.const 0; i64.ge_s; if; else; unreachable; end
//
// A body with loops keeps the counter in a local, $f, from its entry
// (loaded from the global there and after every call) and stores it back
// before every call and every exit, so the loop's check is register-only:
//
//	local.get $f; i64.const cost; i64.sub; local.tee $f
//	i64.const 0; i64.ge_s; if; else; local.get $f; global.set $fuel; unreachable; end
//
// The sequences are stack-neutral, so they are valid at a body's start and
// at a loop header whatever the loop's parameters. On wazero 1.12's
// compiler (BenchmarkCheckSequence; machine code read from its cache) the
// if/else form becomes one not-taken fused cmp/jl to an out-of-line trap,
// and the second global.get of the global form reuses the stored value.
// The alternatives lose: an if-then-unreachable puts a taken branch over
// the trap at every site (2.0× on a byte loop); a br_if to one trap block
// per function makes wazero split the shared edge and lose the fusion
// (setl, movzx, test, jne: 1.5× on a nested loop). Between the global and
// the cached form the figures swing with code placement (each is 1.0× or
// 1.2–1.8× on the nested loop depending on what else the process has
// compiled), so the cached form is chosen on principle: the global form
// chains every iteration through a store and a load of the counter, which
// costs the store-to-load forwarding latency wherever the CPU does not
// rename memory, while the local stays in a register (wasmtime's fuel
// likewise keeps the counter in a variable and spills it around calls).
//
// With the refuel import (Options.Refuel) the out-of-line branch calls
// the host before it traps (settle); the check on the hot path is still
// one not-taken fused compare-and-branch, but the call costs the code
// around it. Two things do, both read from wazero 1.12's machine code: a
// branch whose continuation is the code after the check gets laid out
// right after the check, so the hot path jumps over it; and every value
// live across the call that is a phi (a local the loop writes) is spilled
// to the stack where it is defined, on every iteration. The first is
// avoided, the second accepted (what is left of it costs the example
// plugins 2-10 %, RATIONALE.md). So the refuel branch never
// falls back into the code after the check: at a function's entry it
// calls the function again with its own arguments and returns what that
// returns (nothing has run yet; the repeated entry charge is refunded), at
// a loop header it branches back to the header (refunding the header's
// charge), and only a bulk instruction's check, a chunk site (or a header
// of a loop with parameters) falls through. The locals stay where they
// are across the call: keeping the ones the loop writes in globals
// (spills: stored before the call, loaded after) took them off the hot
// path of the fixtures' loops, which call nothing, but in the example
// plugins' compiled code, whose loops call functions, the loads after the
// call made more phis and cost more than they saved (RATIONALE.md, "Why
// the budget comes in slices").
// wazero treats a function's parameters (and its two context pointers) as
// phis of the entry block too, so a function without loops, whose entry
// would otherwise be the only place they are live across a call, calls a
// thunk instead, which does the refuel and the call again; after that
// call only the results are live:
//
//	if; else
//	  <counter>; call $refuel; <store the counter>
//	  <counter>; i64.const 0; i64.lt_s; if; [local.get $f; global.set $fuel;] unreachable; end
//	  entry: <counter>; i64.const cost; i64.add; global.set $fuel; local.get 0 ...; call $self; return
//	  entry without loops: local.get 0 ...; call $thunk; return
//	  loop:  local.get $f; i64.const cost; i64.add; local.set $f; br 1
//	end
type emitter struct {
	counter uint32 // the counter's global index
	cached  bool   // the body keeps the counter in local fuel
	fuel    uint32 // the local holding the counter, if cached
	n       uint32 // the i32 scratch local of bulk charges
	// With the refuel import: the renumbering, the function's own index
	// and parameter count.
	sh     funcShift
	self   uint32
	thunk  uint32 // the thunk of a function without loops
	params uint32
}

func (e emitter) site(dst []byte, s site) []byte {
	switch s.kind {
	case siteEntry:
		dst = wasmbin.AppendU32(append(dst, opGlobalGet), e.counter)
		dst = wasmbin.AppendS64(append(dst, opI64Const), int64(s.cost))
		return e.settle(append(dst, opI64Sub), s)
	case siteLoop:
		dst = wasmbin.AppendU32(append(dst, opLocalGet), e.fuel)
		dst = wasmbin.AppendS64(append(dst, opI64Const), int64(s.cost))
		return e.settle(append(dst, opI64Sub), s)
	case siteChunk:
		dst = wasmbin.AppendS64(append(e.load(dst), opI64Const), int64(s.cost))
		return e.settle(append(dst, opI64Sub), s)
	case siteBulkMemory, siteBulkTable:
		// n, the instruction's last operand (an i32 on top of the stack:
		// the length or element count, §5.4.5, §5.4.6), stays on the stack
		// for it; n<<6 of a u32 cannot overflow an i64, nor can the
		// counter, which is at least 0 here.
		dst = wasmbin.AppendU32(append(dst, opLocalTee), e.n)
		dst = e.load(dst)
		dst = wasmbin.AppendU32(append(dst, opLocalGet), e.n)
		dst = append(dst, opI64ExtendI32, opI64Const)
		if s.kind == siteBulkTable {
			dst = append(dst, bulkElemShift, opI64Shl)
		} else {
			dst = append(dst, bulkByteShift, opI64ShrU)
		}
		return e.settle(append(dst, opI64Sub), s)
	case siteSyncOut:
		dst = wasmbin.AppendU32(append(dst, opLocalGet), e.fuel)
		return wasmbin.AppendU32(append(dst, opGlobalSet), e.counter)
	case siteSyncIn:
		dst = wasmbin.AppendU32(append(dst, opGlobalGet), e.counter)
		return wasmbin.AppendU32(append(dst, opLocalSet), e.fuel)
	case siteFunc:
		return wasmbin.AppendU32(dst, e.sh.index(uint32(s.cost)))
	}
	panic("fuel: unknown site kind")
}

// load pushes the counter.
func (e emitter) load(dst []byte) []byte {
	if e.cached {
		return wasmbin.AppendU32(append(dst, opLocalGet), e.fuel)
	}
	return wasmbin.AppendU32(append(dst, opGlobalGet), e.counter)
}

// keep stores the counter on top of the stack in its home (the local if
// cached, else the global) and leaves it on the stack.
func (e emitter) keep(dst []byte) []byte {
	if e.cached {
		return wasmbin.AppendU32(append(dst, opLocalTee), e.fuel)
	}
	dst = wasmbin.AppendU32(append(dst, opGlobalSet), e.counter)
	return wasmbin.AppendU32(append(dst, opGlobalGet), e.counter)
}

// settle stores the new counter value on the stack and traps unless it is
// non-negative, after asking the refuel import for more if the module has
// it; a trapping body with a cached counter stores it to the global first,
// so the host always reads a negative value after exhaustion.
func (e emitter) settle(dst []byte, s site) []byte {
	dst = e.keep(dst)
	dst = append(dst, opI64Const, 0x00, opI64GeS, opIf, blockEmpty, opElse)
	switch {
	case !e.sh.on:
		return e.trap(dst)
	case s.kind == siteEntry && !e.cached:
		// The thunk refuels and calls the function again: after the
		// call nothing is live but the results.
		dst = e.args(dst)
		return append(wasmbin.AppendU32(append(dst, opCall), e.thunk), opReturn, opEnd)
	case s.kind == siteEntry:
		return append(e.recall(dst, s.cost, e.self), opEnd)
	}
	dst = e.refuel(dst)
	if s.kind == siteLoop && !s.params {
		dst = wasmbin.AppendU32(append(dst, opLocalGet), e.fuel)
		dst = wasmbin.AppendS64(append(dst, opI64Const), int64(s.cost))
		dst = wasmbin.AppendU32(append(dst, opI64Add, opLocalSet), e.fuel)
		dst = append(dst, opBr, 0x01) // the loop: label 0 is the else
	}
	return append(dst, opEnd)
}

// trap ends the out-of-line branch of a check: store the counter if
// cached, unreachable, end.
func (e emitter) trap(dst []byte) []byte {
	if e.cached {
		dst = wasmbin.AppendU32(append(dst, opLocalGet), e.fuel)
		dst = wasmbin.AppendU32(append(dst, opGlobalSet), e.counter)
	}
	return append(dst, opUnreachable, opEnd)
}

// refuel calls the refuel import with the counter, keeps what it returns
// and traps if that is still negative.
func (e emitter) refuel(dst []byte) []byte {
	dst = e.load(dst)
	dst = e.keep(wasmbin.AppendU32(append(dst, opCall), e.sh.at))
	return e.trap(append(dst, opI64Const, 0x00, opI64LtS, opIf, blockEmpty))
}

// recall refuels at a function's entry, refunds the entry's charge into
// the global and calls function fn (the function itself) with the
// parameters, returning its results: the code of a thunk, and of the
// entry of a function with loops.
func (e emitter) recall(dst []byte, cost uint64, fn uint32) []byte {
	dst = e.load(e.refuel(dst))
	dst = wasmbin.AppendS64(append(dst, opI64Const), int64(cost))
	dst = wasmbin.AppendU32(append(dst, opI64Add, opGlobalSet), e.counter)
	return append(wasmbin.AppendU32(append(e.args(dst), opCall), fn), opReturn)
}

// args pushes the function's parameters.
func (e emitter) args(dst []byte) []byte {
	for i := uint32(0); i < e.params; i++ {
		dst = wasmbin.AppendU32(append(dst, opLocalGet), i)
	}
	return dst
}

// thunkBody is the body of the thunk of a function without loops (index
// fn, params parameters, entry charge cost): no locals, then recall.
func thunkBody(counter, params, fn uint32, cost uint64, sh funcShift) []byte {
	e := emitter{counter: counter, sh: sh, params: params}
	return append(e.recall([]byte{0x00}, cost, fn), opEnd)
}
