package abi

import (
	"encoding/binary"
	"math"
)

// This file is a minimal, allocation-free msgpack scanner: enough to skip
// any value, read scalars and find a top-level map field. Full decoding
// (config, plans, tests) uses a general library; the per-record path uses
// only this.

// Type is the msgpack family of a value.
type Type uint8

// Value types as seen by the scanner.
const (
	TypeInvalid Type = iota
	TypeNil
	TypeBool
	TypeInt   // positive or negative integer, any width
	TypeFloat // float32 or float64
	TypeStr
	TypeBin
	TypeArray
	TypeMap
	TypeExt
)

var typeNames = [...]string{"invalid", "nil", "bool", "int", "float", "str", "bin", "array", "map", "ext"}

func (t Type) String() string { return typeNames[t] }

var typePhrases = [...]string{"invalid msgpack", "null", "a boolean", "a number", "a number", "a string",
	"binary data", "an array", "a map", "an extension value"}

// Phrase names the type for a person, in JSON's terms and with its
// article: "a string", "an array", "null", ... (messages about a user's
// records: "the record is an array, not a map").
func (t Type) Phrase() string { return typePhrases[t] }

// TypeOf returns the type of the value starting at b[0].
func TypeOf(b []byte) Type {
	if len(b) == 0 {
		return TypeInvalid
	}
	return typeTable[b[0]]
}

// typeTable maps a msgpack header byte to its type; fixedSize to the total
// size of a fixed-width value with that header (0 when the size depends on
// what follows).
var typeTable, fixedSize = func() (t [256]Type, f [256]uint8) {
	for c := 0; c < 256; c++ {
		t[c] = typeOfByte(byte(c))
	}
	for c := 0x00; c <= 0x7f; c++ {
		f[c] = 1
	}
	for c := 0xe0; c <= 0xff; c++ {
		f[c] = 1
	}
	for c, n := range map[byte]uint8{
		0xc0: 1, 0xc2: 1, 0xc3: 1,
		0xcc: 2, 0xd0: 2, 0xcd: 3, 0xd1: 3, 0xce: 5, 0xd2: 5, 0xca: 5, 0xcf: 9, 0xd3: 9, 0xcb: 9,
		0xd4: 3, 0xd5: 4, 0xd6: 6, 0xd7: 10, 0xd8: 18,
	} {
		f[c] = n
	}
	return t, f
}()

func typeOfByte(c byte) Type {
	switch {
	case c <= 0x7f || c >= 0xe0:
		return TypeInt
	case c <= 0x8f:
		return TypeMap
	case c <= 0x9f:
		return TypeArray
	case c <= 0xbf:
		return TypeStr
	}
	switch c {
	case 0xc0:
		return TypeNil
	case 0xc2, 0xc3:
		return TypeBool
	case 0xc4, 0xc5, 0xc6:
		return TypeBin
	case 0xc7, 0xc8, 0xc9, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return TypeExt
	case 0xca, 0xcb:
		return TypeFloat
	case 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3:
		return TypeInt
	case 0xd9, 0xda, 0xdb:
		return TypeStr
	case 0xdc, 0xdd:
		return TypeArray
	case 0xde, 0xdf:
		return TypeMap
	}
	return TypeInvalid // 0xc1 is never used
}

// valueSize maps a header byte to the total size of a value when the header
// alone tells it: fixedSize, and fixstr (1 + its length); 0 otherwise.
var valueSize = func() (s [256]uint8) {
	s = fixedSize
	for c := 0xa0; c <= 0xbf; c++ {
		s[c] = uint8(1 + c&0x1f)
	}
	return s
}()

// Skip returns the offset just past the value that starts at b[off]. It
// never allocates, recurses at most MaxDepth levels and checks every length
// against the bytes that remain before it trusts it, so a header claiming
// 2^32 elements costs nothing.
func Skip(b []byte, off int) (int, error) {
	return skipValue(b, off, 0)
}

// The scanner has two paths. The fast one (skipValue, skipSeq) takes the
// headers records are made of and reports only success: on anything else,
// an error included, the caller runs the exact one (skip, skipN), which
// never calls back into the fast one. So every error, and its offset, is
// the exact path's, and a hostile input costs at most both paths once:
// the fast path's recursion is bounded by MaxDepth like the exact one's.

// skipValue is skip with the fast path first; depth is as for skip.
func skipValue(b []byte, off, depth int) (int, error) {
	if uint(off) < uint(len(b)) {
		c := b[off]
		if s := int(valueSize[c]); s != 0 && off+s <= len(b) {
			return off + s, nil
		}
		if end, ok := skipContainer(b, off, c, depth); ok {
			return end, nil
		}
	}
	return skip(b, off, depth)
}

// skipContainer skips the fixmap or fixarray with header c at b[off] on the
// fast path; ok is false for any other header or when skipSeq gives up.
func skipContainer(b []byte, off int, c byte, depth int) (int, bool) {
	switch c & 0xf0 {
	case 0x80:
		return skipMap(b, off+1, int(c&0x0f), depth)
	case 0x90:
		return skipSeq(b, off+1, int(c&0x0f), depth)
	}
	return 0, false
}

// skipSeq is skipN's fast path: it skips the n elements starting at
// b[off] of a container at depth, checking lengths once at the end (a value
// that runs past the end stops the next iteration or fails the last check).
// Nested fixmaps and fixarrays stay on the fast path; other headers it
// hands to skip (which never comes back here). ok false: give up, the
// caller runs the exact path once over the whole value.
func skipSeq(b []byte, off, n, depth int) (int, bool) {
	if depth+1 > MaxDepth || n > len(b)-off {
		return 0, false
	}
	for ; n > 0; n-- {
		if uint(off) >= uint(len(b)) {
			return 0, false
		}
		c := b[off]
		if c-0xa0 < 0x20 { // fixstr, map keys' and most strings' header: its size without a table load
			off += 1 + int(c&0x1f)
			continue
		}
		if s := valueSize[c]; s != 0 {
			off += int(s)
			continue
		}
		if (c == 0xd9 || c == 0xc4) && off+1 < len(b) { // str8, bin8
			off += 2 + int(b[off+1])
			continue
		}
		if c&0xe0 == 0x80 { // fixmap, fixarray
			end, ok := skipContainer(b, off, c, depth+1)
			if !ok {
				return 0, false
			}
			off = end
			continue
		}
		end, err := skip(b, off, depth+1)
		if err != nil {
			return 0, false
		}
		off = end
	}
	return off, off <= len(b)
}

// skipMap is skipSeq for the n pairs of a map at depth: a fixstr key,
// the commonest, is skipped without the table, and a pair is one turn of
// the loop. ok false: give up, as skipSeq. Its value step repeats
// skipSeq's on purpose: through a shared inlined helper returning (end,
// ok) the codec benchmark took 610 instructions a record instead of 573.
func skipMap(b []byte, off, n, depth int) (int, bool) {
	if depth+1 > MaxDepth || 2*n > len(b)-off {
		return 0, false
	}
	for ; n > 0; n-- {
		if uint(off) >= uint(len(b)) {
			return 0, false
		}
		if c := b[off]; c-0xa0 < 0x20 {
			off += 1 + int(c&0x1f)
		} else if s := valueSize[c]; s != 0 {
			off += int(s)
		} else {
			return skipSeq(b, off, 2*n, depth)
		}
		if uint(off) >= uint(len(b)) {
			return 0, false
		}
		c := b[off]
		if c-0xa0 < 0x20 {
			off += 1 + int(c&0x1f)
			continue
		}
		if s := valueSize[c]; s != 0 {
			off += int(s)
			continue
		}
		if (c == 0xd9 || c == 0xc4) && off+1 < len(b) { // str8, bin8
			off += 2 + int(b[off+1])
			continue
		}
		return skipSeq(b, off, 2*n-1, depth)
	}
	return off, off <= len(b)
}

func skip(b []byte, off, depth int) (int, error) {
	if off >= len(b) {
		return 0, errAt(ErrTruncated, off)
	}
	c := b[off]
	if size := int(fixedSize[c]); size != 0 {
		return fixed(b, off, size)
	}
	var n, hdr int
	switch {
	case c <= 0x8f:
		return skipN(b, off+1, 2*int(c&0x0f), depth, off)
	case c <= 0x9f:
		return skipN(b, off+1, int(c&0x0f), depth, off)
	case c <= 0xbf:
		return bytesEnd(b, off, 1, int(c&0x1f))
	}
	switch c {
	case 0xc4, 0xd9:
		hdr = 2
	case 0xc5, 0xda:
		hdr = 3
	case 0xc6, 0xdb:
		hdr = 5
	case 0xc7:
		hdr = 3 // len8 + type
	case 0xc8:
		hdr = 4
	case 0xc9:
		hdr = 6
	case 0xdc, 0xde:
		if off+3 > len(b) {
			return 0, errAt(ErrTruncated, off)
		}
		n = int(binary.BigEndian.Uint16(b[off+1:]))
		if c == 0xde {
			n *= 2
		}
		return skipN(b, off+3, n, depth, off)
	case 0xdd, 0xdf:
		if off+5 > len(b) {
			return 0, errAt(ErrTruncated, off)
		}
		n = int(binary.BigEndian.Uint32(b[off+1:]))
		if c == 0xdf {
			n *= 2
		}
		return skipN(b, off+5, n, depth, off)
	default:
		return 0, errAt(ErrInvalid, off)
	}
	// bin, str8/16/32 and ext8/16/32: a length then payload.
	if off+hdr > len(b) {
		return 0, errAt(ErrTruncated, off)
	}
	var l int
	switch c {
	case 0xc4, 0xd9, 0xc7:
		l = int(b[off+1])
	case 0xc5, 0xda, 0xc8:
		l = int(binary.BigEndian.Uint16(b[off+1:]))
	default:
		l = int(binary.BigEndian.Uint32(b[off+1:]))
	}
	return bytesEnd(b, off, hdr, l)
}

func fixed(b []byte, off, size int) (int, error) {
	if off+size > len(b) {
		return 0, errAt(ErrTruncated, off)
	}
	return off + size, nil
}

func bytesEnd(b []byte, off, hdr, l int) (int, error) {
	end := off + hdr + l
	if l < 0 || end > len(b) || end < off {
		return 0, errAt(ErrTruncated, off)
	}
	return end, nil
}

func skipN(b []byte, off, n, depth, start int) (int, error) {
	if depth+1 > MaxDepth {
		return 0, errAt(ErrTooDeep, start)
	}
	if n > len(b)-off { // every element takes at least one byte
		return 0, errAt(ErrTruncated, start)
	}
	var err error
	for i := 0; i < n; i++ {
		if off >= len(b) {
			return 0, errAt(ErrTruncated, off)
		}
		// Fast paths for the one-byte headers that make up most records.
		c := b[off]
		if size := int(fixedSize[c]); size != 0 {
			if off+size > len(b) {
				return 0, errAt(ErrTruncated, off)
			}
			off += size
			continue
		}
		if c >= 0xa0 && c <= 0xbf {
			off += 1 + int(c&0x1f)
			if off > len(b) {
				return 0, errAt(ErrTruncated, start)
			}
			continue
		}
		if (c == 0xd9 || c == 0xc4) && off+1 < len(b) { // str8, bin8
			off += 2 + int(b[off+1])
			if off > len(b) {
				return 0, errAt(ErrTruncated, start)
			}
			continue
		}
		if off, err = skip(b, off, depth+1); err != nil {
			return 0, err
		}
	}
	return off, nil
}

// Len returns the element count of an array (or the pair count of a map)
// that starts at b[0], and the offset of its first element.
func Len(b []byte) (n, body int, err error) {
	if len(b) == 0 {
		return 0, 0, errAt(ErrTruncated, 0)
	}
	c := b[0]
	switch {
	case c >= 0x80 && c <= 0x8f:
		return int(c & 0x0f), 1, nil
	case c >= 0x90 && c <= 0x9f:
		return int(c & 0x0f), 1, nil
	case c == 0xdc || c == 0xde:
		if len(b) < 3 {
			return 0, 0, errAt(ErrTruncated, 0)
		}
		return int(binary.BigEndian.Uint16(b[1:])), 3, nil
	case c == 0xdd || c == 0xdf:
		if len(b) < 5 {
			return 0, 0, errAt(ErrTruncated, 0)
		}
		return int(binary.BigEndian.Uint32(b[1:])), 5, nil
	}
	return 0, 0, errAt(ErrType, 0)
}

// MapField finds the value of the top-level key name in the msgpack map m
// and returns its raw bytes (a sub-slice of m, no copy). ok is false when
// the map has no such key. Keys that are not strings are skipped.
func MapField(m []byte, name string) (raw []byte, ok bool, err error) {
	// The fast path: a fixmap whose keys are fixstr up to the field. On
	// anything else, an error included, mapField decides.
	if len(m) == 0 || m[0]&0xf0 != 0x80 || int(m[0]&0x0f) > len(m)-1 {
		return mapField(m, name)
	}
	off := 1
	for n := int(m[0] & 0x0f); n > 0; n-- {
		if uint(off) >= uint(len(m)) {
			return mapField(m, name)
		}
		c := m[off]
		kEnd := off + 1 + int(c&0x1f)
		if c-0xa0 >= 0x20 || uint(kEnd) >= uint(len(m)) {
			return mapField(m, name)
		}
		vEnd := kEnd + int(valueSize[m[kEnd]])
		if vEnd == kEnd {
			if vEnd, err = skipValue(m, kEnd, 0); err != nil {
				return mapField(m, name)
			}
		}
		if vEnd > len(m) {
			return mapField(m, name)
		}
		// the length first, here: most keys a lookup passes differ in
		// length from the one it looks for; then the names fields have,
		// 8 to 16 bytes, in two overlapping words without a call
		if n := kEnd - off - 1; n == len(name) {
			k := m[off+1 : kEnd]
			if n >= 8 && n <= 16 {
				if binary.LittleEndian.Uint64(k) == le64(name) && binary.LittleEndian.Uint64(k[n-8:]) == le64(name[n-8:]) {
					return m[kEnd:vEnd], true, nil
				}
			} else if eqName(k, name) {
				return m[kEnd:vEnd], true, nil
			}
		}
		off = vEnd
	}
	return nil, false, nil
}

// eqName is string(k) == name with the short names fields have compared
// in two overlapping words, without a call.
func eqName(k []byte, name string) bool {
	n := len(k)
	switch {
	case n != len(name):
		return false
	case n >= 8 && n <= 16:
		return binary.LittleEndian.Uint64(k) == le64(name) && binary.LittleEndian.Uint64(k[n-8:]) == le64(name[n-8:])
	case n >= 4 && n < 8:
		return binary.LittleEndian.Uint32(k) == le32(name) && binary.LittleEndian.Uint32(k[n-4:]) == le32(name[n-4:])
	}
	return string(k) == name
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// mapField is MapField's exact path.
func mapField(m []byte, name string) (raw []byte, ok bool, err error) {
	if TypeOf(m) != TypeMap {
		return nil, false, errAt(ErrType, 0)
	}
	n, off, err := Len(m)
	if err != nil {
		return nil, false, err
	}
	if n > len(m)-off {
		return nil, false, errAt(ErrTruncated, 0)
	}
	for i := 0; i < n; i++ {
		var k []byte
		var kEnd int
		var isStr bool
		if off < len(m) && m[off] >= 0xa0 && m[off] <= 0xbf { // fixstr key
			kEnd = off + 1 + int(m[off]&0x1f)
			if kEnd > len(m) {
				return nil, false, errAt(ErrTruncated, off)
			}
			k, isStr = m[off+1:kEnd], true
		} else {
			k, kEnd, isStr = strAt(m, off)
		}
		if kEnd < 0 {
			return nil, false, errAt(ErrTruncated, off)
		}
		if !isStr {
			if kEnd, err = Skip(m, off); err != nil {
				return nil, false, err
			}
		}
		vEnd, err := Skip(m, kEnd)
		if err != nil {
			return nil, false, err
		}
		if isStr && string(k) == name {
			return m[kEnd:vEnd], true, nil
		}
		off = vEnd
	}
	return nil, false, nil
}

// strAt reads a string at b[off]; isStr is false (and end is off) for any
// other type; end is -1 when the string is truncated.
func strAt(b []byte, off int) (s []byte, end int, isStr bool) {
	if off >= len(b) {
		return nil, -1, false
	}
	c := b[off]
	var l, hdr int
	switch {
	case c >= 0xa0 && c <= 0xbf:
		l, hdr = int(c&0x1f), 1
	case c == 0xd9:
		if off+2 > len(b) {
			return nil, -1, false
		}
		l, hdr = int(b[off+1]), 2
	case c == 0xda:
		if off+3 > len(b) {
			return nil, -1, false
		}
		l, hdr = int(binary.BigEndian.Uint16(b[off+1:])), 3
	case c == 0xdb:
		if off+5 > len(b) {
			return nil, -1, false
		}
		l, hdr = int(binary.BigEndian.Uint32(b[off+1:])), 5
	default:
		return nil, off, false
	}
	end = off + hdr + l
	if end > len(b) || end < off {
		return nil, -1, false
	}
	return b[off+hdr : end], end, true
}

// ReadStr returns the bytes of the string at b[0] (no copy).
func ReadStr(b []byte) ([]byte, error) {
	s, end, ok := strAt(b, 0)
	if end < 0 {
		return nil, errAt(ErrTruncated, 0)
	}
	if !ok {
		return nil, typeErr(b, TypeStr)
	}
	return s, nil
}

// ReadBin returns the bytes of the bin at b[0] (no copy): how the SDKs
// read back the one element of operator state they snapshot (ExportRestore).
func ReadBin(b []byte) ([]byte, error) {
	if TypeOf(b) != TypeBin {
		return nil, typeErr(b, TypeBin)
	}
	hdr, n := 2, 0
	switch b[0] {
	case 0xc4:
		if len(b) >= 2 {
			n = int(b[1])
		}
	case 0xc5:
		hdr = 3
		if len(b) >= 3 {
			n = int(b[1])<<8 | int(b[2])
		}
	default: // 0xc6
		hdr = 5
		if len(b) >= 5 {
			n = int(b[1])<<24 | int(b[2])<<16 | int(b[3])<<8 | int(b[4])
		}
	}
	if len(b) < hdr || len(b)-hdr < n {
		return nil, errAt(ErrTruncated, 0)
	}
	return b[hdr : hdr+n], nil
}

// ReadInt reads an integer of any msgpack width. A uint64 above MaxInt64 is
// an error.
func ReadInt(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, errAt(ErrTruncated, 0)
	}
	c := b[0]
	if c <= 0x7f {
		return int64(c), nil
	}
	if c >= 0xe0 {
		return int64(int8(c)), nil
	}
	need := map1(c)
	if need == 0 {
		return 0, typeErr(b, TypeInt)
	}
	if len(b) < need {
		return 0, errAt(ErrTruncated, 0)
	}
	switch c {
	case 0xcc:
		return int64(b[1]), nil
	case 0xcd:
		return int64(binary.BigEndian.Uint16(b[1:])), nil
	case 0xce:
		return int64(binary.BigEndian.Uint32(b[1:])), nil
	case 0xcf:
		u := binary.BigEndian.Uint64(b[1:])
		if u > math.MaxInt64 {
			return 0, errAt(ErrRange, 0)
		}
		return int64(u), nil
	case 0xd0:
		return int64(int8(b[1])), nil
	case 0xd1:
		return int64(int16(binary.BigEndian.Uint16(b[1:]))), nil
	case 0xd2:
		return int64(int32(binary.BigEndian.Uint32(b[1:]))), nil
	default: // 0xd3
		return int64(binary.BigEndian.Uint64(b[1:])), nil
	}
}

// intAt decodes the integer b holds exactly (its header and fixedSize
// bytes): ReadInt without the checks its caller made. ok is false for a
// uint64 above MaxInt64.
func intAt(b []byte) (int64, bool) {
	switch len(b) {
	case 1:
		return int64(int8(b[0])), true // fixint: 0x00-0x7f, 0xe0-0xff
	case 2:
		if b[0] == 0xcc {
			return int64(b[1]), true
		}
		return int64(int8(b[1])), true
	case 3:
		u := binary.BigEndian.Uint16(b[1:])
		if b[0] == 0xcd {
			return int64(u), true
		}
		return int64(int16(u)), true
	case 5:
		u := binary.BigEndian.Uint32(b[1:])
		if b[0] == 0xce {
			return int64(u), true
		}
		return int64(int32(u)), true
	case 9:
		u := binary.BigEndian.Uint64(b[1:])
		return int64(u), b[0] == 0xd3 || u <= math.MaxInt64
	}
	return 0, false
}

func map1(c byte) int {
	switch c {
	case 0xcc, 0xd0:
		return 2
	case 0xcd, 0xd1:
		return 3
	case 0xce, 0xd2:
		return 5
	case 0xcf, 0xd3:
		return 9
	}
	return 0
}

// ReadFloat reads a float32 or float64; an integer is converted.
func ReadFloat(b []byte) (float64, error) {
	if len(b) == 0 {
		return 0, errAt(ErrTruncated, 0)
	}
	switch b[0] {
	case 0xca:
		if len(b) < 5 {
			return 0, errAt(ErrTruncated, 0)
		}
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b[1:]))), nil
	case 0xcb:
		if len(b) < 9 {
			return 0, errAt(ErrTruncated, 0)
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b[1:])), nil
	}
	if TypeOf(b) == TypeInt {
		i, err := ReadInt(b)
		return float64(i), err
	}
	return 0, typeErr(b, TypeFloat)
}

// ReadBool reads a boolean.
func ReadBool(b []byte) (bool, error) {
	if len(b) == 0 {
		return false, errAt(ErrTruncated, 0)
	}
	switch b[0] {
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	}
	return false, typeErr(b, TypeBool)
}

// IsNil reports whether the value at b[0] is nil.
func IsNil(b []byte) bool { return len(b) > 0 && b[0] == 0xc0 }
