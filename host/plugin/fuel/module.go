package fuel

import (
	"fmt"

	"github.com/sluicehq/sluice/internal/wasmbin"
)

// What Instrument refuses of what wasmbin.Decode reads: the checks here
// are the rewriter's policy, the decoding is wasmbin's.

// typeParams checks the types against MaxParams and MaxResults and returns
// each type's parameter types (aliasing the module).
func typeParams(types []wasmbin.FuncType) ([][]byte, error) {
	params := make([][]byte, len(types))
	for i, t := range types {
		if len(t.Params) > MaxParams {
			return nil, limitf("type %d has %d parameters, more than the limit of %d", i, len(t.Params), MaxParams)
		}
		if len(t.Results) > MaxResults {
			return nil, limitf("type %d has %d results, more than the limit of %d", i, len(t.Results), MaxResults)
		}
		params[i] = t.Params
	}
	return params, nil
}

// refuse is an error of class at offset at.
func refuse(class error, at int, format string, args ...any) error {
	return &wasmbin.Error{Class: class, Offset: at, Msg: fmt.Sprintf(format, args...)}
}

// checkImports refuses an import from RefuelModule (that import is the
// rewrite's own, and guest code calling it could forge counter values),
// tag imports, and table and memory imports whose limits checkLimits
// refuses.
func checkImports(imports []wasmbin.Import) error {
	for _, im := range imports {
		switch {
		case im.Module == RefuelModule:
			return refuse(ErrExportExists, im.At, "the module imports from %q, the metering's own import module", RefuelModule)
		case im.Kind == wasmbin.KindTag:
			return refuse(ErrUnsupported, im.At, "tag import (exception handling)")
		case im.Kind == wasmbin.KindTable || im.Kind == wasmbin.KindMemory:
			if err := checkLimits(im.Limits); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkLimits refuses memory64 (flag bit 2): flag 0 (min) or 1 (min max),
// and the threads proposal's 2 and 3 for shared memories, pass.
func checkLimits(l wasmbin.Limits) error {
	if l.Flags > 3 {
		return refuse(ErrUnsupported, l.At, "limits flag %#02x", l.Flags)
	}
	return nil
}

// checkMemories refuses memory64 memories.
func checkMemories(mems []wasmbin.Limits) error {
	for _, l := range mems {
		if err := checkLimits(l); err != nil {
			return err
		}
	}
	return nil
}

// checkTables refuses tables whose limits checkLimits refuses.
func checkTables(tables []wasmbin.Table) error {
	for _, t := range tables {
		if err := checkLimits(t.Limits); err != nil {
			return err
		}
	}
	return nil
}

// capTables writes the table section again with every table's maximum at
// most limit entries: a table without a maximum (Go's wasip1 modules
// declare none) or with a larger one gets limit, so that table.grow past
// it returns -1 as the spec has it for a maximum (§4.4.6) instead of
// making the runtime allocate without bound; a table whose minimum is
// above limit is refused, and so is a module with more than MaxTables
// tables (a runtime allocates every table's minimum when it instantiates
// the module: a hundred tables of 2^18 entries, an 840-byte module, took
// 210 MB).
func capTables(tables []wasmbin.Table, limit uint32) ([]byte, error) {
	if len(tables) > MaxTables {
		return nil, limitf("declares %d tables, more than the limit of %d", len(tables), MaxTables)
	}
	out := wasmbin.AppendU32(make([]byte, 0, 5+12*len(tables)), uint32(len(tables)))
	for i, t := range tables {
		l := t.Limits
		if l.Flags > 1 {
			return nil, refuse(ErrUnsupported, l.At, "table limits flag %#02x", l.Flags)
		}
		if l.Min > uint64(limit) {
			return nil, refuse(ErrLimit, l.At, "table %d has %d entries, more than the limit of %d", i, l.Min, limit)
		}
		hi := uint64(limit)
		if l.HasMax() {
			hi = min(l.Max, hi)
		}
		out = wasmbin.AppendU32(wasmbin.AppendU32(append(out, t.RefType, 0x01), uint32(l.Min)), uint32(hi))
	}
	return out, nil
}
