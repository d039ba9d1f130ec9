package abi

import (
	"encoding/binary"
	"math"
)

// Record is one decoded envelope: views into the batch buffer, no copies.
type Record struct {
	Raw     []byte // the whole envelope
	Time    int64  // event time in ms; valid when HasTime
	HasTime bool
	Key     []byte // raw msgpack of the key; nil when the key is nil
	Value   []byte // raw msgpack of the value
}

// ParseRecord reads the envelope at b[off:] and returns it with the offset
// just past it. Offsets in errors are relative to b.
func ParseRecord(b []byte, off int) (Record, int, error) {
	var r Record
	end, err := parseRecord(&r, b, off)
	return r, end, err
}

func parseRecord(r *Record, b []byte, off int) (int, error) {
	kEnd, err := parseHead(r, b, off)
	if err != nil {
		return 0, err
	}
	// element 2: value, most often a fixmap
	end, ok := 0, false
	if kEnd < len(b) && b[kEnd]&0xf0 == 0x80 {
		end, ok = skipMap(b, kEnd+1, int(b[kEnd]&0x0f), 1)
	}
	if !ok {
		if end, err = skipValue(b, kEnd, 1); err != nil {
			return 0, err
		}
	}
	r.Value = b[kEnd:end:end]
	r.Raw = b[off:end:end]
	return end, nil
}

// parseRecordTo is parseRecord for a record its producer says ends at end
// (it wrote the record, or checked it with CheckBatchEnds): the value is
// not walked. It still refuses an envelope whose head does not fit.
func parseRecordTo(r *Record, b []byte, off, end int) error {
	if end <= off || end > len(b) {
		return &DecodeError{Err: ErrEnds, Offset: off, Detail: "record ends at byte " + itoa(int64(end))}
	}
	kEnd, err := parseHead(r, b[:end], off)
	if err != nil {
		return err
	}
	if kEnd >= end {
		return errAt(ErrTruncated, kEnd)
	}
	r.Value = b[kEnd:end:end]
	r.Raw = b[off:end:end]
	return nil
}

// parseHead reads the envelope's header, event time and key into r and
// returns where the value starts. Its fast path takes the heads writers
// produce — [nil or an int, nil or a fixstr, ...] — with no call and few
// live values (the slow one's error paths made it spill on every record);
// anything else, an error included, parseHeadSlow decides.
func parseHead(r *Record, b []byte, off int) (int, error) {
	if uint(off)+2 >= uint(len(b)) || b[off] != 0x93 {
		return parseHeadSlow(r, b, off)
	}
	p := off + 1
	switch c := b[p]; {
	case c == 0xc0:
		r.Time, r.HasTime = 0, false
		p++
	case c <= 0x7f:
		r.Time, r.HasTime = int64(c), true
		p++
	case (c == 0xcf || c == 0xd3) && p+9 < len(b): // uint64 or int64: ms since the epoch, the commonest event time
		u := binary.BigEndian.Uint64(b[p+1:])
		if c == 0xcf && u > math.MaxInt64 {
			return parseHeadSlow(r, b, off)
		}
		r.Time, r.HasTime = int64(u), true
		p += 9
	case c == 0xcc && p+2 < len(b): // uint8
		r.Time, r.HasTime = int64(b[p+1]), true
		p += 2
	case c == 0xcd && p+3 < len(b): // uint16
		r.Time, r.HasTime = int64(binary.BigEndian.Uint16(b[p+1:])), true
		p += 3
	case c == 0xce && p+5 < len(b): // uint32
		r.Time, r.HasTime = int64(binary.BigEndian.Uint32(b[p+1:])), true
		p += 5
	default:
		return parseHeadSlow(r, b, off)
	}
	switch c := b[p]; {
	case c == 0xc0:
		r.Key = nil
		return p + 1, nil
	case c-0xa0 < 0x20:
		if end := p + 1 + int(c&0x1f); end < len(b) {
			r.Key = b[p:end:end]
			return end, nil
		}
	}
	return parseHeadSlow(r, b, off)
}

// parseHeadSlow is parseHead for every head, with its errors.
func parseHeadSlow(r *Record, b []byte, off int) (int, error) {
	if off >= len(b) {
		return 0, errAt(ErrTruncated, off)
	}
	if b[off] != 0x93 { // fixarray of 3, the only envelope header writers produce
		if n, _, err := Len(b[off:]); err != nil || n != 3 || TypeOf(b[off:]) != TypeArray {
			return 0, errAt(ErrEnvelope, off)
		}
		return 0, &DecodeError{Err: ErrEnvelope, Offset: off, Detail: "envelope header must be a fixarray"}
	}
	p := off + 1
	// element 0: event time, nil or int
	if p >= len(b) {
		return 0, errAt(ErrTruncated, p)
	}
	switch c := b[p]; {
	case c == 0xc0:
		r.Time, r.HasTime = 0, false
		p++
	case c <= 0x7f:
		r.Time, r.HasTime = int64(c), true
		p++
	case typeTable[c] == TypeInt:
		end := p + int(fixedSize[c]) // every integer has a fixed size
		if end > len(b) {
			return 0, errAt(ErrTruncated, p)
		}
		t, ok := intAt(b[p:end])
		if !ok {
			_, err := ReadInt(b[p:end])
			return 0, shift(err, p)
		}
		r.Time, r.HasTime, p = t, true, end
	default:
		return 0, &DecodeError{Err: ErrEnvelope, Offset: p, Detail: "event time is " + TypeOf(b[p:]).String()}
	}
	// element 1: key
	if p >= len(b) {
		return 0, errAt(ErrTruncated, p)
	}
	r.Key = nil
	kEnd := p + 1
	if b[p] != 0xc0 {
		var err error
		if kEnd, err = skipValue(b, p, 1); err != nil {
			return 0, err
		}
		r.Key = b[p:kEnd:kEnd]
	}
	return kEnd, nil
}

// Reader splits a batch into records without allocating.
//
//	rd := abi.NewReader(batch, count)
//	for rd.Next() { use(rd.Record()) }
//	if err := rd.Err(); err != nil { ... }
type Reader struct {
	buf  []byte
	off  int
	left int
	rec  Record
	err  error
	ends []byte // NewReaderEnds: where each record ends
	// MaxRecord, when positive, refuses records larger than it.
	MaxRecord int
}

// NewReader reads count records from buf.
func NewReader(buf []byte, count int) Reader {
	return Reader{buf: buf, left: count}
}

// NewReaderEnds reads count records from buf, record i ending where the
// i-th little-endian uint32 of ends says (the offset just past it; the
// layout of ImportEmitEnds), as the batch's producer says: it wrote them,
// or checked them against their ends with CheckBatchEnds. Values are then
// not walked, only each envelope's head is read; ends that are not
// increasing or pass the buffer are refused as ErrEnds, but a value that
// is not the one msgpack value its end says goes unnoticed: never pass
// ends that nothing checked. len(ends) must be 4*count.
func NewReaderEnds(buf []byte, count int, ends []byte) Reader {
	if len(ends) != 4*max(count, 0) {
		return Reader{err: &DecodeError{Err: ErrEnds, Detail: itoa(int64(len(ends))) + " bytes of ends for " + itoa(int64(count)) + " records, want 4 each"}}
	}
	return Reader{buf: buf, left: count, ends: ends}
}

// Next advances to the next record. It returns false at the end of the
// batch or on an error (see Err). After the last record it checks that no
// bytes are left over.
func (r *Reader) Next() bool {
	if r.err != nil {
		return false
	}
	if r.left <= 0 {
		if r.off != len(r.buf) {
			r.err = errAt(ErrTrailing, r.off)
		}
		return false
	}
	if r.off >= len(r.buf) {
		r.err = errAt(ErrCount, r.off)
		return false
	}
	var end int
	var err error
	if r.ends != nil {
		end = int(binary.LittleEndian.Uint32(r.ends[len(r.ends)-4*r.left:]))
		err = parseRecordTo(&r.rec, r.buf, r.off, end)
	} else {
		end, err = parseRecord(&r.rec, r.buf, r.off)
	}
	if err != nil {
		r.err = err
		return false
	}
	if r.MaxRecord > 0 && end-r.off > r.MaxRecord {
		r.err = &DecodeError{Err: ErrTooLarge, Offset: r.off, Detail: itoa(int64(end-r.off)) + " bytes, limit " + itoa(int64(r.MaxRecord))}
		return false
	}
	r.off = end
	r.left--
	return true
}

// Record returns the current record. Its slices alias the batch.
func (r *Reader) Record() Record { return r.rec }

// Current returns a pointer to the current record, valid until the next
// call to Next; it saves copying the Record on hot paths.
func (r *Reader) Current() *Record { return &r.rec }

// Offset is the byte offset of the next record.
func (r *Reader) Offset() int { return r.off }

// Err is the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Writer appends records to a batch. Reset it to reuse its buffer.
type Writer struct {
	Buf   []byte
	Count int
}

// Reset empties the batch, keeping the buffer's capacity.
func (w *Writer) Reset() { w.Buf, w.Count = w.Buf[:0], 0 }

// Len is the batch size in bytes.
func (w *Writer) Len() int { return len(w.Buf) }

// AppendRaw appends a pre-encoded envelope.
func (w *Writer) AppendRaw(envelope []byte) {
	w.Buf = append(w.Buf, envelope...)
	w.Count++
}

// Append appends an envelope built from its parts. key and value are raw
// msgpack; a nil key is written as msgpack nil.
func (w *Writer) Append(time int64, hasTime bool, key, value []byte) {
	w.Buf = AppendEnvelope(w.Buf, time, hasTime, key, value)
	w.Count++
}

// AppendRecordWithKey appends r with its key replaced by key (raw msgpack),
// as a keyBy does before a keyed operator.
func (w *Writer) AppendRecordWithKey(r Record, key []byte) {
	w.Append(r.Time, r.HasTime, key, r.Value)
}

// AppendEnvelope appends [time|nil, key|nil, value] to b.
func AppendEnvelope(b []byte, time int64, hasTime bool, key, value []byte) []byte {
	switch {
	case !hasTime:
		b = append(b, 0x93, 0xc0)
	case uint64(time) <= 0x7f:
		b = append(b, 0x93, byte(time))
	default:
		b = AppendInt(append(b, 0x93), time)
	}
	if key == nil {
		b = append(b, 0xc0)
	} else {
		b = append(b, key...)
	}
	return append(b, value...)
}
