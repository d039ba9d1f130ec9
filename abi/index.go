package abi

import (
	"encoding/binary"
	"errors"
	"slices"
)

// ExportProcessIndexed: process_indexed(port i32, ptr i32, len i32,
// count i32, index_ptr i32, index_len i32) -> status i32. Optional.
//
// The same call as ExportProcess, with a batch index (see AppendIndex)
// that the host computed from the batch and wrote into the same buffer
// right after it, 4-byte aligned (index_ptr = ptr + len rounded up to a
// multiple of 4, from the guest's point of view; the guest checks it
// against its buffer like any range). A guest that exports it is called
// through it for every batch the host can index; a batch the host cannot
// index (it is malformed) goes through ExportProcess, which the guest
// still exports, so the guest's own scanner answers it with a status.
//
// The index exists because a guest whose compiler makes every branch and
// call costly (Go's wasm backend: see RATIONALE.md) spent more time
// finding where records and fields are than on the operator's work; the
// host finds them at native speed while it copies the batch in.
const ExportProcessIndexed = "sluice_process_indexed"

// The batch index is little-endian 32-bit words: count record entries of
// IndexRecordWords words, then the field table, entries of IndexFieldWords
// words. All offsets fit in 32 bits (a batch is a wasm32 buffer).
//
// Record entry (offsets into the batch):
//
//	[0] envelope start        [1] envelope end (= value end)
//	[2] key start, or IndexNoKey for a nil key (the key ends at the value start)
//	[3] value start
//	[4] event time, low word  [5] event time, high word (an int64)
//	[6] flags: IndexHasTime, IndexFields, and the field count << IndexCountShift
//	[7] the record's first entry in the field table
//
// Field entry (offsets into the record's value, so a guest can use the
// table as it is): [0] key bytes start (after the string header),
// [1] value start (= key bytes end), [2] value end.
//
// A record's fields are indexed (IndexFields set) when its value is a
// msgpack map of at most IndexMaxFields pairs whose keys are all
// strings; otherwise the guest finds its fields itself.
const (
	IndexRecordWords = 8
	IndexFieldWords  = 3
	IndexNoKey       = 0xffffffff
	IndexHasTime     = 1 << 0
	IndexFields      = 1 << 1
	IndexCountShift  = 8
	IndexMaxFields   = 255
)

// IndexAlign is the alignment of the index after the batch.
const IndexAlign = 4

// ErrIndexSize is returned for a batch too large to index in 32 bits.
var ErrIndexSize = errors.New("batch too large for a 32-bit index")

// AppendIndex appends the index of count records of batch to dst. It
// fails, like Reader (with Reader's error), on a batch that is not count
// well-formed records; dst is then returned as it was.
//
// Flat records (an int or nil time, a nil or one-byte key, a fixmap of
// fixstr keys to values whose header tells their size) are indexed in
// one pass that checks every length it reads; any other record goes
// through ParseRecord and a field walk with Skip.
func AppendIndex(dst []byte, batch []byte, count int) ([]byte, error) {
	if uint64(len(batch)) >= IndexNoKey {
		return dst, ErrIndexSize
	}
	base := len(dst)
	recs := count * IndexRecordWords * 4
	if need := recs + count*8*IndexFieldWords*4; cap(dst)-base < need { // room for 8 fields a record
		grown := make([]byte, base, base+need)
		copy(grown, dst)
		dst = grown
	}
	dst = dst[:base+recs]
	b, off, fields := batch, 0, 0
	for i := 0; i < count; i++ {
		start := off
		end, vs, ks, t, flags, ok := flatEnvelope(b, off)
		if ok {
			dst, flags = appendFlatFields(dst, b[vs:end], flags)
		} else {
			var r Record
			var err error
			if r, end, err = ParseRecord(b, off); err != nil {
				return indexError(dst[:base], batch, count)
			}
			vs, ks, t, flags = end-len(r.Value), IndexNoKey, r.Time, 0
			if r.Key != nil {
				ks = uint32(vs - len(r.Key))
			}
			if r.HasTime {
				flags = IndexHasTime
			}
			var n int
			if dst, n, ok = appendFields(dst, r.Value); ok {
				flags |= IndexFields | uint32(n)<<IndexCountShift
			} else {
				dst = dst[:len(dst)-n*IndexFieldWords*4]
			}
		}
		e := dst[base+i*IndexRecordWords*4 : base+(i+1)*IndexRecordWords*4]
		binary.LittleEndian.PutUint32(e[0:], uint32(start))
		binary.LittleEndian.PutUint32(e[4:], uint32(end))
		binary.LittleEndian.PutUint32(e[8:], ks)
		binary.LittleEndian.PutUint32(e[12:], uint32(vs))
		binary.LittleEndian.PutUint64(e[16:], uint64(t))
		binary.LittleEndian.PutUint32(e[24:], flags)
		binary.LittleEndian.PutUint32(e[28:], uint32(fields))
		fields += int(flags >> IndexCountShift)
		off = end
		if off >= len(b) && i+1 < count {
			return indexError(dst[:base], batch, count)
		}
	}
	if off != len(b) {
		return indexError(dst[:base], batch, count)
	}
	return dst, nil
}

// indexError is Reader's error for a batch AppendIndex cannot index.
func indexError(dst []byte, batch []byte, count int) ([]byte, error) {
	return dst, readerError(batch, count)
}

// flatEnvelope reads the envelope at b[off] on the fast path: where it
// ends, where its value and key start (IndexNoKey for nil), its time and
// the time flag. ok is false for anything else, which the caller hands
// to ParseRecord.
func flatEnvelope(b []byte, off int) (end, vs int, ks uint32, t int64, flags uint32, ok bool) {
	p := off + 1
	if p+2 > len(b) || b[off] != 0x93 {
		return
	}
	switch c := b[p]; {
	case c <= 0x7f:
		t, flags, p = int64(c), IndexHasTime, p+1
	case c == 0xc0:
		p++
	case (c == 0xcf || c == 0xd3) && p+9 <= len(b):
		u := binary.BigEndian.Uint64(b[p+1:])
		if c == 0xcf && u > 1<<63-1 {
			return
		}
		t, flags, p = int64(u), IndexHasTime, p+9
	default:
		return
	}
	ks = IndexNoKey
	if p >= len(b) {
		return
	}
	if c := b[p]; c != 0xc0 {
		if valueSize[c] == 0 || p+int(valueSize[c]) > len(b) {
			return
		}
		ks, p = uint32(p), p+int(valueSize[c])
	} else {
		p++
	}
	vs = p
	if p >= len(b) || b[p]&0xf0 != 0x80 {
		return
	}
	n := int(b[p] & 0x0f)
	for p++; n > 0; n-- {
		if p >= len(b) || b[p]&0xe0 != 0xa0 { // a fixstr key
			return
		}
		if p += 1 + int(b[p]&0x1f); p >= len(b) {
			return
		}
		s := int(valueSize[b[p]])
		if s == 0 {
			return
		}
		if p += s; p > len(b) {
			return
		}
	}
	return p, vs, ks, t, flags, true
}

// appendFlatFields appends the field entries of a value flatEnvelope
// accepted (a fixmap of fixstr keys to header-sized values) and adds the
// field flags.
func appendFlatFields(dst []byte, m []byte, flags uint32) ([]byte, uint32) {
	n := int(m[0] & 0x0f)
	at := len(dst)
	dst = slices.Grow(dst, n*IndexFieldWords*4)[:at+n*IndexFieldWords*4]
	e := dst[at:]
	for i, p := 0, 1; i < n; i++ {
		ks := p + 1
		vs := ks + int(m[p]&0x1f)
		p = vs + int(valueSize[m[vs]])
		f := e[i*IndexFieldWords*4 : (i+1)*IndexFieldWords*4]
		binary.LittleEndian.PutUint32(f[0:], uint32(ks))
		binary.LittleEndian.PutUint32(f[4:], uint32(vs))
		binary.LittleEndian.PutUint32(f[8:], uint32(p))
	}
	return dst, flags | IndexFields | uint32(n)<<IndexCountShift
}

// appendFields appends the field entries of the map m (already known to
// be well formed) and reports whether it could index it; n is how many
// entries were appended either way.
func appendFields(dst []byte, m []byte) (_ []byte, n int, ok bool) {
	pairs, off, err := Len(m)
	if err != nil || TypeOf(m) != TypeMap || pairs > IndexMaxFields {
		return dst, 0, false
	}
	for n = 0; n < pairs; n++ {
		s, err := ReadStr(m[off:])
		if err != nil {
			return dst, n, false
		}
		kEnd, err := Skip(m, off)
		if err != nil {
			return dst, n, false
		}
		vEnd, err := Skip(m, kEnd)
		if err != nil {
			return dst, n, false
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(kEnd-len(s)))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(kEnd))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(vEnd))
		off = vEnd
	}
	return dst, n, true
}
