package fuel

import "github.com/sluicehq/sluice/internal/wasmbin"

// Opcodes the instrumenter emits or treats specially (WebAssembly Core
// Specification 2.0, §5.4 "Instructions").
const (
	opUnreachable = 0x00
	opBlock       = 0x02
	opLoop        = 0x03
	opIf          = 0x04
	opElse        = 0x05
	opEnd         = 0x0b
	opGlobalGet   = 0x23
	opGlobalSet   = 0x24
	opI64Const    = 0x42
	opI64GeS      = 0x59
	opI64Sub      = 0x7d
	opI64LtS      = 0x53
	opCall        = 0x10
	opRefFunc     = 0xd2

	blockEmpty = 0x40 // block type []→[] (§5.4.1)
	valI64     = 0x7e // number type i64 (§5.3.1)
)

// kind classifies a decoded instruction for the body walker.
type kind uint8

const (
	kPlain      kind = iota // no effect on structure
	kBlock                  // block: opens a label
	kLoop                   // loop: opens a label and a metering site
	kIf                     // if: opens a label that may take an else
	kElse                   // else
	kEnd                    // end: closes the innermost label (or the body)
	kGrow                   // memory.grow, table.grow: a call into the runtime
	kBulkMemory             // memory.init/copy/fill: work proportional to n bytes
	kBulkTable              // table.init/copy/fill: work proportional to n elements
	kCall                   // call, call_indirect
	kReturn                 // return
	kBr                     // br, br_if: instr.label is the label index
	kBrTable                // br_table: instr.label is the largest label index
)

// instr is one decoded instruction.
type instr struct {
	kind  kind
	label uint32 // for kBr and kBrTable
	// fn is set for call and ref.func, whose immediate (a function index,
	// fidx) starts at offset fat of the reader's bytes.
	fn   bool
	fidx uint32
	fat  int
	// local is the index of local.get, local.set and local.tee (isLocal).
	local   uint32
	isLocal bool
	// params says a loop (or block, if) takes parameters.
	params bool
}

// bounds are the index spaces readInstr checks immediates against. The
// runtime validates the rest; these two matter here: a global index equal
// to the counter's would let guest code refill its fuel, and wazero 1.12
// panics instead of failing on some out-of-range type indices.
type bounds struct {
	types   uint32   // entries in the type section
	params  [][]byte // each type's parameter types, when known
	globals uint32   // globals other than the counter: the counter's index
	// funcs, when not 0, bounds function indices (imported and defined
	// functions): set when the refuel import renumbers them, so that no
	// out-of-range index can be shifted onto a valid one.
	funcs uint32
}

// readInstr decodes one instruction with all its immediates and returns
// its kind. It knows the MVP and the proposals wazero 1.12 accepts by
// default (§5.4.1–§5.4.8: sign extension, non-trapping float-to-int, bulk
// memory, reference types, multi-value, fixed-width SIMD) plus
// threads/atomics, decoded exactly and left to the runtime to accept or
// not. Anything else is refused rather than guessed: a mis-decoded
// immediate could hide a loop from the meter.
func readInstr(r *wasmbin.Reader, b bounds) (instr, error) {
	op, err := r.Byte()
	if err != nil {
		return instr{}, err
	}
	switch {
	// unreachable, nop, return, drop, select, ref.is_null, and the numeric
	// instructions including sign extension 0xc0–0xc4 (§5.4.7)
	case op == opUnreachable, op == 0x01, op == 0x1a, op == 0x1b, op == 0xd1,
		op >= 0x45 && op <= 0xc4:
		return instr{}, nil
	case op == 0x0f:
		return instr{kind: kReturn}, nil
	case op == opBlock:
		p, err := readBlockType(r, b)
		return instr{kind: kBlock, params: p}, err
	case op == opLoop:
		p, err := readBlockType(r, b)
		return instr{kind: kLoop, params: p}, err
	case op == opIf:
		p, err := readBlockType(r, b)
		return instr{kind: kIf, params: p}, err
	case op == opElse:
		return instr{kind: kElse}, nil
	case op == opEnd:
		return instr{kind: kEnd}, nil
	case op == 0x0c, op == 0x0d: // br l, br_if l
		l, err := r.U32()
		return instr{kind: kBr, label: l}, err
	case op == opCall, op == opRefFunc: // call f, ref.func f
		in := instr{fn: true, fat: r.Off}
		if op == opCall {
			in.kind = kCall
		}
		var err error
		in.fidx, err = readFuncIndex(r, b, nil)
		return in, err
	case op >= opLocalGet && op <= opLocalTee: // local.get/set/tee x
		x, err := r.U32()
		return instr{local: x, isLocal: true}, err
	// table.get/set t, memory.size m
	case op == 0x25, op == 0x26, op == 0x3f:
		_, err := r.U32()
		return instr{}, err
	case op == 0x40: // memory.grow m
		_, err := r.U32()
		return instr{kind: kGrow}, err
	case op == opGlobalGet, op == opGlobalSet:
		_, err := r.Index(b.globals, ErrExportExists, "global")
		return instr{}, err
	case op == 0x0e: // br_table l* l
		l, err := readBrTable(r)
		return instr{kind: kBrTable, label: l}, err
	case op == 0x11: // call_indirect typeidx tableidx
		if _, err := r.Index(b.types, ErrMalformed, "type"); err != nil {
			return instr{}, err
		}
		_, err := r.U32()
		return instr{kind: kCall}, err
	case op == 0x1c: // select t*
		_, err := r.ValTypes()
		return instr{}, err
	case op >= 0x28 && op <= 0x3e: // loads and stores
		return instr{}, readMemarg(r)
	case op == 0x41: // i32.const
		return instr{}, r.S32()
	case op == opI64Const:
		return instr{}, r.S64()
	case op == 0x43: // f32.const
		return instr{}, r.Skip(4)
	case op == 0x44: // f64.const
		return instr{}, r.Skip(8)
	case op == 0xd0: // ref.null t
		return instr{}, readHeapType(r)
	case op == 0xfc:
		k, err := readMisc(r)
		return instr{kind: k}, err
	case op == 0xfd:
		return instr{}, readSIMD(r)
	case op == 0xfe:
		return instr{}, readAtomic(r)
	}
	r.Off-- // report the opcode's own offset
	if why, ok := refused[op]; ok {
		return instr{}, r.Errorf(ErrUnsupported, "opcode %#02x (%s)", op, why)
	}
	return instr{}, r.Errorf(ErrUnsupported, "unknown opcode %#02x", op)
}

// refused names the proposals behind opcodes that decode but are refused.
var refused = map[byte]string{
	0x06: "exception handling", 0x07: "exception handling", 0x08: "exception handling",
	0x09: "exception handling", 0x0a: "exception handling", 0x18: "exception handling",
	0x19: "exception handling", 0x1f: "exception handling",
	0x12: "tail calls", 0x13: "tail calls", 0x15: "tail calls",
	0x14: "typed function references", 0xd3: "typed function references",
	0xd4: "typed function references", 0xd6: "typed function references",
	0xd5: "GC", 0xfb: "GC",
}

// readBlockType decodes a block type (§5.4.1): 0x40, one value type byte,
// or a type index as a non-negative s33 (multi-value). It reports whether
// the type takes parameters, when b knows the types' parameters.
func readBlockType(r *wasmbin.Reader, b bounds) (bool, error) {
	c, err := r.Peek()
	if err != nil {
		return false, err
	}
	if c == blockEmpty || wasmbin.IsValType(c) {
		r.Off++
		return false, nil
	}
	start := r.Pos()
	x, err := r.SLEB(33)
	if err != nil {
		return false, err
	}
	if x < 0 {
		r.Off = start - r.Base
		return false, r.Errorf(ErrUnsupported, "block type %#02x", c)
	}
	if x >= int64(b.types) {
		r.Off = start - r.Base
		return false, r.Errorf(ErrMalformed, "block type index %d out of range (%d types)", x, b.types)
	}
	return int(x) < len(b.params) && len(b.params[x]) > 0, nil
}

// readHeapType decodes ref.null's reference type (§5.4.2).
func readHeapType(r *wasmbin.Reader) error {
	c, err := r.Byte()
	if err != nil {
		return err
	}
	if c != 0x70 && c != 0x6f {
		r.Off--
		return r.Errorf(ErrUnsupported, "heap type %#02x", c)
	}
	return nil
}

// readBrTable decodes vec(labelidx) labelidx (§5.4.1) and returns the
// largest label. The count comes from the input, so nothing is allocated
// from it.
func readBrTable(r *wasmbin.Reader) (uint32, error) {
	n, err := r.Count()
	if err != nil {
		return 0, err
	}
	var top uint32
	for i := uint64(0); i <= uint64(n); i++ {
		l, err := r.U32()
		if err != nil {
			return 0, err
		}
		top = max(top, l)
	}
	return top, nil
}

func readU32s(r *wasmbin.Reader, n uint64) error {
	for ; n > 0; n-- {
		if _, err := r.U32(); err != nil {
			return err
		}
	}
	return nil
}

// readMemarg decodes a memarg (§5.4.6): align u32, offset u32. Bit 6 of
// align announces a memory index (multi-memory), decoded for exactness.
func readMemarg(r *wasmbin.Reader) error {
	align, err := r.U32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 {
		if _, err := r.U32(); err != nil {
			return err
		}
	}
	_, err = r.U32()
	return err
}

// readMisc decodes the 0xFC-prefixed instructions (§5.4.7 saturating
// truncation 0–7; §5.4.5 and §5.4.6 bulk memory and table 8–17).
func readMisc(r *wasmbin.Reader) (kind, error) {
	sub, err := r.U32()
	if err != nil {
		return kPlain, err
	}
	switch sub {
	case 0, 1, 2, 3, 4, 5, 6, 7: // i32/i64.trunc_sat_f32/f64_s/u
		return kPlain, nil
	case 8, 10: // memory.init d m, memory.copy m m
		return kBulkMemory, readU32s(r, 2)
	case 11: // memory.fill m
		return kBulkMemory, readU32s(r, 1)
	case 12, 14: // table.init e t, table.copy t t
		return kBulkTable, readU32s(r, 2)
	case 17: // table.fill t
		return kBulkTable, readU32s(r, 1)
	case 15: // table.grow t
		return kGrow, readU32s(r, 1)
	case 9, 13, 16: // data.drop d, elem.drop e, table.size t
		return kPlain, readU32s(r, 1)
	}
	return kPlain, r.Errorf(ErrUnsupported, "opcode 0xfc %d", sub)
}

// SIMD immediate shapes (§5.4.8).
const (
	simdBad   = iota // not an opcode of the fixed-width SIMD proposal
	simdNone         // no immediate
	simdMem          // memarg
	simdMemLn        // memarg laneidx
	simdLane         // laneidx (one byte)
	simdBytes        // 16 bytes: v128.const, i8x16.shuffle
)

// simdShape maps each 0xFD sub-opcode below 256 to its immediate shape;
// the twenty unassigned codes stay simdBad.
var simdShape = func() (t [256]uint8) {
	for i := range t {
		t[i] = simdNone
	}
	for _, op := range []int{0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4,
		0xbb, 0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee} {
		t[op] = simdBad
	}
	for op := 0x00; op <= 0x0b; op++ { // v128.load*, v128.store
		t[op] = simdMem
	}
	t[0x5c], t[0x5d] = simdMem, simdMem // v128.load32/64_zero
	t[0x0c], t[0x0d] = simdBytes, simdBytes
	for op := 0x15; op <= 0x22; op++ { // extract_lane, replace_lane
		t[op] = simdLane
	}
	for op := 0x54; op <= 0x5b; op++ { // v128.load/store*_lane
		t[op] = simdMemLn
	}
	return t
}()

func readSIMD(r *wasmbin.Reader) error {
	sub, err := r.U32()
	if err != nil {
		return err
	}
	shape := uint8(simdBad)
	if sub < 256 {
		shape = simdShape[sub]
	}
	switch shape {
	case simdNone:
		return nil
	case simdMem:
		return readMemarg(r)
	case simdMemLn:
		if err := readMemarg(r); err != nil {
			return err
		}
		return r.Skip(1)
	case simdLane:
		return r.Skip(1)
	case simdBytes:
		return r.Skip(16)
	}
	return r.Errorf(ErrUnsupported, "opcode 0xfd %#x (not fixed-width SIMD)", sub)
}

// readAtomic decodes the 0xFE-prefixed instructions of the threads
// proposal: notify/wait and all loads, stores and read-modify-writes take
// a memarg; atomic.fence takes a zero byte. wazero runs them only with
// experimental.CoreFeaturesThreads.
func readAtomic(r *wasmbin.Reader) error {
	sub, err := r.U32()
	if err != nil {
		return err
	}
	switch {
	case sub <= 0x02, sub >= 0x10 && sub <= 0x4e:
		return readMemarg(r)
	case sub == 0x03:
		c, err := r.Byte()
		if err != nil {
			return err
		}
		if c != 0 {
			return r.Errorf(ErrMalformed, "atomic.fence flags %#02x", c)
		}
		return nil
	}
	return r.Errorf(ErrUnsupported, "opcode 0xfe %#x", sub)
}
