package abi

import (
	"encoding/binary"
	"errors"
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
// Flat records (see FlatRecord) are indexed in one pass that checks
// every length it reads; any other record goes through ParseRecord and a
// field walk with Skip.
func AppendIndex(dst []byte, batch []byte, count int) ([]byte, error) {
	if uint64(len(batch)) >= IndexNoKey {
		return dst, ErrIndexSize
	}
	if count < 0 {
		count = 0 // as Reader reads it: no records
	}
	base := len(dst)
	recs := count * IndexRecordWords * 4
	if need := recs + count*8*IndexFieldWords*4; cap(dst)-base < need { // room for 8 fields a record
		grown := make([]byte, base, base+need)
		copy(grown, dst)
		dst = grown
	}
	dst = dst[:base+recs]
	b, off, nfields := batch, 0, 0
	var flat Flat
	var fields [15]FlatField
	for i := 0; i < count; i++ {
		start := off
		var end, vs int
		var ks, flags uint32
		var t int64
		ok := FlatRecord(b, off, &flat, &fields)
		if ok {
			end, vs, ks, t = flat.End, flat.Value, IndexNoKey, flat.Time
			if flat.Key >= 0 {
				ks = uint32(flat.Key)
			}
			if flat.HasTime {
				flags = IndexHasTime
			}
			flags |= IndexFields | uint32(flat.Fields)<<IndexCountShift
			for _, f := range fields[:flat.Fields] {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(f.Key))
				dst = binary.LittleEndian.AppendUint32(dst, uint32(f.Val))
				dst = binary.LittleEndian.AppendUint32(dst, uint32(f.End))
			}
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
		binary.LittleEndian.PutUint32(e[28:], uint32(nfields))
		nfields += int(flags >> IndexCountShift)
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

// Flat is a flat record as FlatRecord reads it: an int or nil event
// time, a nil or header-sized key, a fixmap of fixstr keys to values whose
// header tells their size (or str8). Most records of a stream are flat;
// the host's batch index and the Go SDK's guest-side split both read them
// with FlatRecord, so the two cannot disagree on one.
type Flat struct {
	End     int   // offset just past the record
	Key     int   // where the key starts, or -1 for a nil key (it ends at Value)
	Value   int   // where the value starts (it ends at End)
	Time    int64 // valid when HasTime
	HasTime bool
	Fields  int // FlatRecord filled fields[:Fields]
}

// FlatField is where one field of a flat record is, relative to the start
// of its value: the key's bytes are value[Key:Val] and its value
// value[Val:End]. Its layout is a field entry of the batch index.
type FlatField struct{ Key, Val, End int32 }

// FlatRecord reads the record at b[off] when it is flat, checking every
// length it reads, and fills r and fields; it returns false for any other
// record (ParseRecord decides those). Whatever it accepts, ParseRecord
// accepts with the same parts (FuzzCheckBatch, the SDK's FuzzSplit).
func FlatRecord(b []byte, off int, r *Flat, fields *[15]FlatField) bool {
	p := off + 1
	if p+2 > len(b) || b[off] != 0x93 {
		return false
	}
	switch c := b[p]; {
	case c <= 0x7f:
		r.Time, r.HasTime, p = int64(c), true, p+1
	case c == 0xc0:
		r.Time, r.HasTime, p = 0, false, p+1
	case (c == 0xcf || c == 0xd3) && p+9 <= len(b):
		u := binary.BigEndian.Uint64(b[p+1:])
		if c == 0xcf && u > 1<<63-1 {
			return false
		}
		r.Time, r.HasTime, p = int64(u), true, p+9
	case c >= 0xe0:
		r.Time, r.HasTime, p = int64(int8(c)), true, p+1
	case c >= 0xcc && c <= 0xd2: // a smaller int, as a writer gives small times
		t, err := ReadInt(b[p:])
		if err != nil {
			return false
		}
		r.Time, r.HasTime, p = t, true, p+int(valueSize[c])
	default:
		return false
	}
	if p >= len(b) {
		return false
	}
	r.Key = -1
	if b[p] == 0xc0 {
		p++
	} else {
		s := flatSize(b, p)
		if s == 0 || p+s > len(b) {
			return false
		}
		r.Key, p = p, p+s
	}
	if p >= len(b) || b[p]&0xf0 != 0x80 {
		return false
	}
	vs, n := p, int(b[p]&0x0f)
	p++
	for i := 0; i < n; i++ {
		if p >= len(b) || b[p]&0xe0 != 0xa0 { // a fixstr key
			return false
		}
		f := &fields[i&15] // n <= 15
		f.Key = int32(p + 1 - vs)
		p += 1 + int(b[p]&0x1f)
		if p >= len(b) {
			return false
		}
		f.Val = int32(p - vs)
		s := flatSize(b, p)
		if p += s; s == 0 || p > len(b) {
			return false
		}
		f.End = int32(p - vs)
	}
	r.End, r.Value, r.Fields = p, vs, n
	return true
}

// flatSize is the size of the value at b[p] (p < len(b)) when its header
// tells it (valueSize) or it is a str8, else 0; it may pass the end of b.
func flatSize(b []byte, p int) int {
	c := b[p]
	if s := int(valueSize[c]); s != 0 || c != 0xd9 || p+1 >= len(b) {
		return s
	}
	return 2 + int(b[p+1])
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
