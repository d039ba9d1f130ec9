package abi

import (
	"encoding/binary"
	"math"
)

// Append helpers write one msgpack value in its smallest form.

// AppendNil appends nil.
func AppendNil(b []byte) []byte { return append(b, 0xc0) }

// AppendBool appends a boolean.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xc3)
	}
	return append(b, 0xc2)
}

// AppendInt appends an integer in its smallest encoding.
func AppendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0 && v <= 0x7f:
		return append(b, byte(v))
	case v < 0 && v >= -32:
		return append(b, byte(int8(v)))
	case v >= 0 && v <= math.MaxUint8:
		return append(b, 0xcc, byte(v))
	case v >= 0 && v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(v))
	case v >= 0 && v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(v))
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(b, 0xd0, byte(int8(v)))
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(v)))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(v)))
	}
	if v >= 0 {
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(v))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(v))
}

// AppendFloat appends a float64.
func AppendFloat(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(v))
}

// AppendStr appends a string.
func AppendStr(b []byte, s string) []byte {
	b = appendStrHeader(b, len(s))
	return append(b, s...)
}

// AppendStrBytes appends a string given as bytes.
func AppendStrBytes(b []byte, s []byte) []byte {
	b = appendStrHeader(b, len(s))
	return append(b, s...)
}

func appendStrHeader(b []byte, n int) []byte {
	switch {
	case n <= 31:
		return append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
}

// AppendBin appends a byte string.
func AppendBin(b []byte, v []byte) []byte {
	switch n := len(v); {
	case n <= math.MaxUint8:
		b = append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xc5), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(n))
	}
	return append(b, v...)
}

// AppendArrayHeader starts an array of n elements.
func AppendArrayHeader(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
}

// AppendMapHeader starts a map of n key/value pairs.
func AppendMapHeader(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdf), uint32(n))
}
