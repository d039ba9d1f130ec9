package abi

import (
	"bytes"
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// CanonicalKey returns key in the one encoding shared by every key equal
// to it in Java (Object.equals), so that keyed state, which finds a key's
// cell by its bytes, keeps one cell per Flink key: an int in its smallest
// encoding (5 written as an int64 and 5 as a fixint are one Integer), a
// string with its smallest header and each malformed UTF-8 sequence
// replaced as Java replaces it (JavaString), a NaN as Java's canonical NaN
// (Double.equals compares doubleToLongBits), an array element by element.
// As in Java, 0.0 and -0.0 stay two keys, and so do a float32 and a float64
// (a Float and a Double). canon is key itself when key is canonical or not
// a key KeyHash accepts (KeyHash then says why), else the canonical form
// written over buf[:0]; next is buf, grown perhaps, to pass to the next
// call, so that keys that need a look (non-ASCII strings, wide ints)
// allocate nothing in steady state. The keys writers produce, an ASCII
// fixstr or a fixint, take one test.
func CanonicalKey(buf, key []byte) (canon, next []byte) {
	if len(key) > 0 {
		if c := key[0]; c <= 0x7f || c >= 0xe0 || c == 0xc2 || c == 0xc3 ||
			c-0xa0 < 0x20 && int(c&0x1f) == len(key)-1 && ascii(key[1:]) {
			return key, buf
		}
	}
	return canonicalKey(buf, key)
}

func canonicalKey(buf, key []byte) (canon, next []byte) {
	out, ok := appendCanonical(buf[:0], key, true)
	if !ok || bytes.Equal(out, key) {
		return key, out[:0]
	}
	return out, out[:0]
}

// ascii reports whether every byte of s is below 0x80: in two
// overlapping loads up to 16 bytes.
func ascii(s []byte) bool {
	const hi = 0x8080808080808080
	le := binary.LittleEndian
	switch n := len(s); {
	case n >= 8 && n <= 16:
		return (le.Uint64(s)|le.Uint64(s[n-8:]))&hi == 0
	case n >= 4 && n < 8:
		return (le.Uint32(s)|le.Uint32(s[n-4:]))&(hi&0xffffffff) == 0
	case n > 16:
		return (le.Uint64(s)|le.Uint64(s[8:]))&hi == 0 && ascii(s[16:])
	}
	for _, c := range s {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// appendCanonical appends the canonical form of the key value v, which
// must be all of v; ok is false when v is no key (top: an array may hold
// keys, but not arrays).
func appendCanonical(dst, v []byte, top bool) ([]byte, bool) {
	if len(v) == 0 {
		return dst, false
	}
	if end, err := Skip(v, 0); err != nil || end != len(v) {
		return dst, false
	}
	switch TypeOf(v) {
	case TypeStr:
		s, err := ReadStr(v)
		if err != nil {
			return dst, false
		}
		if !utf8.Valid(s) {
			return AppendStrBytes(dst, JavaString(nil, s)), true
		}
		return AppendStrBytes(dst, s), true
	case TypeInt:
		i, err := ReadInt(v)
		if err != nil {
			return dst, false
		}
		return AppendInt(dst, i), true
	case TypeFloat:
		if v[0] == 0xca {
			if f := math.Float32frombits(binary.BigEndian.Uint32(v[1:])); f != f {
				return append(dst, 0xca, 0x7f, 0xc0, 0, 0), true
			}
			return append(dst, v...), true
		}
		if f := math.Float64frombits(binary.BigEndian.Uint64(v[1:])); f != f {
			return binary.BigEndian.AppendUint64(append(dst, 0xcb), 0x7ff8000000000000), true
		}
		return append(dst, v...), true
	case TypeBool:
		return append(dst, v...), true
	case TypeArray:
		if !top {
			return dst, false
		}
		n, off, err := Len(v)
		if err != nil {
			return dst, false
		}
		dst = AppendArrayHeader(dst, n)
		for i := 0; i < n; i++ {
			end, err := Skip(v, off)
			if err != nil {
				return dst, false
			}
			var ok bool
			if dst, ok = appendCanonical(dst, v[off:end], false); !ok {
				return dst, false
			}
			off = end
		}
		return dst, true
	}
	return dst, false
}
