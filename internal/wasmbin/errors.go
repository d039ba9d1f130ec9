package wasmbin

import (
	"errors"
	"fmt"
)

// Classes of decoding errors: every *Error wraps one (test with errors.Is).
var (
	// ErrMalformed: the input is not a well-formed WebAssembly 1.0/2.0
	// binary (truncated, bad LEB128, sections out of order, an index out
	// of range, ...).
	ErrMalformed = errors.New("malformed wasm")
	// ErrUnsupported: well formed, but in an encoding this reader does not
	// decode (a type form other than a function type, a value type wazero
	// does not run, the exception-handling tag section).
	ErrUnsupported = errors.New("unsupported wasm feature")
)

// Error is a decoding error at an offset of the module.
type Error struct {
	Class  error // ErrMalformed, ErrUnsupported, or a consumer's class
	Offset int   // in the module
	Msg    string
	// End: the module ends before what it declares (a truncated file).
	End bool
}

func (e *Error) Error() string { return fmt.Sprintf("%v at offset %#x: %s", e.Class, e.Offset, e.Msg) }
func (e *Error) Unwrap() error { return e.Class }
