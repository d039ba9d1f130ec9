package fuel

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// reader decodes the primitive encodings of the binary format: bytes,
// LEB128 integers and vectors (WebAssembly Core Specification 2.0, §5.1.3
// "Vectors", §5.2.1 "Bytes", §5.2.2 "Integers"). Every method checks bounds
// and reports truncation as ErrMalformed, so no input can make it panic.
type reader struct {
	b    []byte
	off  int // next byte to read, relative to b
	base int // absolute offset of b[0] in the module, for error messages
}

func newReader(b []byte, base int) *reader { return &reader{b: b, base: base} }

// eof reports whether every byte has been read.
func (r *reader) eof() bool { return r.off >= len(r.b) }

// pos returns the absolute module offset of the next byte.
func (r *reader) pos() int { return r.base + r.off }

// errorf builds an error of the given class positioned at the next byte.
func (r *reader) errorf(class error, format string, args ...any) error {
	return fmt.Errorf("%w at offset %#x: %s", class, r.pos(), fmt.Sprintf(format, args...))
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, r.errorf(ErrMalformed, "unexpected end")
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

// peek returns the next byte without consuming it.
func (r *reader) peek() (byte, error) {
	if r.off >= len(r.b) {
		return 0, r.errorf(ErrMalformed, "unexpected end")
	}
	return r.b[r.off], nil
}

// bytes consumes n bytes and returns them without copying.
func (r *reader) bytes(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.off) {
		return nil, r.errorf(ErrMalformed, "length %d exceeds the %d bytes left", n, len(r.b)-r.off)
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s, nil
}

// skip consumes n bytes.
func (r *reader) skip(n uint64) error {
	_, err := r.bytes(n)
	return err
}

// vec reads vec(byte) (§5.1.3).
func (r *reader) vec() ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	return r.bytes(uint64(n))
}

// name reads a name: vec(byte) holding valid UTF-8 (§5.2.4 "Names").
func (r *reader) name() ([]byte, error) {
	start := r.off
	b, err := r.vec()
	if err == nil && !utf8.Valid(b) {
		r.off = start
		err = r.errorf(ErrMalformed, "name is not valid UTF-8")
	}
	return b, err
}

// uleb reads an unsigned LEB128 integer of at most bits bits (§5.2.2): at
// most ceil(bits/7) bytes, and the unused high bits of the last byte zero.
func (r *reader) uleb(bits uint) (uint64, error) {
	start := r.pos()
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		p := uint64(c & 0x7f)
		if shift+7 >= bits { // the last byte the width allows
			if c&0x80 != 0 {
				return 0, fmt.Errorf("%w at offset %#x: integer representation too long for u%d", ErrMalformed, start, bits)
			}
			if p>>(bits-shift) != 0 {
				return 0, fmt.Errorf("%w at offset %#x: integer too large for u%d", ErrMalformed, start, bits)
			}
		}
		v |= p << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
}

// sleb reads a signed LEB128 integer of at most bits bits (§5.2.2): at most
// ceil(bits/7) bytes, and the unused high bits of the last byte copies of
// the sign bit.
func (r *reader) sleb(bits uint) (int64, error) {
	start := r.pos()
	var v int64
	for shift := uint(0); ; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		p := c & 0x7f
		if shift+7 >= bits { // the last byte the width allows
			if c&0x80 != 0 {
				return 0, fmt.Errorf("%w at offset %#x: integer representation too long for s%d", ErrMalformed, start, bits)
			}
			used := bits - shift  // value bits in this byte, 1..7
			hi := p >> (used - 1) // the sign bit and the unused bits above it
			if hi != 0 && hi != 0x7f>>(used-1) {
				return 0, fmt.Errorf("%w at offset %#x: integer too large for s%d", ErrMalformed, start, bits)
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

func (r *reader) u32() (uint32, error) {
	v, err := r.uleb(32)
	return uint32(v), err
}

// count reads a vector's length (§5.1.3) and refuses one larger than the
// bytes left: every vector element takes at least one byte, and a runtime
// that allocates from the declared count (wazero 1.12 does, for most
// vectors) must never be handed a 2^32 count in a 10-byte module.
func (r *reader) count() (uint32, error) {
	start := r.off
	n, err := r.u32()
	if err == nil && uint64(n) > uint64(len(r.b)-r.off) {
		r.off = start
		err = r.errorf(ErrMalformed, "vector of %d elements in %d bytes", n, len(r.b)-r.off)
	}
	return n, err
}

func (r *reader) s32() error { _, err := r.sleb(32); return err }

func (r *reader) s64() error { _, err := r.sleb(64); return err }

// appendU32 appends v as unsigned LEB128.
func appendU32(dst []byte, v uint32) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// appendS64 appends v as signed LEB128.
func appendS64(dst []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(dst, c)
		}
		dst = append(dst, c|0x80)
	}
}

// appendVec appends a length-prefixed byte vector; the length must fit a u32.
func appendVec(dst, payload []byte) ([]byte, error) {
	if uint64(len(payload)) > math.MaxUint32 {
		return nil, fmt.Errorf("%w: section or body of %d bytes exceeds 4 GiB", ErrMalformed, len(payload))
	}
	dst = appendU32(dst, uint32(len(payload)))
	return append(dst, payload...), nil
}

// trailing refuses bytes left after a section's last entry.
func trailing(r *reader) error {
	if !r.eof() {
		return r.errorf(ErrMalformed, "%d unexpected bytes at the end of the section", len(r.b)-r.off)
	}
	return nil
}
