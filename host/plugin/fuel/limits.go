package fuel

import (
	"errors"
	"fmt"
	"math"

	"github.com/sluicehq/sluice/internal/wasmbin"
)

// Compile limits. wazero 1.12's compiler cannot be interrupted (it ignores
// its context) and some of its passes are superlinear, so a module a few
// kilobytes long can hold it for minutes and gigabytes; these caps refuse
// such modules before they reach it. Each is well above what every real
// module measured needs (cmd/vet built for wasip1, 14 MB, is the largest)
// and well below where a single function or module costs wazero about a
// second or a few hundred MB on a 2-core machine. The measurements are in
// RATIONALE.md ("Why compile limits?"). Instrument enforces them during the
// scan it makes anyway; CheckLimits runs the same scan for hosts that
// compile modules without instrumenting them.
const (
	// MaxNesting caps how deep block, loop and if nest in one function.
	// Real maximum: 1153 (cmd/vet; Go plugins 550, Rust 49, C 26). wazero
	// took 0.1 s for 4000 nested blocks and 0.36 s for 8000 (the security
	// review: 2.6 s for 10000, 30 s for 30000); 4000 nested ifs 0.48 s.
	MaxNesting = 5000
	// MaxBlocks caps the block, loop and if instructions of one function,
	// nested or not. Real maximum: 1714 (cmd/vet; Go plugins 799, C 284).
	// wazero took 0.43 s for 10000 blocks one after another and 150 s for
	// 100000.
	MaxBlocks = 10000
	// MaxLoops caps the loops of one function. Real maximum: 16 (C and
	// Rust plugins; Go 3). Metered, a loop costs wazero as much as 10–20
	// blocks: 1000 loops one after another took 0.22 s, 10000 took 45 s;
	// 5000 nested loops took 6 s.
	MaxLoops = 200
	// MaxInstructions caps the instructions of one function. Real
	// maximum: 13,513 (a Go plugin's runtime; its module has 900,794 in
	// all). wazero's compiler holds about 400 bytes an instruction of the
	// function it compiles: a function of 12 million straight-line
	// instructions took 4.7 GB and 14 s.
	MaxInstructions = 100000
	// MaxParams and MaxResults cap the parameters and results of a
	// function type, as the JS API's implementation limits do (WebAssembly
	// JavaScript Interface, "Limits"). Real maximum: 9 parameters, 1
	// result. wazero's cost is quadratic in a function's parameters: one
	// function of 10000 allocated 172 MB, one of 50000 4 GB in 2.5 s.
	MaxParams  = 1000
	MaxResults = 1000
	// MaxModuleLocals caps the locals plus parameters of all the module's
	// functions together (each function is also capped at 50000 declared
	// locals). Real maximum: 37028 (cmd/vet: 30456 locals, 6572
	// parameters; Go plugins about 10000). wazero allocates about 9 bytes
	// a local however they are spread (5 million took 47 MB and 0.12 s;
	// 5000 functions of 50000 locals 2 GB), and the refuel thunks make a
	// metered parameter cost about 2 µs: 1000 functions of 1000
	// parameters took 1.9 s (0.075 s unmetered).
	MaxModuleLocals = 250000
	// MaxModuleBlocks caps the block, loop and if instructions of all the
	// module's functions together: the per-function caps alone let 10
	// functions of 10000 blocks (300 KB) take 4.95 s to compile, about
	// 50 µs a block, and a 32 MB module minutes. A Go plugin has about
	// 58000 (valid.wasm: 57598 blocks, 1353 of them loops, compiled in
	// about 4 s here), C, Rust and AssemblyScript ones under 700; 200000
	// is 3.4 Go plugins and about 10 s of compile at worst.
	MaxModuleBlocks = 200000
	// MaxTables caps the tables a module defines, when Options.MaxTableEntries
	// caps their sizes: the SDKs' modules define one.
	MaxTables = 4
)

// ErrLimit: the module is well formed but over one of the compile limits
// (MaxNesting, MaxBlocks, MaxLoops, MaxParams, MaxResults,
// MaxModuleLocals, or 50000 locals in one function). Its message names
// the limit and the function (index in the module's function index space
// and, when the name section has one, its name) or type.
var ErrLimit = errors.New("over a compile limit")

// limitError is an error of class ErrLimit whose message is complete in
// itself: it names a function or type, not an offset.
type limitError struct{ msg string }

func (e *limitError) Error() string        { return e.msg }
func (e *limitError) Is(target error) bool { return target == ErrLimit }

func limitf(format string, args ...any) error {
	return &limitError{fmt.Sprintf(format, args...)}
}

// limits tracks the module-wide compile limits across function bodies.
type limits struct {
	locals uint64 // locals and parameters of the bodies scanned so far
	blocks int    // blocks, loops and ifs of the bodies scanned so far
}

// inFunction names the function of a limit error: index is in the
// module's function index space (imports first), name from the name
// section when it has one.
func inFunction(err error, sections []section, index uint32) error {
	var le *limitError
	if !errors.As(err, &le) {
		return err
	}
	name := ""
	if n, ok := wasmbin.FunctionName(sections, index); ok {
		name = fmt.Sprintf(" ($%s)", n)
	}
	return limitf("function %d%s: %s", index, name, le.msg)
}

// CheckLimits reports whether wasm is within the compile limits, for a
// host that compiles it without Instrument (which checks the same limits
// itself). It returns nil or an error wrapping ErrLimit. A module it
// cannot decode is not its business: it skips a body it cannot read (the
// runtime's validation refuses it) and returns nil where the sections
// themselves do not decode.
func CheckLimits(wasm []byte) error {
	m, err := wasmbin.Decode(wasm)
	if err != nil {
		return nil
	}
	return CheckModuleLimits(m)
}

// CheckModuleLimits is CheckLimits of a module already decoded.
func CheckModuleLimits(m *wasmbin.Module) error {
	typeParams, err := typeParams(m.Types)
	if err != nil {
		return err
	}
	funcTypes, importedFuncs, code := m.Funcs, m.ImportedFuncs, m.Section(secCode)
	if code == nil {
		return nil
	}
	b := bounds{types: uint32(len(typeParams)), params: typeParams, globals: math.MaxUint32}
	r := wasmbin.NewReader(code.Payload, code.Offset)
	n, err := r.Count()
	if err != nil {
		return nil
	}
	var lim limits
	for i := uint32(0); i < n; i++ {
		size, err := r.U32()
		if err != nil {
			return nil
		}
		at := r.Pos()
		raw, err := r.Bytes(uint64(size))
		if err != nil {
			return nil
		}
		var params []byte
		if int(i) < len(funcTypes) {
			params = typeParams[funcTypes[i]]
		}
		if _, err := scanBody(raw, at, b, params, costing{model: CostSite}, funcShift{}, &lim); errors.Is(err, ErrLimit) {
			return inFunction(err, m.Sections, importedFuncs+i)
		}
	}
	return nil
}
