package plugin

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file reads the parts of a wasm binary the host checks before it
// compiles anything: types, imports, functions, memories and exports.
// wazero validates the rest when it compiles.

// valType is a wasm value type.
type valType byte

const (
	valI32       valType = 0x7f
	valI64       valType = 0x7e
	valF32       valType = 0x7d
	valF64       valType = 0x7c
	valV128      valType = 0x7b
	valFuncref   valType = 0x70
	valExternref valType = 0x6f
)

func (v valType) String() string {
	switch v {
	case valI32:
		return "i32"
	case valI64:
		return "i64"
	case valF32:
		return "f32"
	case valF64:
		return "f64"
	case valV128:
		return "v128"
	case valFuncref:
		return "funcref"
	case valExternref:
		return "externref"
	}
	return fmt.Sprintf("type 0x%02x", byte(v))
}

// funcType is a function signature.
type funcType struct{ params, results []valType }

func (t funcType) equal(o funcType) bool {
	return string(valBytes(t.params)) == string(valBytes(o.params)) &&
		string(valBytes(t.results)) == string(valBytes(o.results))
}

func valBytes(v []valType) []byte {
	b := make([]byte, len(v))
	for i, t := range v {
		b[i] = byte(t)
	}
	return b
}

// String renders the signature as "(i32, i32) -> i32".
func (t funcType) String() string {
	list := func(v []valType) string {
		s := make([]string, len(v))
		for i, x := range v {
			s[i] = x.String()
		}
		return strings.Join(s, ", ")
	}
	r := list(t.results)
	if len(t.results) != 1 {
		r = "(" + r + ")"
	}
	return "(" + list(t.params) + ") -> " + r
}

// External kinds of imports and exports.
const (
	extFunc   byte = 0
	extTable  byte = 1
	extMemory byte = 2
	extGlobal byte = 3
	extTag    byte = 4
)

func extName(k byte) string {
	switch k {
	case extFunc:
		return "function"
	case extTable:
		return "table"
	case extMemory:
		return "memory"
	case extGlobal:
		return "global"
	case extTag:
		return "tag"
	}
	return fmt.Sprintf("kind 0x%02x", k)
}

type limits struct {
	min, max         uint64
	hasMax, mem64    bool
	shared, imported bool
}

type wasmImport struct {
	module, name string
	kind         byte
	typ          funcType // when kind is extFunc
}

type wasmExport struct {
	name  string
	kind  byte
	index uint32
}

// wasmBinary is what parseWasm reads.
type wasmBinary struct {
	types    []funcType
	imports  []wasmImport
	funcs    []uint32 // type index of every function, imported ones first
	memories []limits // imported ones first
	exports  []wasmExport
	// stackFirst: the module looks linked with wasm-ld's --stack-first
	// (see stackLayout), so a stack overflow runs below address 0 and
	// traps as an out-of-bounds memory access.
	stackFirst bool
}

// importsFrom reports whether w imports anything from module.
func (w *wasmBinary) importsFrom(module string) bool {
	for _, im := range w.imports {
		if im.module == module {
			return true
		}
	}
	return false
}

// exportedFunc returns the signature of the exported function name.
func (w *wasmBinary) export(name string) (wasmExport, bool) {
	for _, e := range w.exports {
		if e.name == name {
			return e, true
		}
	}
	return wasmExport{}, false
}

func (w *wasmBinary) funcSig(index uint32) (funcType, bool) {
	if int(index) >= len(w.funcs) || int(w.funcs[index]) >= len(w.types) {
		return funcType{}, false
	}
	return w.types[w.funcs[index]], true
}

var (
	errNotWasm   = errors.New("is not a WebAssembly module")
	errTruncated = errors.New("is a truncated WebAssembly module")
)

// parseWasm reads the module header and the sections the checks need.
func parseWasm(b []byte) (*wasmBinary, error) {
	const header = "\x00asm\x01\x00\x00\x00"
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", errNotWasm)
	}
	if len(b) < 8 && strings.HasPrefix(header, string(b)) {
		return nil, fmt.Errorf("%w: the file ends after %d bytes, inside the 8-byte header", errTruncated, len(b))
	}
	if len(b) < 4 || string(b[:4]) != header[:4] {
		head := b
		if len(head) > 8 {
			head = head[:8]
		}
		return nil, fmt.Errorf("%w: it starts with %q, not the wasm magic \\0asm", errNotWasm, head)
	}
	if len(b) < 8 {
		return nil, fmt.Errorf("%w: the file ends after %d bytes, inside the 8-byte header", errTruncated, len(b))
	}
	if v := uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24; v != 1 {
		return nil, fmt.Errorf("%w: binary format version 0x%08x (a component or a newer format), want 1", errNotWasm, v)
	}
	w := &wasmBinary{}
	var lay stackLayout
	r := &reader{b: b, off: 8}
	for r.off < len(b) {
		start := r.off
		id := r.u8()
		size := r.u32()
		if r.err != nil {
			return nil, r.fail(start, "section header")
		}
		end := r.off + int(size)
		if end > len(b) || end < r.off {
			return nil, fmt.Errorf("%w: section %d at byte %d claims %d bytes but only %d remain", errTruncated, id, start, size, len(b)-r.off)
		}
		sec := &reader{b: b[:end], off: r.off}
		switch id {
		case 1:
			w.readTypes(sec)
		case 2:
			w.readImports(sec)
		case 3:
			n := sec.u32()
			for i := uint32(0); i < n && sec.err == nil; i++ {
				w.funcs = append(w.funcs, sec.u32())
			}
		case 5:
			n := sec.u32()
			for i := uint32(0); i < n && sec.err == nil; i++ {
				w.memories = append(w.memories, sec.limits())
			}
		case 6:
			lay.readGlobals(&reader{b: b[:end], off: r.off})
		case 7:
			w.readExports(sec)
		case 11:
			lay.readData(&reader{b: b[:end], off: r.off})
		}
		if sec.err != nil {
			return nil, sec.fail(start, fmt.Sprintf("section %d", id))
		}
		r.off = end
	}
	w.stackFirst = lay.stackFirst()
	return w, nil
}

// stackLayout tells a module linked with --stack-first from one that is
// not, cheaply and only from what wasm-ld always writes: its first defined
// global is __stack_pointer (mutable i32, i32.const top), and with
// --stack-first every data segment lies at or above that top, the stack
// being [0, top); by default the data comes first, from 1024, and the
// stack above it. The globals and data sections are read only for this, so
// what they hold beyond it is left to wazero's validation: reading stops
// at the first thing it does not expect, and the module is then taken as
// not stack-first.
type stackLayout struct {
	top        uint32 // __stack_pointer's initial value
	hasTop     bool
	data       int  // active data segments, all at or above top so far
	dataBelow  bool // a segment below top, or one at an unknown address
	dataUnread bool
}

func (l *stackLayout) stackFirst() bool {
	return l.hasTop && l.top > 0 && l.data > 0 && !l.dataBelow && !l.dataUnread
}

// readGlobals reads the first defined global, when it is a mutable i32
// set by i32.const.
func (l *stackLayout) readGlobals(r *reader) {
	if r.u32() == 0 {
		return
	}
	typ, mut := valType(r.u8()), r.u8()
	v, ok := r.i32ConstExpr()
	if r.err == nil && ok && typ == valI32 && mut == 1 && v > 0 {
		l.top, l.hasTop = uint32(v), true
	}
}

// readData reads where each active data segment of memory 0 starts.
func (l *stackLayout) readData(r *reader) {
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		flags := r.u32()
		switch flags {
		case 0, 2:
			if flags == 2 && r.u32() != 0 {
				l.dataUnread = true // another memory's segment: nothing to tell
				return
			}
			v, ok := r.i32ConstExpr()
			if !ok {
				l.dataBelow = true // e.g. global.get __memory_base: unknown
				return
			}
			if !l.hasTop || uint32(v) < l.top {
				l.dataBelow = true
			} else {
				l.data++
			}
		case 1: // passive: placed by memory.init, from code
		default:
			l.dataUnread = true
			return
		}
		size := r.u32()
		if r.err == nil && uint64(size) > uint64(len(r.b)-r.off) {
			r.err = errTruncated
		}
		r.off += int(size)
	}
	if r.err != nil {
		l.dataUnread = true
	}
}

func (w *wasmBinary) readTypes(r *reader) {
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		if form := r.u8(); form != 0x60 && r.err == nil {
			r.err = fmt.Errorf("type %d has form 0x%02x; only plain function types (0x60) are supported", i, form)
			return
		}
		var t funcType
		t.params = r.valTypes()
		t.results = r.valTypes()
		w.types = append(w.types, t)
	}
}

func (w *wasmBinary) readImports(r *reader) {
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		im := wasmImport{module: r.name(), name: r.name(), kind: r.u8()}
		switch im.kind {
		case extFunc:
			ti := r.u32()
			if r.err == nil && int(ti) >= len(w.types) {
				r.err = fmt.Errorf("import %s.%s uses type %d of %d", im.module, im.name, ti, len(w.types))
				return
			}
			if r.err == nil {
				im.typ = w.types[ti]
			}
			w.funcs = append(w.funcs, ti)
		case extTable:
			r.u8()
			r.limits()
		case extMemory:
			l := r.limits()
			l.imported = true
			w.memories = append(w.memories, l)
		case extGlobal:
			r.u8()
			r.u8()
		case extTag:
			r.u8()
			r.u32()
		default:
			if r.err == nil {
				r.err = fmt.Errorf("import %s.%s has unknown kind 0x%02x", im.module, im.name, im.kind)
			}
		}
		w.imports = append(w.imports, im)
	}
}

func (w *wasmBinary) readExports(r *reader) {
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		w.exports = append(w.exports, wasmExport{name: r.name(), kind: r.u8(), index: r.u32()})
	}
}

// reader decodes the binary format; the first error sticks.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(sectionStart int, what string) error {
	if errors.Is(r.err, errTruncated) {
		return fmt.Errorf("%w: %s at byte %d ends early (byte %d)", errTruncated, what, sectionStart, r.off)
	}
	return fmt.Errorf("%w: %s at byte %d: %v", errNotWasm, what, sectionStart, r.err)
}

func (r *reader) u8() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.err = errTruncated
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) leb(maxBits uint) uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift >= maxBits {
			r.err = errors.New("LEB128 integer too long")
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) u32() uint32 { return uint32(r.leb(35)) }

// i32ConstExpr reads a constant expression; ok when it is exactly
// i32.const v, end.
func (r *reader) i32ConstExpr() (v int32, ok bool) {
	if r.u8() != 0x41 {
		return 0, false
	}
	var x int64
	var shift uint
	for {
		c := r.u8()
		if r.err != nil || shift >= 35 {
			return 0, false
		}
		x |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				x |= -1 << shift // sign-extend
			}
			break
		}
	}
	if r.u8() != 0x0b || r.err != nil || x < -1<<31 || x >= 1<<31 {
		return 0, false
	}
	return int32(x), true
}

func (r *reader) name() string {
	n := r.u32()
	if r.err != nil {
		return ""
	}
	if uint64(n) > uint64(len(r.b)-r.off) {
		r.err = errTruncated
		return ""
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	if !utf8.Valid(s) {
		r.err = errors.New("name is not UTF-8")
		return ""
	}
	return string(s)
}

func (r *reader) valTypes() []valType {
	n := r.u32()
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(r.b)-r.off) {
		r.err = errTruncated
		return nil
	}
	v := make([]valType, n)
	for i := range v {
		v[i] = valType(r.u8())
		switch v[i] {
		case valI32, valI64, valF32, valF64, valV128, valFuncref, valExternref:
		default:
			if r.err == nil {
				r.err = fmt.Errorf("unsupported value type 0x%02x", byte(v[i]))
			}
			return nil
		}
	}
	return v
}

func (r *reader) limits() limits {
	flags := r.u8()
	l := limits{hasMax: flags&1 != 0, shared: flags&2 != 0, mem64: flags&4 != 0}
	if flags > 7 && r.err == nil {
		r.err = fmt.Errorf("unknown limits flags 0x%02x", flags)
	}
	bits := uint(35)
	if l.mem64 {
		bits = 70
	}
	l.min = r.leb(bits)
	if l.hasMax {
		l.max = r.leb(bits)
	}
	return l
}
