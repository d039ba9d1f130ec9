package wasmbin

import (
	"fmt"
	"unicode/utf8"
)

// Reader decodes the primitive encodings of the binary format: bytes,
// LEB128 integers and vectors (§5.1.3 "Vectors", §5.2.1 "Bytes", §5.2.2
// "Integers"). Every method checks bounds and reports truncation as
// ErrMalformed with End set, so no input can make it panic.
type Reader struct {
	B    []byte
	Off  int // next byte to read, relative to B
	Base int // absolute offset of B[0] in the module, for error messages
}

// NewReader reads b, which starts at offset base of the module.
func NewReader(b []byte, base int) *Reader { return &Reader{B: b, Base: base} }

// EOF reports whether every byte has been read.
func (r *Reader) EOF() bool { return r.Off >= len(r.B) }

// Pos returns the absolute module offset of the next byte.
func (r *Reader) Pos() int { return r.Base + r.Off }

// Errorf builds an *Error of the given class positioned at the next byte.
func (r *Reader) Errorf(class error, format string, args ...any) error {
	return &Error{Class: class, Offset: r.Pos(), Msg: fmt.Sprintf(format, args...)}
}

// end is the error of a read past the end of B.
func (r *Reader) end(format string, args ...any) error {
	return &Error{Class: ErrMalformed, Offset: r.Pos(), Msg: fmt.Sprintf(format, args...), End: true}
}

// Byte reads one byte.
func (r *Reader) Byte() (byte, error) {
	if r.Off >= len(r.B) {
		return 0, r.end("unexpected end")
	}
	c := r.B[r.Off]
	r.Off++
	return c, nil
}

// Peek returns the next byte without consuming it.
func (r *Reader) Peek() (byte, error) {
	if r.Off >= len(r.B) {
		return 0, r.end("unexpected end")
	}
	return r.B[r.Off], nil
}

// Bytes consumes n bytes and returns them without copying.
func (r *Reader) Bytes(n uint64) ([]byte, error) {
	if n > uint64(len(r.B)-r.Off) {
		return nil, r.end("length %d exceeds the %d bytes left", n, len(r.B)-r.Off)
	}
	s := r.B[r.Off : r.Off+int(n)]
	r.Off += int(n)
	return s, nil
}

// Skip consumes n bytes.
func (r *Reader) Skip(n uint64) error {
	_, err := r.Bytes(n)
	return err
}

// Vec reads vec(byte) (§5.1.3).
func (r *Reader) Vec() ([]byte, error) {
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	return r.Bytes(uint64(n))
}

// Name reads a name: vec(byte) holding valid UTF-8 (§5.2.4 "Names").
func (r *Reader) Name() ([]byte, error) {
	start := r.Off
	b, err := r.Vec()
	if err == nil && !utf8.Valid(b) {
		r.Off = start
		err = r.Errorf(ErrMalformed, "name is not valid UTF-8")
	}
	return b, err
}

// ULEB reads an unsigned LEB128 integer of at most bits bits (§5.2.2): at
// most ceil(bits/7) bytes, and the unused high bits of the last byte zero.
func (r *Reader) ULEB(bits uint) (uint64, error) {
	start := r.Pos()
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c, err := r.Byte()
		if err != nil {
			return 0, err
		}
		p := uint64(c & 0x7f)
		if shift+7 >= bits { // the last byte the width allows
			if c&0x80 != 0 {
				return 0, &Error{Class: ErrMalformed, Offset: start, Msg: fmt.Sprintf("integer representation too long for u%d", bits)}
			}
			if p>>(bits-shift) != 0 {
				return 0, &Error{Class: ErrMalformed, Offset: start, Msg: fmt.Sprintf("integer too large for u%d", bits)}
			}
		}
		v |= p << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
}

// SLEB reads a signed LEB128 integer of at most bits bits (§5.2.2): at most
// ceil(bits/7) bytes, and the unused high bits of the last byte copies of
// the sign bit.
func (r *Reader) SLEB(bits uint) (int64, error) {
	start := r.Pos()
	var v int64
	for shift := uint(0); ; shift += 7 {
		c, err := r.Byte()
		if err != nil {
			return 0, err
		}
		p := c & 0x7f
		if shift+7 >= bits { // the last byte the width allows
			if c&0x80 != 0 {
				return 0, &Error{Class: ErrMalformed, Offset: start, Msg: fmt.Sprintf("integer representation too long for s%d", bits)}
			}
			used := bits - shift  // value bits in this byte, 1..7
			hi := p >> (used - 1) // the sign bit and the unused bits above it
			if hi != 0 && hi != 0x7f>>(used-1) {
				return 0, &Error{Class: ErrMalformed, Offset: start, Msg: fmt.Sprintf("integer too large for s%d", bits)}
			}
		}
		v |= int64(p) << shift
		if c&0x80 == 0 {
			if shift+7 < 64 && p&0x40 != 0 {
				v |= -1 << (shift + 7) // sign-extend
			}
			return v, nil
		}
	}
}

// U32 reads a u32.
func (r *Reader) U32() (uint32, error) {
	v, err := r.ULEB(32)
	return uint32(v), err
}

// S32 reads an s32 and drops it.
func (r *Reader) S32() error { _, err := r.SLEB(32); return err }

// S64 reads an s64 and drops it.
func (r *Reader) S64() error { _, err := r.SLEB(64); return err }

// Count reads a vector's length (§5.1.3) and refuses one larger than the
// bytes left: every vector element takes at least one byte, and a runtime
// that allocates from the declared count (wazero 1.12 does, for most
// vectors) must never be handed a 2^32 count in a 10-byte module.
func (r *Reader) Count() (uint32, error) {
	start := r.Off
	n, err := r.U32()
	if err == nil && uint64(n) > uint64(len(r.B)-r.Off) {
		r.Off = start
		err = r.end("vector of %d elements in %d bytes", n, len(r.B)-r.Off)
	}
	return n, err
}

// Index reads an index and refuses it, as class, unless below n; space
// names the index space for the message ("type", "function").
func (r *Reader) Index(n uint32, class error, space string) (uint32, error) {
	start := r.Off
	x, err := r.U32()
	if err == nil && x >= n {
		r.Off = start
		err = r.Errorf(class, "%s index %d out of range (%d %ss)", space, x, n, space)
	}
	return x, err
}

// Trailing refuses bytes left after a section's last entry.
func (r *Reader) Trailing() error {
	if !r.EOF() {
		return r.Errorf(ErrMalformed, "%d unexpected bytes at the end of the section", len(r.B)-r.Off)
	}
	return nil
}
