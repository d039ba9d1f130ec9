package sdk

import (
	"encoding/binary"
	"math"
	"strconv"
	"unsafe"

	"github.com/sluicehq/sluice/abi"
)

// This file is the guest's fast path over the bytes of a batch: splitting
// envelopes and finding a top-level field, for the flat records that make
// up most streams (a map of strings to scalars and short strings), and
// reading the host's batch index (abi.ExportProcessIndexed) instead when
// the host sends one. Each is one loop in one function: compiled to wasm
// by Go, a call costs ~9 ns and a loop iteration ~5 (arguments and results
// go through the Go stack in linear memory, every branch goes through the
// function's dispatch loop), so abi's scanner, whose general skip calls
// itself per value, split a record in ~500 ns inside the guest; split
// takes ~190 and the index ~55 (RATIONALE.md).
//
// Anything outside the fast path (a nested value, a long string, a map
// header other than fixmap, a truncated or malformed byte) is handed to
// package abi, which decides: the fast path never accepts or rejects what
// abi would not, and returns the same slices (a differential test and a
// fuzz target hold it).

// small is the total size of a value with header byte c that the fast
// path skips without looking further: fixed-width scalars (sizes as abi's)
// and, with the flag bit 0x80, fixstr (size from the header); 0 for any
// other value.
var small = func() (t [256]uint8) {
	for c := 0x00; c <= 0x7f; c++ {
		t[c] = 1 // positive fixint
	}
	for c := 0xe0; c <= 0xff; c++ {
		t[c] = 1 // negative fixint
	}
	for c, n := range map[byte]uint8{
		0xc0: 1, 0xc2: 1, 0xc3: 1, // nil, false, true
		0xcc: 2, 0xd0: 2, 0xcd: 3, 0xd1: 3, 0xce: 5, 0xd2: 5, 0xca: 5, 0xcf: 9, 0xd3: 9, 0xcb: 9,
	} {
		t[c] = n
	}
	for c := 0xa0; c <= 0xbf; c++ {
		t[c] = 0x80 // fixstr: 1 + (c & 0x1f)
	}
	return t
}()

// smallLen is the size of the small value at b[p] (p < len(b)), or 0
// when it is not small; it may pass the end of b. It inlines.
func smallLen(b []byte, p int) int {
	c := b[p]
	s := int(small[c])
	if s == 0x80 {
		return 1 + int(c&0x1f)
	}
	if s == 0 && c == 0xd9 && p+1 < len(b) {
		return 2 + int(b[p+1])
	}
	return s
}

// split reads the envelope at b[off:] into v and returns the offset just
// past it; any record outside the fast path goes through abi.ParseRecord.
// process runs it once per record: it must stay one call.
func (v *view) split(b []byte, off int) (int, error) {
	p := off + 1
	if p+2 > len(b) || b[off] != 0x93 {
		return v.splitSlow(b, off)
	}
	// element 0: the event time, nil or an int64.
	var t int64
	has := true
	switch c := b[p]; {
	case c <= 0x7f:
		t, p = int64(c), p+1
	case c == 0xc0:
		has, p = false, p+1
	case (c == 0xcf || c == 0xd3) && p+9 <= len(b):
		u := binary.BigEndian.Uint64(b[p+1:])
		if c == 0xcf && u > math.MaxInt64 {
			return v.splitSlow(b, off)
		}
		t, p = int64(u), p+9
	default:
		return v.splitSlow(b, off)
	}
	// element 1: the key, nil or a small value.
	var key []byte
	if p >= len(b) {
		return v.splitSlow(b, off)
	}
	if b[p] == 0xc0 {
		p++
	} else {
		s := smallLen(b, p)
		if s == 0 || p+s > len(b) {
			return v.splitSlow(b, off)
		}
		key, p = b[p:p+s:p+s], p+s
	}
	// element 2: the value, a fixmap of fixstr keys to small values.
	start := p
	if p >= len(b) || b[p]&0xf0 != 0x80 {
		return v.splitSlow(b, off)
	}
	n := int(b[p] & 0x0f)
	p++
	for i := 0; i < n; i++ {
		if p >= len(b) {
			return v.splitSlow(b, off)
		}
		k := b[p]
		if k&0xe0 != 0xa0 {
			return v.splitSlow(b, off)
		}
		f := &v.own[i&15] // n <= 15
		f.key = int32(p + 1 - start)
		p += 1 + int(k&0x1f)
		f.val = int32(p - start)
		if p >= len(b) {
			return v.splitSlow(b, off)
		}
		s := smallLen(b, p)
		if p += s; s == 0 || p > len(b) {
			return v.splitSlow(b, off)
		}
		f.end = int32(p - start)
	}
	v.raw, v.value, v.key, v.time, v.hasTime = b[off:p:p], b[start:p:p], key, t, has
	v.indexed, v.fields, v.dirty = true, v.own[:n], false
	v.edits, v.vals = v.edits[:0], v.vals[:0]
	return p, nil
}

func (v *view) splitSlow(b []byte, off int) (int, error) {
	r, end, err := abi.ParseRecord(b, off)
	if err != nil {
		return 0, err
	}
	v.load(r)
	return end, nil
}

// field returns the current raw value of a top-level field: the edit of
// name if there is one, else abi.MapField's answer for the value, from the
// fast path (a fixmap of fixstr keys to small values) or, for anything
// else, from abi.MapField itself. nil means missing (or not a map, or
// malformed). It is the one call behind every field getter.
func (v *view) field(name string) []byte {
	if len(v.edits) != 0 {
		if i := v.find(name); i >= 0 {
			e := &v.edits[i]
			if e.del {
				return nil
			}
			return v.vals[e.off:e.end]
		}
	}
	m := v.value
	if v.indexed {
		if vs, ve := v.lookup(name); vs >= 0 {
			return m[vs:ve:ve]
		}
		return nil
	}
	if len(m) == 0 {
		return nil
	}
	if m[0]&0xf0 != 0x80 {
		return mapFieldSlow(m, name)
	}
	n, p := int(m[0]&0x0f), 1
	if n > len(m)-1 {
		return mapFieldSlow(m, name) // abi refuses a count the bytes cannot hold
	}
	for i := 0; i < n; i++ {
		if p >= len(m) {
			return mapFieldSlow(m, name)
		}
		k := m[p]
		if k&0xe0 != 0xa0 {
			return mapFieldSlow(m, name)
		}
		ks := p + 1
		p = ks + int(k&0x1f)
		if p >= len(m) {
			return mapFieldSlow(m, name)
		}
		vs, s := p, smallLen(m, p)
		if p += s; s == 0 || p > len(m) {
			return mapFieldSlow(m, name)
		}
		if vs-ks == len(name) {
			// a byte loop rather than string ==, which calls memequal
			j := 0
			for j < len(name) && m[ks+j] == name[j] {
				j++
			}
			if j == len(name) {
				return m[vs:p:p]
			}
		}
	}
	return nil
}

// lookup finds name in the fields of an indexed view: the value is
// v.value[vs:ve], or vs is -1. Names are compared a word at a time:
// string == calls memequal, which costs more than the whole comparison in
// a Go wasm guest. Every load is inside the key and the name.
func (v *view) lookup(name string) (vs, ve int) {
	q0 := unsafe.Pointer(unsafe.StringData(name))
	for i := range v.fields {
		f := &v.fields[i]
		if int(f.val-f.key) != len(name) {
			continue
		}
		k := v.value[f.key:f.val]
		p, q, n := unsafe.Pointer(unsafe.SliceData(k)), q0, len(name)
		for ; n >= 8 && *(*uint64)(p) == *(*uint64)(q); n -= 8 {
			p, q = unsafe.Add(p, 8), unsafe.Add(q, 8)
		}
		if n >= 8 {
			continue
		}
		if n >= 4 {
			if *(*uint32)(p) != *(*uint32)(q) {
				continue
			}
			p, q, n = unsafe.Add(p, 4), unsafe.Add(q, 4), n-4
		}
		if n >= 2 {
			if *(*uint16)(p) != *(*uint16)(q) {
				continue
			}
			p, q, n = unsafe.Add(p, 2), unsafe.Add(q, 2), n-2
		}
		if n == 0 || *(*byte)(p) == *(*byte)(q) {
			return int(f.val), int(f.end)
		}
	}
	return -1, 0
}

func mapFieldSlow(m []byte, name string) []byte {
	raw, ok, err := abi.MapField(m, name)
	if !ok || err != nil {
		return nil
	}
	return raw
}

// indexRecord is one record entry of the host's batch index, as
// abi.AppendIndex lays it out (little-endian, like wasm memory).
type indexRecord struct {
	start, end, key, val uint32
	timeLo, timeHi       uint32
	flags, first         uint32
}

// readIndex views index as count record entries and the field table
// after them. The host wrote it 4-byte aligned; the guest checks the
// sizes, and slicing checks every offset it reads.
func readIndex(index []byte, count int32) ([]indexRecord, []fieldAt, error) {
	const rec, field = abi.IndexRecordWords * 4, abi.IndexFieldWords * 4
	n := int(count)
	if n < 0 || len(index) < n*rec || uintptr(unsafe.Pointer(unsafe.SliceData(index)))%abi.IndexAlign != 0 {
		return nil, nil, &Error{Status: abi.StatusMalformed, Text: "sluice_process_indexed: the index is not " + strconv.Itoa(n) + " aligned record entries"}
	}
	if n == 0 {
		return []indexRecord{}, nil, nil
	}
	recs := unsafe.Slice((*indexRecord)(unsafe.Pointer(unsafe.SliceData(index))), n)
	var fields []fieldAt
	if rest := index[n*rec:]; len(rest) >= field {
		fields = unsafe.Slice((*fieldAt)(unsafe.Pointer(unsafe.SliceData(rest))), len(rest)/field)
	}
	return recs, fields, nil
}

// fromIndex points v at the record an index entry describes and returns
// where the record ends.
func (v *view) fromIndex(b []byte, r *indexRecord, fields []fieldAt) int {
	v.raw, v.value = b[r.start:r.end:r.end], b[r.val:r.end:r.end]
	v.key = nil
	if r.key != abi.IndexNoKey {
		v.key = b[r.key:r.val:r.val]
	}
	v.time, v.hasTime = int64(uint64(r.timeLo)|uint64(r.timeHi)<<32), r.flags&abi.IndexHasTime != 0
	v.indexed, v.dirty = r.flags&abi.IndexFields != 0, false
	if v.indexed {
		v.fields = fields[r.first : r.first+r.flags>>abi.IndexCountShift]
	}
	v.edits, v.vals = v.edits[:0], v.vals[:0]
	return int(r.end)
}
