package abi

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
	end, err := Skip(b, off)
	if err != nil {
		return r, 0, err
	}
	raw := b[off:end]
	n, p, err := Len(raw)
	if err != nil || n != 3 || TypeOf(raw) != TypeArray {
		return r, 0, errAt(ErrEnvelope, off)
	}
	// element 0: event time
	tEnd, _ := Skip(raw, p) // cannot fail: the whole envelope was skipped
	switch TypeOf(raw[p:]) {
	case TypeNil:
	case TypeInt:
		t, err := ReadInt(raw[p:tEnd])
		if err != nil {
			return r, 0, shift(err, off+p)
		}
		r.Time, r.HasTime = t, true
	default:
		return r, 0, &DecodeError{Err: ErrEnvelope, Offset: off + p, Detail: "event time is " + TypeOf(raw[p:]).String()}
	}
	kEnd, _ := Skip(raw, tEnd)
	if !IsNil(raw[tEnd:]) {
		r.Key = raw[tEnd:kEnd]
	}
	r.Value = raw[kEnd:]
	r.Raw = raw
	return r, end, nil
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
	// MaxRecord, when positive, refuses records larger than it.
	MaxRecord int
}

// NewReader reads count records from buf.
func NewReader(buf []byte, count int) Reader {
	return Reader{buf: buf, left: count}
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
	rec, end, err := ParseRecord(r.buf, r.off)
	if err != nil {
		r.err = err
		return false
	}
	if r.MaxRecord > 0 && end-r.off > r.MaxRecord {
		r.err = &DecodeError{Err: ErrTooLarge, Offset: r.off, Detail: itoa(int64(end-r.off)) + " bytes, limit " + itoa(int64(r.MaxRecord))}
		return false
	}
	r.rec, r.off = rec, end
	r.left--
	return true
}

// Record returns the current record. Its slices alias the batch.
func (r *Reader) Record() Record { return r.rec }

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
	b = append(b, 0x93)
	if hasTime {
		b = AppendInt(b, time)
	} else {
		b = append(b, 0xc0)
	}
	if key == nil {
		b = append(b, 0xc0)
	} else {
		b = append(b, key...)
	}
	return append(b, value...)
}
