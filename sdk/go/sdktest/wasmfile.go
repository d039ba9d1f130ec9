package sdktest

import (
	"errors"
	"strconv"
)

// This file reads the import and export sections of a wasm module: just
// enough to check a plugin's ABI without a runtime.

// funcSig is a function signature as counts of i32 parameters and results;
// other value types make it invalid.
type funcSig struct {
	params, results int
	ok              bool // every value type is i32
}

func (s funcSig) String() string {
	if !s.ok {
		return "(non-i32 types)"
	}
	return "(" + strconv.Itoa(s.params) + " x i32) -> " + strconv.Itoa(s.results) + " x i32"
}

// wasmModule is what CheckModule looks at.
type wasmModule struct {
	imports map[string]funcSig // "module.name" of imported functions
	exports map[string]funcSig // exported functions
}

type wasmReader struct {
	b   []byte
	off int
	err error
}

func (r *wasmReader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.err = errors.New("wasm: truncated module")
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *wasmReader) u32() int {
	var v, shift uint
	for i := 0; i < 5; i++ {
		c := r.byte()
		v |= uint(c&0x7f) << shift
		if c&0x80 == 0 {
			return int(v)
		}
		shift += 7
	}
	r.err = errors.New("wasm: bad LEB128")
	return 0
}

func (r *wasmReader) name() string {
	n := r.u32()
	if r.err != nil || n > len(r.b)-r.off {
		r.err = errors.New("wasm: truncated name")
		return ""
	}
	s := string(r.b[r.off : r.off+n])
	r.off += n
	return s
}

// parseWasm reads the type, import, function and export sections.
func parseWasm(b []byte) (*wasmModule, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, errors.New("wasm: not a wasm module")
	}
	r := &wasmReader{b: b, off: 8}
	var types, funcs []funcSig // funcs: the function index space
	m := &wasmModule{imports: map[string]funcSig{}, exports: map[string]funcSig{}}
	for r.off < len(b) && r.err == nil {
		id, size := r.byte(), r.u32()
		end := r.off + size
		if r.err != nil || size > len(b)-r.off {
			return nil, errors.New("wasm: truncated section")
		}
		switch id {
		case 1:
			types = readTypes(r)
		case 2:
			funcs = readImports(r, types, m)
		case 3:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				funcs = append(funcs, sigAt(types, r.u32()))
			}
		case 7:
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				name, kind, idx := r.name(), r.byte(), r.u32()
				if kind == 0 {
					m.exports[name] = sigAt(funcs, idx)
				}
			}
		}
		r.off = end
	}
	return m, r.err
}

func sigAt(s []funcSig, i int) funcSig {
	if i < 0 || i >= len(s) {
		return funcSig{}
	}
	return s[i]
}

func readTypes(r *wasmReader) []funcSig {
	var types []funcSig
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		if r.byte() != 0x60 {
			r.err = errors.New("wasm: unknown type form")
			return nil
		}
		s := funcSig{ok: true}
		for k := 0; k < 2; k++ {
			cnt := r.u32()
			for i := 0; i < cnt; i++ {
				if r.byte() != 0x7f { // i32
					s.ok = false
				}
			}
			if k == 0 {
				s.params = cnt
			} else {
				s.results = cnt
			}
		}
		types = append(types, s)
	}
	return types
}

// readImports records imported functions and returns their signatures in
// index order; other imports (memory, table, global) are skipped.
func readImports(r *wasmReader, types []funcSig, m *wasmModule) []funcSig {
	var funcs []funcSig
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		mod, name := r.name(), r.name()
		switch r.byte() {
		case 0:
			s := sigAt(types, r.u32())
			funcs = append(funcs, s)
			m.imports[mod+"."+name] = s
		case 1: // table: reftype + limits
			r.byte()
			readLimits(r)
		case 2:
			readLimits(r)
		case 3: // global: valtype + mut
			r.byte()
			r.byte()
		}
	}
	return funcs
}

func readLimits(r *wasmReader) {
	if r.byte()&1 == 1 {
		r.u32()
	}
	r.u32()
}
