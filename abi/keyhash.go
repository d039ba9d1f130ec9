package abi

import (
	"encoding/binary"
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
		if n == 0 || n > len(key)-off {
			return 0, errAt(ErrType, 0)
		}
		var h int32
		for i := 0; i < n; i++ {
			end, err := Skip(key, off)
			if err != nil {
				return 0, err
			}
			if TypeOf(key[off:]) == TypeArray {
				return 0, &DecodeError{Err: ErrType, Offset: off, Detail: "nested composite key"}
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
	return 0, typeErr(key, TypeStr)
}

// StringHash is Java's String.hashCode over the UTF-16 code units of the
// UTF-8 string s. Invalid UTF-8 bytes count as U+FFFD, as Java's decoder
// would replace them.
func StringHash(s []byte) int32 {
	var h int32
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		i += size
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xd800+(r>>10))
			h = 31*h + int32(0xdc00+(r&0x3ff))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

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
