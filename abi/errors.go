package abi

import "errors"

// Errors of the wire format. A *DecodeError wraps one of them with the
// byte offset where it was found; test with errors.Is.
var (
	ErrTruncated = errors.New("truncated msgpack")
	ErrInvalid   = errors.New("invalid msgpack byte")
	ErrTooDeep   = errors.New("msgpack nested deeper than the limit")
	ErrType      = errors.New("unexpected msgpack type")
	ErrRange     = errors.New("integer out of range")
	ErrEnvelope  = errors.New("record is not a [event_time, key, value] envelope")
	ErrTooLarge  = errors.New("record larger than the limit")
	ErrTrailing  = errors.New("bytes left after the last record")
	ErrCount     = errors.New("batch holds fewer records than its count")
	ErrNilKey    = errors.New("key must not be null")
	ErrEnds      = errors.New("record ends disagree with the records")
)

// DecodeError says what is wrong with a record or batch and where.
type DecodeError struct {
	Err    error // one of the Err* values above
	Offset int   // byte offset in the buffer being read
	Detail string
}

func (e *DecodeError) Error() string {
	s := e.Err.Error() + " at byte " + itoa(int64(e.Offset))
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *DecodeError) Unwrap() error { return e.Err }

func errAt(err error, off int) error { return &DecodeError{Err: err, Offset: off} }

func typeErr(b []byte, want Type) error {
	return &DecodeError{Err: ErrType, Detail: "want " + want.String() + ", got " + TypeOf(b).String()}
}

// shift moves a DecodeError's offset by base, so nested readers report
// offsets in the outer buffer.
func shift(err error, base int) error {
	var de *DecodeError
	if errors.As(err, &de) {
		return &DecodeError{Err: de.Err, Offset: de.Offset + base, Detail: de.Detail}
	}
	return err
}
