package fuel

// Opcodes of the inserted code (§5.4).
const (
	opLocalGet     = 0x20
	opLocalSet     = 0x21
	opLocalTee     = 0x22
	opI64ExtendI32 = 0xad // i64.extend_i32_u
	opI64Shl       = 0x86
	opI64ShrU      = 0x88
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
type emitter struct {
	counter uint32 // the counter's global index
	cached  bool   // the body keeps the counter in local fuel
	fuel    uint32 // the local holding the counter, if cached
	n       uint32 // the i32 scratch local of bulk charges
}

func (e emitter) site(dst []byte, s site) []byte {
	switch s.kind {
	case siteEntry:
		dst = appendU32(append(dst, opGlobalGet), e.counter)
		dst = appendS64(append(dst, opI64Const), int64(s.cost))
		return e.settle(append(dst, opI64Sub))
	case siteLoop:
		dst = appendU32(append(dst, opLocalGet), e.fuel)
		dst = appendS64(append(dst, opI64Const), int64(s.cost))
		return e.settle(append(dst, opI64Sub))
	case siteBulkMemory, siteBulkTable:
		// n, the instruction's last operand (an i32 on top of the stack:
		// the length or element count, §5.4.5, §5.4.6), stays on the stack
		// for it; n<<6 of a u32 cannot overflow an i64, nor can the
		// counter, which is at least 0 here.
		dst = appendU32(append(dst, opLocalTee), e.n)
		dst = e.load(dst)
		dst = appendU32(append(dst, opLocalGet), e.n)
		dst = append(dst, opI64ExtendI32, opI64Const)
		if s.kind == siteBulkTable {
			dst = append(dst, bulkElemShift, opI64Shl)
		} else {
			dst = append(dst, bulkByteShift, opI64ShrU)
		}
		return e.settle(append(dst, opI64Sub))
	case siteSyncOut:
		dst = appendU32(append(dst, opLocalGet), e.fuel)
		return appendU32(append(dst, opGlobalSet), e.counter)
	case siteSyncIn:
		dst = appendU32(append(dst, opGlobalGet), e.counter)
		return appendU32(append(dst, opLocalSet), e.fuel)
	}
	panic("fuel: unknown site kind")
}

// load pushes the counter.
func (e emitter) load(dst []byte) []byte {
	if e.cached {
		return appendU32(append(dst, opLocalGet), e.fuel)
	}
	return appendU32(append(dst, opGlobalGet), e.counter)
}

// settle stores the new counter value on the stack and traps unless it is
// non-negative; a trapping body with a cached counter stores it to the
// global first, so the host always reads a negative value after
// exhaustion.
func (e emitter) settle(dst []byte) []byte {
	if e.cached {
		dst = appendU32(append(dst, opLocalTee), e.fuel)
		dst = append(dst, opI64Const, 0x00, opI64GeS, opIf, blockEmpty, opElse)
		dst = appendU32(append(dst, opLocalGet), e.fuel)
		dst = appendU32(append(dst, opGlobalSet), e.counter)
		return append(dst, opUnreachable, opEnd)
	}
	dst = appendU32(append(dst, opGlobalSet), e.counter)
	dst = appendU32(append(dst, opGlobalGet), e.counter)
	return append(dst, opI64Const, 0x00, opI64GeS, opIf, blockEmpty, opElse, opUnreachable, opEnd)
}
