package abi

import (
	"encoding/binary"
	"errors"
	"math"
	"unicode/utf8"
)

// KeyHash returns the 32-bit hash of a msgpack-encoded key with Java's
// hashCode semantics, so that a key lands on the same subtask as in Flink:
//
//   - string: h = 31*h + unit over its UTF-16 code units; "" is 0
//   - int that fits in 32 bits (Java Integer): the value itself
//   - other int (Java Long): int32(v ^ (v >>> 32))
//   - float64 (Java Double): bits ^ (bits >>> 32), NaN canonicalised
//   - float32 (Java Float): its bits, NaN canonicalised
//   - bool: 1231 for true, 1237 for false
//   - array (a composite key, Flink Tuple): h = hash(f0), h = 31*h + hash(fi)
//   - nil: ErrNilKey ("key must not be null")
//
// Maps, binary and ext values are not keys (ErrType).
func KeyHash(key []byte) (int32, error) {
	if len(key) == 0 || IsNil(key) {
		return 0, ErrNilKey
	}
	if c := key[0]; c-0xa0 < 0x20 && int(c&0x1f) < len(key) { // fixstr, most keys
		return StringHash(key[1 : 1+int(c&0x1f)]), nil
	}
	switch TypeOf(key) {
	case TypeStr:
		s, err := ReadStr(key)
		if err != nil {
			return 0, err
		}
		return StringHash(s), nil
	case TypeInt:
		v, err := ReadInt(key)
		if err != nil {
			if errors.Is(err, ErrRange) {
				return 0, &KeyProblem{Err: ErrRange, Text: "an unsigned integer above 9223372036854775807 is not a key (a Flink key is a Java value: a long holds no more)"}
			}
			return 0, err
		}
		return IntHash(v), nil
	case TypeFloat:
		if key[0] == 0xca {
			if len(key) < 5 {
				return 0, errAt(ErrTruncated, 0)
			}
			f := math.Float32frombits(binary.BigEndian.Uint32(key[1:]))
			if f != f {
				return 0x7fc00000, nil
			}
			return int32(math.Float32bits(f)), nil
		}
		f, err := ReadFloat(key)
		if err != nil {
			return 0, err
		}
		return DoubleHash(f), nil
	case TypeBool:
		if key[0] == 0xc3 {
			return 1231, nil
		}
		return 1237, nil
	case TypeArray:
		n, off, err := Len(key)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, &KeyProblem{Err: ErrType, Text: "an empty array is not a key (a composite key has at least one field)"}
		}
		if n > len(key)-off {
			return 0, errAt(ErrTruncated, 0)
		}
		var h int32
		for i := 0; i < n; i++ {
			end, err := Skip(key, off)
			if err != nil {
				return 0, err
			}
			if TypeOf(key[off:]) == TypeArray {
				return 0, &KeyProblem{Err: ErrType, Text: "an array inside an array is not a key (a composite key's fields are strings, numbers or booleans)"}
			}
			fh, err := KeyHash(key[off:end])
			if err != nil {
				return 0, shift(err, off)
			}
			h = 31*h + fh
			off = end
		}
		return h, nil
	}
	return 0, &KeyProblem{Err: ErrType, Text: "a key must be a string, a number, a boolean or an array of them, not " + TypeOf(key).Phrase()}
}

// KeyProblem is why a well-formed value is not a key; errors.Is finds
// its Err (ErrType, ErrRange). Its text is for the user, with no byte
// offset: the value is the key, not a buffer.
type KeyProblem struct {
	Err  error
	Text string
}

func (e *KeyProblem) Error() string { return e.Text }
func (e *KeyProblem) Unwrap() error { return e.Err }

// StringHash is Java's String.hashCode over the UTF-16 code units of the
// UTF-8 string s. A malformed sequence counts as the one U+FFFD Java's
// decoder replaces it with (javaStep).
func StringHash(s []byte) int32 {
	var h uint32 // Java's int arithmetic, modulo 2^32
	i := 0
	// Eight ASCII bytes at a time: h*31^8 + poly8(w) is the same int32 as
	// eight steps of h = 31*h + c.
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		if w&0x8080808080808080 != 0 {
			break
		}
		h = h*pow31[8] + poly8(w)
	}
	// The last t < 8 bytes as one word when the slice's capacity holds
	// eight: the bytes past the end are shifted out before they count.
	if t := len(s) - i; t > 0 && t < 8 && cap(s)-i >= 8 {
		w := binary.LittleEndian.Uint64(s[i:i+8]) << (64 - 8*t)
		if w&0x8080808080808080 == 0 {
			return int32(h*pow31[t] + poly8(w))
		}
	}
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			h = 31*h + uint32(c)
			i++
			continue
		}
		r, size := javaStep(s, i)
		i += size
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + uint32(0xd800+(r>>10))
			h = 31*h + uint32(0xdc00+(r&0x3ff))
			continue
		}
		h = 31*h + uint32(r)
	}
	return int32(h)
}

// poly8 is c0*31^7 + c1*31^6 + ... + c7 (mod 2^32) for the bytes c0..c7
// of w, lowest first, each below 0x80: pairs, then quadruples, combined in
// the lanes of one word (no lane overflows: 127*31+127 < 2^16,
// 4064*961+4064 < 2^32).
func poly8(w uint64) uint32 {
	const m8, m16 = 0x00ff00ff00ff00ff, 0x0000ffff0000ffff
	x := (w&m8)*31 + (w>>8)&m8
	x = (x&m16)*(31*31) + (x>>16)&m16
	return uint32(x)*(31*31*31*31) + uint32(x>>32)
}

// pow31[t] is 31^t modulo 2^32.
var pow31 = func() (p [9]uint32) {
	p[0] = 1
	for t := 1; t < len(p); t++ {
		p[t] = p[t-1] * 31
	}
	return p
}()

// IntHash is Integer.hashCode for values that fit in 32 bits and
// Long.hashCode otherwise.
func IntHash(v int64) int32 {
	if v >= math.MinInt32 && v <= math.MaxInt32 {
		return int32(v)
	}
	u := uint64(v)
	return int32(uint32(u ^ (u >> 32)))
}

// DoubleHash is Double.hashCode.
func DoubleHash(f float64) int32 {
	bits := math.Float64bits(f)
	if f != f {
		bits = 0x7ff8000000000000 // doubleToLongBits canonical NaN
	}
	return int32(uint32(bits ^ (bits >> 32)))
}
