package fuel

import (
	"errors"
	"fmt"
	"math"

	"github.com/sluicehq/sluice/internal/wasmbin"
)

// ExportName is the name under which an instrumented module exports its
// fuel counter, a mutable i64 global.
const ExportName = "sluice_fuel"

// CostModel selects what each metering site charges.
type CostModel uint8

const (
	// CostRegion (the default) charges at each function entry and loop
	// header the instruction count of the region it heads (the function
	// or loop body without the bodies of nested loops), with the heavier
	// instructions weighted (see cost.go), and before each bulk memory or
	// table instruction its size. Fuel then bounds the wasm instructions
	// a call may execute, a call given budget B running at most B, and,
	// through the weights, its time; time inside host functions is not
	// counted.
	CostRegion CostModel = iota
	// CostSite charges 1 per function entry and per loop iteration, and
	// nothing for the size of bulk instructions: a count of iterations,
	// not a bound on time.
	CostSite
)

// Options configure Instrument. The zero value is CostRegion with a
// counter that starts at 0.
type Options struct {
	// Model is the cost model.
	Model CostModel
	// MaxSiteCharge, when positive, caps what one site (a function entry
	// or a loop header) charges under CostRegion. The region model charges
	// the whole straight-line code a site heads, an upper bound that is
	// far above what runs for functions with large bodies mostly skipped
	// by branches (every Go function is one: a jump table over its resume
	// points); the cap keeps such code from running out of fuel long
	// before its time while every site still charges at least 1.
	MaxSiteCharge int64
	// ChunkSpan, with MaxSiteCharge, bounds the longest path (in weight)
	// the code may run past its last charge: where a path would run
	// further, a chunk site charges ChunkSpan again. Without it a capped
	// site charged 64 for a million straight-line instructions. 0 means
	// 64 × MaxSiteCharge: the capped sites then undercharge at most 64
	// times, and a module gets one chunk site per span of long code.
	ChunkSpan int64
	// Refuel makes a site that leaves the counter negative call an
	// imported function, RefuelModule.RefuelName of type (i64) -> (i64),
	// with the counter, and carry on with the counter it returns, trapping
	// only if that is still negative: the host can hand a call its budget
	// in slices and do something between them (yield the thread, wait
	// for a rate limit). A host that returns its argument gets the trap of
	// a module instrumented without Refuel, at the same instruction. The
	// import is appended after the module's function imports, so every
	// defined function's index moves up by one (calls, ref.func, exports,
	// the start function, element segments and the name section are
	// renumbered); the path a check takes when the counter stays
	// non-negative is unchanged.
	Refuel bool
	// InitialFuel is the counter's value when an instance is created, the
	// only fuel a start function gets (the host cannot set the counter
	// before instantiation runs it). Zero makes any start function trap
	// at its first instruction: fail-closed. Reactor modules (Go
	// c-shared, Rust cdylib, clang -mexec-model=reactor) have no start
	// function and initialise in an exported _initialize the host calls
	// with a budget like any other export.
	InitialFuel int64
	// MaxTableEntries, when positive, caps every table's maximum size:
	// a table without a maximum, or with a larger one, gets this one, so
	// that table.grow past it fails (returns -1) instead of allocating
	// without bound; a table whose minimum is larger is refused.
	MaxTableEntries uint32
}

// Instrument returns a copy of the module wasm with fuel metering added:
// a mutable i64 global appended after every existing global (so no index
// changes) and exported as ExportName, and in every function defined by
// the module a check at the body's start, after every loop header and
// before every bulk memory or table instruction, that subtracts the site's
// cost from the counter and executes unreachable if the result is
// negative (functions with loops work on a local copy of the counter; see
// the package documentation). Section order, all other sections and all custom
// sections are kept, except custom sections that hold code offsets the
// rewrite invalidates (DWARF, source maps, relocations, code metadata);
// "name" is kept.
//
// Instrument never panics; a module it cannot instrument yields an error
// wrapping ErrMalformed, ErrUnsupported, ErrExportExists or ErrLimit. It does not
// validate typing: the runtime does that when it compiles the output, and
// a valid input gives a valid output.
func Instrument(wasm []byte, opts Options) ([]byte, error) {
	m, err := wasmbin.Decode(wasm)
	if err != nil {
		return nil, fmt.Errorf("fuel: %w", err)
	}
	return InstrumentModule(m, opts)
}

// InstrumentModule is Instrument of a module already decoded (a host that
// decodes it to check it first reads it once).
func InstrumentModule(m *wasmbin.Module, opts Options) ([]byte, error) {
	if opts.Model != CostRegion && opts.Model != CostSite {
		return nil, fmt.Errorf("fuel: unknown cost model %d", opts.Model)
	}
	out, err := instrument(m, opts)
	if errors.Is(err, ErrLimit) {
		return nil, err // complete: it names the function and the limit
	}
	if err != nil {
		return nil, fmt.Errorf("fuel: %w", err)
	}
	return out, nil
}

func instrument(m *wasmbin.Module, opts Options) ([]byte, error) {
	sections := m.Sections
	typeParams, err := typeParams(m.Types) // parameter types of each type
	if err != nil {
		return nil, err
	}
	if err := checkImports(m.Imports); err != nil {
		return nil, err
	}
	if err := checkMemories(m.Memories); err != nil {
		return nil, err
	}
	funcTypes := m.Funcs // type of each defined function
	imported, importedFuncs := m.ImportedGlobals, m.ImportedFuncs
	var out0 [wasmbin.NumSections][]byte // payloads rewritten while reading
	if opts.MaxTableEntries > 0 && m.Section(secTable) != nil {
		out0[secTable], err = capTables(m.Tables, opts.MaxTableEntries)
	} else {
		err = checkTables(m.Tables)
	}
	if err != nil {
		return nil, err
	}
	typeSec, importSec, globalSec, exportSec := m.Section(secType), m.Section(secImport), m.Section(secGlobal), m.Section(secExport)
	startSec, codeSec, elemSec, dataSec := m.Section(secStart), m.Section(secCode), m.Section(secElement), m.Section(secData)
	types := uint32(len(typeParams))
	out := rewritten{Payload: out0}
	var sh funcShift
	var funcs uint32 // bounds function indices when they are renumbered
	if opts.Refuel {
		if uint64(importedFuncs)+uint64(len(funcTypes)) >= math.MaxUint32 {
			return nil, fmt.Errorf("%w: %d functions leave no index for the refuel import", ErrMalformed, uint64(importedFuncs)+uint64(len(funcTypes)))
		}
		sh = funcShift{on: true, at: importedFuncs}
		funcs = importedFuncs + uint32(len(funcTypes))
		var refuelType uint32
		if out.Payload[secType], refuelType, err = appendRefuelType(typeSec); err != nil {
			return nil, err
		}
		if out.Payload[secImport], err = appendRefuelImport(importSec, refuelType); err != nil {
			return nil, err
		}
	}
	defined, globals, err := readGlobals(globalSec, imported, types, funcs, sh)
	if err != nil {
		return nil, err
	}
	counter := imported + defined // the counter's index: after every other global
	b := bounds{types: types, params: typeParams, globals: counter, funcs: funcs}
	if out.Payload[secExport], err = appendCounterExport(exportSec, counter, b, sh); err != nil {
		return nil, err
	}
	if startSec != nil && sh.on {
		if out.Payload[secStart], err = shiftStart(*startSec, b, sh); err != nil {
			return nil, err
		}
	}
	if elemSec != nil {
		fixes := sh.patches()
		if err := checkElements(*elemSec, b, fixes); err != nil {
			return nil, err
		}
		if sh.on {
			out.Payload[secElement] = fixes.apply(nil, elemSec.Payload, 0, sh)
		}
	}
	if dataSec != nil {
		if err := checkData(*dataSec, b); err != nil {
			return nil, err
		}
	}
	params := make([][]byte, len(funcTypes)) // parameter types of each defined function
	for i, t := range funcTypes {
		params[i] = typeParams[t]
	}
	var thunks []uint32
	if codeSec != nil {
		out.Payload[secCode], thunks, err = instrumentCode(*codeSec, funcTypes, params, b, costing{opts.Model, opts.MaxSiteCharge, chunkSpan(opts)}, sh)
		if i, ok := failedFunction(err); ok {
			return nil, inFunction(err, sections, importedFuncs+i)
		}
		if err != nil {
			return nil, err
		}
	} else if len(params) != 0 {
		return nil, fmt.Errorf("%w: %d functions declared but no code section", ErrMalformed, len(params))
	}
	if len(thunks) > 0 {
		out.Payload[secFunction] = appendFunctions(funcTypes, thunks)
	}
	if out.Payload[secGlobal], err = globalSection(defined, globals, opts.InitialFuel); err != nil {
		return nil, err
	}
	if sh.on {
		out.names = func(contents []byte) []byte { return shiftNames(contents, sh) }
	}
	return assemble(sections, out)
}

// instrumentCode rewrites the code section (§5.5.13): each entry is
// size:u32 followed by the body, and there must be one per function
// declared in the function section (§5.5.16); types holds their type
// indices and params their parameter types. With the refuel import it
// also returns the type indices of the thunks it appends after the
// bodies, one per function without loops (see emitter).
func instrumentCode(s section, types []uint32, params [][]byte, b bounds, model costing, sh funcShift) ([]byte, []uint32, error) {
	r := wasmbin.NewReader(s.Payload, s.Offset)
	n, err := r.Count()
	if err != nil {
		return nil, nil, err
	}
	if uint64(n) != uint64(len(params)) {
		return nil, nil, r.Errorf(ErrMalformed, "code section has %d bodies for %d declared functions", n, len(params))
	}
	// Scan every body first: the thunks' indices follow all bodies.
	raws := make([][]byte, n)
	plans := make([]plan, n)
	var thunks []uint32 // the type of each thunk
	var lim limits
	for i := uint32(0); i < n; i++ {
		size, err := r.U32()
		if err != nil {
			return nil, nil, err
		}
		at := r.Pos()
		if raws[i], err = r.Bytes(uint64(size)); err != nil {
			return nil, nil, err
		}
		if plans[i], err = scanBody(raws[i], at, b, params[i], model, sh, &lim); err != nil {
			if errors.Is(err, ErrLimit) {
				return nil, nil, &bodyError{i, err}
			}
			return nil, nil, fmt.Errorf("defined function %d: %w", i, err)
		}
		if sh.on && !plans[i].cached {
			thunks = append(thunks, types[i])
		}
	}
	if err := r.Trailing(); err != nil {
		return nil, nil, err
	}
	firstThunk := uint64(sh.at) + 1 + uint64(n) // after the imports, the refuel import and the bodies
	if firstThunk+uint64(len(thunks)) >= math.MaxUint32 {
		return nil, nil, fmt.Errorf("%w: no function indices left for %d refuel thunks", ErrMalformed, len(thunks))
	}
	out := wasmbin.AppendU32(make([]byte, 0, len(s.Payload)+len(s.Payload)/4), n+uint32(len(thunks)))
	var body, tail []byte
	thunk := uint32(firstThunk)
	for i := uint32(0); i < n; i++ {
		self := sh.index(sh.at + i) // the function's index: after the imports
		body = rewriteBody(body[:0], raws[i], plans[i], b.globals, uint32(len(params[i])), sh, self, thunk)
		if out, err = wasmbin.AppendVec(out, body); err != nil {
			return nil, nil, err
		}
		if sh.on && !plans[i].cached {
			tb := thunkBody(b.globals, uint32(len(params[i])), self, plans[i].sites[0].cost, sh)
			tail, _ = wasmbin.AppendVec(tail, tb)
			thunk++
		}
		plans[i] = plan{} // let the sites go
	}
	return append(out, tail...), thunks, nil
}

// appendFunctions writes the function section (§5.5.6): the type of every
// defined function, then those of the thunks.
func appendFunctions(types, thunks []uint32) []byte {
	out := wasmbin.AppendU32(make([]byte, 0, 2*(len(types)+len(thunks))+5), uint32(len(types)+len(thunks)))
	for _, t := range types {
		out = wasmbin.AppendU32(out, t)
	}
	for _, t := range thunks {
		out = wasmbin.AppendU32(out, t)
	}
	return out
}

// costing is the cost model with its cap.
type costing struct {
	model     CostModel
	maxCharge int64
	span      int64 // Options.ChunkSpan, defaulted
}

// chunkSpan is opts.ChunkSpan, 64 × MaxSiteCharge when unset.
func chunkSpan(opts Options) int64 {
	if opts.ChunkSpan > 0 {
		return max(opts.ChunkSpan, opts.MaxSiteCharge)
	}
	return 64 * max(opts.MaxSiteCharge, 0)
}

// bodyError is a compile-limit error of the i-th defined function, which
// instrument renames after the function's index and name.
type bodyError struct {
	i   uint32
	err error
}

func (e *bodyError) Error() string { return fmt.Sprintf("defined function %d: %v", e.i, e.err) }
func (e *bodyError) Unwrap() error { return e.err }

func failedFunction(err error) (uint32, bool) {
	var be *bodyError
	if errors.As(err, &be) {
		return be.i, true
	}
	return 0, false
}
