// Package codec converts records between JSON and msgpack: the JSON-lines
// sources and the CLI read JSON lines into msgpack values, and the CLI
// prints msgpack records as JSON, keeping the order of map keys both ways.
// Reading JSON is on the per-record path of a JSON-lines source and
// allocates nothing; the engine's own record path never uses the package.
package codec

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/sluicehq/sluice/abi"
)

// InvalidUTF8 is the offset of the first byte of b that is not part of
// valid UTF-8, or -1 when b is valid.
func InvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// MsgpackToJSON appends the JSON text of the msgpack value mp (exactly
// one value) to dst, map keys in their stored order. Keys that are not
// strings are written as the JSON text of the key, quoted; bin is base64;
// an ext is {"ext": type, "data": base64}; a float that is NaN or
// infinite is written as the string "NaN", "Infinity" or "-Infinity"
// (JSON has neither; these are Jackson's spellings, which Flink's JSON
// format writes and reads back, under QUOTE_NON_NUMERIC_NUMBERS); a whole
// float keeps a ".0" so it reads back as a float.
func MsgpackToJSON(dst, mp []byte) ([]byte, error) {
	end, err := abi.Skip(mp, 0) // bounds lengths and nesting once
	if err != nil {
		return dst, err
	}
	if end != len(mp) {
		return dst, fmt.Errorf("%d bytes left after the value", len(mp)-end)
	}
	out, _, err := toJSON(dst, mp, 0)
	return out, err
}

// toJSON writes the value at b[off:] and returns the offset past it.
func toJSON(dst, b []byte, off int) ([]byte, int, error) {
	end, err := abi.Skip(b, off)
	if err != nil {
		return dst, 0, err
	}
	v := b[off:end]
	switch abi.TypeOf(v) {
	case abi.TypeNil:
		return append(dst, "null"...), end, nil
	case abi.TypeBool:
		bv, _ := abi.ReadBool(v)
		return strconv.AppendBool(dst, bv), end, nil
	case abi.TypeInt:
		if v[0] == 0xcf {
			return strconv.AppendUint(dst, binary.BigEndian.Uint64(v[1:]), 10), end, nil
		}
		i, err := abi.ReadInt(v)
		return strconv.AppendInt(dst, i, 10), end, err
	case abi.TypeFloat:
		f, err := abi.ReadFloat(v)
		bits := 64
		if v[0] == 0xca {
			bits = 32
		}
		return AppendFloat(dst, f, bits), end, err
	case abi.TypeStr:
		s, err := abi.ReadStr(v)
		return appendString(dst, s), end, err
	case abi.TypeBin:
		n, hdr := binLen(v)
		return appendBase64(dst, v[hdr:hdr+n]), end, nil
	case abi.TypeExt:
		typ, data := extParts(v)
		dst = append(dst, `{"ext":`...)
		dst = strconv.AppendInt(dst, int64(typ), 10)
		dst = append(dst, `,"data":`...)
		return append(appendBase64(dst, data), '}'), end, nil
	case abi.TypeArray:
		n, p, _ := abi.Len(v)
		dst = append(dst, '[')
		p += off
		for i := 0; i < n; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, p, err = toJSON(dst, b, p); err != nil {
				return dst, 0, err
			}
		}
		return append(dst, ']'), end, nil
	case abi.TypeMap:
		n, p, _ := abi.Len(v)
		dst = append(dst, '{')
		p += off
		for i := 0; i < n; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			kEnd, _ := abi.Skip(b, p)
			if abi.TypeOf(b[p:]) == abi.TypeStr {
				s, _ := abi.ReadStr(b[p:kEnd])
				dst = appendString(dst, s)
			} else {
				k, _, err := toJSON(nil, b, p)
				if err != nil {
					return dst, 0, err
				}
				dst = appendString(dst, k)
			}
			dst = append(dst, ':')
			if dst, p, err = toJSON(dst, b, kEnd); err != nil {
				return dst, 0, err
			}
		}
		return append(dst, '}'), end, nil
	}
	return dst, 0, fmt.Errorf("invalid msgpack byte 0x%02x at byte %d", b[off], off)
}

// AppendFloat appends f as MsgpackToJSON writes a float of bits (32 or
// 64): a whole one keeps ".0", a NaN or an infinity is Jackson's quoted
// spelling.
func AppendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f), math.IsInf(f, 0):
		return append(append(append(dst, '"'), NonFinite(f)...), '"')
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if !bytes.ContainsAny(dst[start:], ".e") {
		dst = append(dst, ".0"...)
	}
	return dst
}

// NonFinite is the text of a NaN or infinite float as Java spells it
// (Double.toString; Jackson quotes it in JSON): "NaN", "Infinity",
// "-Infinity". It is "" for a finite float.
func NonFinite(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return ""
}

func binLen(v []byte) (n, hdr int) {
	switch v[0] {
	case 0xc4:
		return int(v[1]), 2
	case 0xc5:
		return int(binary.BigEndian.Uint16(v[1:])), 3
	}
	return int(binary.BigEndian.Uint32(v[1:])), 5
}

func extParts(v []byte) (int8, []byte) {
	switch v[0] {
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return int8(v[1]), v[2:]
	case 0xc7:
		return int8(v[2]), v[3:]
	case 0xc8:
		return int8(v[3]), v[4:]
	}
	return int8(v[5]), v[6:]
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

const hex = "0123456789abcdef"

// appendString writes s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&15])
		default:
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}
