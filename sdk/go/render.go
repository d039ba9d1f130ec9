package sdk

import (
	"encoding/binary"
	"errors"

	"github.com/sluicehq/sluice/abi"
)

// This file writes a view back to msgpack: the original fields in their
// order with edited values substituted and deleted ones dropped, then the
// fields that are new, in the order they were first set.

var errNotMap = errors.New("the record value is not a msgpack map: its fields cannot be edited")

var errZero = errors.New("the zero Record has no fields")

// appendRecord appends v as an envelope. An unedited record read from the
// input is copied as it is.
func appendRecord(dst []byte, v *view) ([]byte, error) {
	if !v.edited() {
		return append(dst, v.raw...), nil
	}
	if v.raw != nil && !v.dirty {
		// only fields changed: the time and key are copied as they were
		// encoded (the value ends the envelope)
		head := len(v.raw) - len(v.value)
		if appendSplice(&dst, v, head) {
			return dst, nil
		}
		dst = append(dst, v.raw[:head]...)
		return appendValue(dst, v)
	}
	t, ht := v.timeOf()
	b, _, err := appendEnvelope(dst, v, t, ht, v.keyRaw())
	return b, err
}

// appendEnvelope appends [time, key, value-of-v] and returns where the
// value starts.
func appendEnvelope(dst []byte, v *view, time int64, hasTime bool, key []byte) ([]byte, int, error) {
	dst = append(dst, 0x93)
	if hasTime {
		dst = abi.AppendInt(dst, time)
	} else {
		dst = abi.AppendNil(dst)
	}
	if key == nil {
		dst = abi.AppendNil(dst)
	} else {
		dst = append(dst, key...)
	}
	start := len(dst)
	dst, err := appendValue(dst, v)
	return dst, start, err
}

// appendValue appends the value map of v with its edits applied.
func appendValue(dst []byte, v *view) ([]byte, error) {
	if len(v.edits) == 0 {
		if v.value == nil {
			return abi.AppendMapHeader(dst, 0), nil
		}
		return append(dst, v.value...), nil
	}
	if b, ok := appendNewFields(dst, v); ok {
		return b, nil
	}
	m, n, off := v.value, 0, 0
	if m != nil {
		var err error
		if abi.TypeOf(m) != abi.TypeMap {
			return dst, errNotMap
		}
		if n, off, err = abi.Len(m); err != nil {
			return dst, err
		}
	}
	hdr := mapHeaderSize(n + len(v.edits)) // the most fields there can be
	start := len(dst)
	dst = append(dst, make([]byte, hdr)...)
	for i := range v.edits {
		v.edits[i].seen = false
	}
	count, unseen := 0, len(v.edits)
	run := off // start of a run of unedited fields copied in one go
	for i := 0; i < n; i++ {
		var kEnd, vEnd, j int
		if v.indexed && i < len(v.fields) { // split or the host found them (scan.go)
			f := &v.fields[i]
			kEnd, vEnd = int(f.Val), int(f.End)
			j = v.findBytes(m[f.Key:f.Val])
		} else {
			var err error
			if kEnd, err = abi.Skip(m, off); err != nil {
				return dst, err
			}
			if vEnd, err = abi.Skip(m, kEnd); err != nil {
				return dst, err
			}
			j = -1
			if name, err := abi.ReadStr(m[off:kEnd]); err == nil {
				j = v.findBytes(name)
			}
		}
		if j >= 0 {
			dst = append(dst, m[run:off]...)
			e := &v.edits[j]
			if !e.seen {
				e.seen = true
				unseen--
			}
			if !e.del {
				dst = append(append(dst, m[off:kEnd]...), v.vals[e.off:e.end]...)
				count++
			}
			run = vEnd
		} else {
			count++
		}
		off = vEnd
		if unseen == 0 { // no edit left to apply: the rest is copied as it is
			count += n - i - 1
			off = len(m)
			break
		}
	}
	dst = append(dst, m[run:off]...)
	for i := range v.edits {
		if e := &v.edits[i]; !e.seen && !e.del {
			dst = append(abi.AppendStr(dst, e.name), v.vals[e.off:e.end]...)
			count++
		}
	}
	return putMapHeader(dst, start, hdr, count), nil
}

// appendSplice is appendRecord's fast path for the commonest edits of
// all: one field set on an indexed record whose value is a fixmap. A field
// the value has: the envelope up to the field's value is copied as one
// block, then the new value, then the rest (the general path's result, the
// first field of the name edited, without its walk, in which every key
// comparison is a call in a Go wasm guest). A new field: the envelope and
// the value behind a header one larger, then the field (appendNewFields'
// result, with one lookup instead of two). ok is false when another case
// applies; a map16 or map32 header, rewritten in its smallest form, is one.
func appendSplice(out *[]byte, v *view, head int) bool {
	m := v.value
	if len(v.edits) != 1 || v.edits[0].del || !v.indexed || len(m) == 0 || m[0]&0xf0 != 0x80 {
		return false
	}
	e, dst := &v.edits[0], *out
	if vs, ve := v.lookup(e.name); vs >= 0 {
		dst = append(dst, v.raw[:head+vs]...)
		dst = append(dst, v.vals[e.off:e.end]...)
		*out = append(dst, v.raw[head+ve:]...)
		return true
	}
	if m[0]&0x0f == 15 {
		return false
	}
	// the record as it is, its header then counting one field more (an
	// append is 25-40 ns in a Go wasm guest: one, not three)
	start := len(dst)
	dst = append(dst, v.raw...)
	dst[start+head]++
	*out = append(abi.AppendStr(dst, e.name), v.vals[e.off:e.end]...)
	return true
}

// appendNewFields is appendValue's fast path for the commonest edit, new
// fields added to an indexed fixmap: the value is copied as it is behind a
// new header, the fields follow. ok is false when another case applies.
func appendNewFields(dst []byte, v *view) (_ []byte, ok bool) {
	m := v.value
	if !v.indexed || len(m) == 0 || m[0]&0xf0 != 0x80 || int(m[0]&0x0f)+len(v.edits) > 15 {
		return dst, false
	}
	for i := range v.edits {
		if e := &v.edits[i]; e.del {
			return dst, false
		} else if vs, _ := v.lookup(e.name); vs >= 0 {
			return dst, false // a field the value has: edited in place
		}
	}
	dst = append(dst, m[0]+byte(len(v.edits)))
	dst = append(dst, m[1:]...)
	for i := range v.edits {
		e := &v.edits[i]
		dst = append(abi.AppendStr(dst, e.name), v.vals[e.off:e.end]...)
	}
	return dst, true
}

// mapHeaderSize is the size of the smallest map header for n pairs.
func mapHeaderSize(n int) int {
	switch {
	case n <= 15:
		return 1
	case n <= 0xffff:
		return 3
	}
	return 5
}

// putMapHeader writes the header of a map of count pairs into the hdr bytes
// reserved at dst[start:], moving the body left when a smaller header fits.
func putMapHeader(dst []byte, start, hdr, count int) []byte {
	size := mapHeaderSize(count)
	if size < hdr {
		copy(dst[start+size:], dst[start+hdr:])
		dst = dst[:len(dst)-(hdr-size)]
	}
	h := dst[start : start+size]
	switch size {
	case 1:
		h[0] = 0x80 | byte(count)
	case 3:
		h[0] = 0xde
		binary.BigEndian.PutUint16(h[1:], uint16(count))
	default:
		h[0] = 0xdf
		binary.BigEndian.PutUint32(h[1:], uint32(count))
	}
	return dst
}
