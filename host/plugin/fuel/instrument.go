package fuel

import "fmt"

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
	// InitialFuel is the counter's value when an instance is created, the
	// only fuel a start function gets (the host cannot set the counter
	// before instantiation runs it). Zero makes any start function trap
	// at its first instruction: fail-closed. Reactor modules (Go
	// c-shared, Rust cdylib, clang -mexec-model=reactor) have no start
	// function and initialise in an exported _initialize the host calls
	// with a budget like any other export.
	InitialFuel int64
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
// wrapping ErrMalformed, ErrUnsupported or ErrExportExists. It does not
// validate typing: the runtime does that when it compiles the output, and
// a valid input gives a valid output.
func Instrument(wasm []byte, opts Options) ([]byte, error) {
	if opts.Model != CostRegion && opts.Model != CostSite {
		return nil, fmt.Errorf("fuel: unknown cost model %d", opts.Model)
	}
	out, err := instrument(wasm, opts)
	if err != nil {
		return nil, fmt.Errorf("fuel: %w", err)
	}
	return out, nil
}

func instrument(wasm []byte, opts Options) ([]byte, error) {
	sections, err := splitSections(wasm)
	if err != nil {
		return nil, err
	}
	var typeParams, funcTypes []uint32 // parameter count of each type; type of each defined function
	var imported uint32
	var globalSec, exportSec, codeSec, elemSec, dataSec *section
	for i := range sections {
		s := &sections[i]
		switch s.id {
		case secType:
			typeParams, err = readTypes(*s)
		case secImport:
			imported, err = countImportedGlobals(*s, uint32(len(typeParams)))
		case secFunction:
			funcTypes, err = readFunctions(*s, uint32(len(typeParams)))
		case secTable:
			err = checkTables(*s)
		case secMemory:
			err = checkMemories(*s)
		case secGlobal:
			globalSec = s
		case secExport:
			exportSec = s
		case secElement:
			elemSec = s
		case secCode:
			codeSec = s
		case secData:
			dataSec = s
		}
		if err != nil {
			return nil, err
		}
	}
	types := uint32(len(typeParams))
	globals, defined, err := appendCounterGlobal(globalSec, imported, types, opts.InitialFuel)
	if err != nil {
		return nil, err
	}
	counter := imported + defined // the counter's index: after every other global
	exports, err := appendCounterExport(exportSec, counter)
	if err != nil {
		return nil, err
	}
	b := bounds{types: types, globals: counter}
	if elemSec != nil {
		if err := checkElements(*elemSec, b); err != nil {
			return nil, err
		}
	}
	if dataSec != nil {
		if err := checkData(*dataSec, b); err != nil {
			return nil, err
		}
	}
	params := make([]uint32, len(funcTypes)) // parameter count of each defined function
	for i, t := range funcTypes {
		params[i] = typeParams[t]
	}
	var code []byte
	if codeSec != nil {
		if code, err = instrumentCode(*codeSec, params, b, costing{opts.Model, opts.MaxSiteCharge}); err != nil {
			return nil, err
		}
	} else if len(params) != 0 {
		return nil, fmt.Errorf("%w: %d functions declared but no code section", ErrMalformed, len(params))
	}
	return assemble(sections, globals, exports, code)
}

// instrumentCode rewrites the code section (§5.5.13): each entry is
// size:u32 followed by the body, and there must be one per function
// declared in the function section (§5.5.16); params holds their
// parameter counts.
func instrumentCode(s section, params []uint32, b bounds, model costing) ([]byte, error) {
	r := newReader(s.payload, s.offset)
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	if uint64(n) != uint64(len(params)) {
		return nil, r.errorf(ErrMalformed, "code section has %d bodies for %d declared functions", n, len(params))
	}
	out := appendU32(make([]byte, 0, len(s.payload)+len(s.payload)/4), n)
	var body []byte
	for i := uint32(0); i < n; i++ {
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		at := r.pos()
		raw, err := r.bytes(uint64(size))
		if err != nil {
			return nil, err
		}
		p, err := scanBody(raw, at, b, model)
		if err != nil {
			return nil, fmt.Errorf("defined function %d: %w", i, err)
		}
		body = rewriteBody(body[:0], raw, p, b.globals, params[i])
		if out, err = appendVec(out, body); err != nil {
			return nil, err
		}
	}
	return out, trailing(r)
}

// costing is the cost model with its cap.
type costing struct {
	model     CostModel
	maxCharge int64
}
