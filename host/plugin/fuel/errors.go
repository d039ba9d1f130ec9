package fuel

import (
	"errors"

	"github.com/sluicehq/sluice/internal/wasmbin"
)

// Classes of Instrument errors; every error Instrument returns wraps exactly
// one of them (test with errors.Is) and adds the module offset and detail.
var (
	// ErrMalformed: the input is not a well-formed WebAssembly 1.0/2.0
	// binary (truncated, bad LEB128, sections out of order, a function
	// body that does not end where its size says, ...).
	ErrMalformed = wasmbin.ErrMalformed

	// ErrUnsupported: well-formed, but it uses something the instrumenter
	// refuses because it cannot meter it or wazero's default features do
	// not run it: tail calls, exception handling, typed function
	// references, GC, relaxed SIMD, memory64, unknown opcodes.
	ErrUnsupported = wasmbin.ErrUnsupported

	// ErrExportExists: the module already exports ExportName, or refers to
	// the global index the counter would take (which a valid module cannot
	// do, and which would let guest code refill its own fuel).
	ErrExportExists = errors.New("module already defines the fuel counter")
)
