package sdktest

import (
	"strconv"

	"github.com/sluicehq/sluice/internal/wasmbin"
)

// This file reads the import and export sections of a wasm module, with
// the repository's one Wasm binary reader (internal/wasmbin): just enough
// to check a plugin's ABI without a runtime.

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

// parseWasm reads the type, import, function and export sections.
func parseWasm(b []byte) (*wasmModule, error) {
	d, err := wasmbin.Decode(b)
	if err != nil {
		return nil, err
	}
	types := make([]funcSig, len(d.Types))
	for i, t := range d.Types {
		types[i] = funcSig{params: len(t.Params), results: len(t.Results), ok: allI32(t.Params) && allI32(t.Results)}
	}
	m := &wasmModule{imports: map[string]funcSig{}, exports: map[string]funcSig{}}
	var funcs []funcSig // the function index space: imports first
	for _, im := range d.Imports {
		if im.Kind == wasmbin.KindFunc {
			funcs = append(funcs, types[im.Type])
			m.imports[im.Module+"."+im.Name] = types[im.Type]
		}
	}
	for _, t := range d.Funcs {
		funcs = append(funcs, types[t])
	}
	for _, e := range d.Exports {
		if e.Kind == wasmbin.KindFunc {
			var s funcSig // an index out of range: not a signature
			if int(e.Index) < len(funcs) {
				s = funcs[e.Index]
			}
			m.exports[e.Name] = s
		}
	}
	return m, nil
}

func allI32(v []byte) bool {
	for _, t := range v {
		if t != wasmbin.I32 {
			return false
		}
	}
	return true
}
