package plugin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/internal/wasmbin"
)

// This file keeps the parts of a wasm binary the host checks before it
// compiles anything: types, imports, functions, memories and exports, as
// package wasmbin decodes them. wazero validates the rest when it
// compiles.

// valType is a wasm value type.
type valType byte

const (
	valI32       = valType(wasmbin.I32)
	valI64       = valType(wasmbin.I64)
	valF32       = valType(wasmbin.F32)
	valF64       = valType(wasmbin.F64)
	valV128      = valType(wasmbin.V128)
	valFuncref   = valType(wasmbin.Funcref)
	valExternref = valType(wasmbin.Externref)
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
	extFunc   = wasmbin.KindFunc
	extTable  = wasmbin.KindTable
	extMemory = wasmbin.KindMemory
	extGlobal = wasmbin.KindGlobal
	extTag    = wasmbin.KindTag
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
	errNotWasm     = errors.New("is not a WebAssembly module")
	errTruncated   = errors.New("is a truncated WebAssembly module")
	errUnsupported = errors.New("uses a WebAssembly feature the host does not run")
)

// parseWasm reads the module header, then decodes the module (package
// wasmbin) and keeps what the checks need. The decoded module is returned
// too, for the metering rewrite (the same load reads the module once).
func parseWasm(b []byte) (*wasmBinary, *wasmbin.Module, error) {
	const header = "\x00asm\x01\x00\x00\x00"
	if len(b) == 0 {
		return nil, nil, fmt.Errorf("%w: the file is empty", errNotWasm)
	}
	if len(b) < 8 && strings.HasPrefix(header, string(b)) {
		return nil, nil, fmt.Errorf("%w: the file ends after %d bytes, inside the 8-byte header", errTruncated, len(b))
	}
	if len(b) < 4 || string(b[:4]) != header[:4] {
		head := b
		if len(head) > 8 {
			head = head[:8]
		}
		return nil, nil, fmt.Errorf("%w: it starts with %q, not the wasm magic \\0asm", errNotWasm, head)
	}
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("%w: the file ends after %d bytes, inside the 8-byte header", errTruncated, len(b))
	}
	if v := uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24; v != 1 {
		return nil, nil, fmt.Errorf("%w: binary format version 0x%08x (a component or a newer format), want 1", errNotWasm, v)
	}
	m, err := wasmbin.Decode(b)
	if err != nil {
		return nil, nil, decodeError(err)
	}
	w := &wasmBinary{
		types:   make([]funcType, len(m.Types)),
		imports: make([]wasmImport, len(m.Imports)),
		exports: make([]wasmExport, len(m.Exports)),
	}
	for i, t := range m.Types {
		w.types[i] = funcType{params: valTypes(t.Params), results: valTypes(t.Results)}
	}
	for i, im := range m.Imports {
		w.imports[i] = wasmImport{module: im.Module, name: im.Name, kind: im.Kind}
		switch im.Kind {
		case extFunc:
			w.imports[i].typ = w.types[im.Type]
			w.funcs = append(w.funcs, im.Type)
		case extMemory:
			w.memories = append(w.memories, limitsOf(im.Limits, true))
		}
	}
	w.funcs = append(w.funcs, m.Funcs...)
	for _, l := range m.Memories {
		w.memories = append(w.memories, limitsOf(l, false))
	}
	for i, e := range m.Exports {
		w.exports[i] = wasmExport{name: e.Name, kind: e.Kind, index: e.Index}
	}
	var lay stackLayout
	if s := m.Section(wasmbin.SecGlobal); s != nil {
		lay.readGlobals(s.Reader())
	}
	if s := m.Section(wasmbin.SecData); s != nil {
		lay.readData(s.Reader())
	}
	w.stackFirst = lay.stackFirst()
	return w, m, nil
}

// decodeError words a wasmbin error for a person: what is wrong, then
// where (a byte offset, as the other load problems give it).
func decodeError(err error) error {
	var we *wasmbin.Error
	if !errors.As(err, &we) {
		return fmt.Errorf("%w: %v", errNotWasm, err)
	}
	switch {
	case we.End:
		return fmt.Errorf("%w: %s (at byte %d)", errTruncated, we.Msg, we.Offset)
	case errors.Is(we, wasmbin.ErrUnsupported):
		return fmt.Errorf("%w: %s (at byte %d)", errUnsupported, we.Msg, we.Offset)
	}
	return fmt.Errorf("%w: %s (at byte %d)", errNotWasm, we.Msg, we.Offset)
}

func valTypes(b []byte) []valType {
	v := make([]valType, len(b))
	for i, c := range b {
		v[i] = valType(c)
	}
	return v
}

func limitsOf(l wasmbin.Limits, imported bool) limits {
	return limits{min: l.Min, max: l.Max, hasMax: l.HasMax(), mem64: l.Is64(), shared: l.Shared(), imported: imported}
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
func (l *stackLayout) readGlobals(r *wasmbin.Reader) {
	if n, err := r.Count(); err != nil || n == 0 {
		return
	}
	g, err := r.GlobalType()
	if err != nil {
		return
	}
	v, ok := i32ConstExpr(r)
	if ok && g.Type == wasmbin.I32 && g.Mutable && v > 0 {
		l.top, l.hasTop = uint32(v), true
	}
}

// readData reads where each active data segment of memory 0 starts.
func (l *stackLayout) readData(r *wasmbin.Reader) {
	n, err := r.Count()
	for i := uint32(0); i < n && err == nil; i++ {
		var flags uint32
		if flags, err = r.U32(); err != nil {
			break
		}
		switch flags {
		case 0, 2:
			if flags == 2 {
				if mem, err := r.U32(); err != nil || mem != 0 {
					l.dataUnread = true // another memory's segment: nothing to tell
					return
				}
			}
			v, ok := i32ConstExpr(r)
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
		_, err = r.Vec()
	}
	if err != nil {
		l.dataUnread = true
	}
}

// i32ConstExpr reads a constant expression; ok when it is exactly
// i32.const v, end.
func i32ConstExpr(r *wasmbin.Reader) (v int32, ok bool) {
	if op, err := r.Byte(); err != nil || op != 0x41 {
		return 0, false
	}
	x, err := r.SLEB(32)
	if err != nil {
		return 0, false
	}
	if end, err := r.Byte(); err != nil || end != 0x0b {
		return 0, false
	}
	return int32(x), true
}
