package sdk

import "unsafe"

// Record is one record: a view of a msgpack map (its fields) plus the
// envelope's key and event time. Reading a field scans the msgpack bytes in
// place; setting one records an edit that is applied when the record is
// written out, so neither allocates in steady state.
//
// A Record handed to an operator function, and every Record made with
// NewRecord during the call, is valid only until the function returns: the
// SDK reuses its memory for the next record. Keep one longer with Clone.
//
// Field getters return the zero value when the field is missing or of
// another type (see Value); Get returns the field itself.
type Record struct{ v *view }

// Get returns the current value of a top-level field (Exists is false when
// there is none). The Value keeps the field's value as it is now: a setter
// called later on the record does not change it.
func (r Record) Get(name string) Value {
	if r.v == nil {
		return Value{}
	}
	r.v.shared = true // a view of the record's bytes: setters no longer write over them
	return Value{r.v.field(name)}
}

// get is Get for the getters that return a copy or a scalar (no view of
// the record's bytes leaves the SDK).
func (r Record) get(name string) Value {
	if r.v == nil {
		return Value{}
	}
	return Value{r.v.field(name)}
}

// Has reports whether the record has the field.
func (r Record) Has(name string) bool { return r.get(name).Exists() }

// Int returns an integer field (a float field truncated).
func (r Record) Int(name string) int64 { return r.v.int(name) }

// int is Record.Int: the index of a flat record read in place, no other
// call, and Value.Int for any other case.
func (v *view) int(name string) int64 {
	if v == nil {
		return 0
	}
	if v.indexed && len(v.edits) == 0 {
		// view.lookup, written out (keep the two alike): a call costs
		// 10-20 ns in a Go wasm guest, and filters call this getter on
		// every record; the copy took the valid filter 249 -> 218
		// ns/record (TestIndexedGettersCompareEveryNameLength holds both)
		q0 := unsafe.Pointer(unsafe.StringData(name))
		for i := range v.fields {
			f := &v.fields[i]
			if int(f.Val-f.Key) != len(name) {
				continue
			}
			p, q, n := unsafe.Pointer(unsafe.SliceData(v.value[f.Key:f.Val])), q0, len(name)
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
			if n != 0 && *(*byte)(p) != *(*byte)(q) {
				continue
			}
			if c := v.value[f.Val]; c <= 0x7f || c >= 0xe0 {
				return int64(int8(c)) // a fixint: most integers in a stream
			}
			return Value{v.value[f.Val:f.End]}.Int()
		}
		return 0
	}
	return Value{v.field(name)}.Int()
}

// Float returns a float field (an integer field converted).
func (r Record) Float(name string) float64 { return r.get(name).Float() }

// Str returns a copy of a string field; it allocates (see StrBytes).
func (r Record) Str(name string) string { return r.get(name).Str() }

// StrBytes returns a string field's bytes without copying; do not modify
// or keep them.
func (r Record) StrBytes(name string) []byte { return r.Get(name).StrBytes() }

// Bool returns a boolean field.
func (r Record) Bool(name string) bool { return r.get(name).Bool() }

// Key returns the record's key (nil raw bytes when unkeyed).
func (r Record) Key() Key {
	if r.v == nil {
		return Key{}
	}
	return Key{Value{r.v.keyRaw()}}
}

// Time returns the record's event time in milliseconds since the Unix
// epoch, and whether it has one.
func (r Record) Time() (ms int64, ok bool) {
	if r.v == nil {
		return 0, false
	}
	return r.v.timeOf()
}

// IsZero reports whether r is the zero Record (no record at all).
func (r Record) IsZero() bool { return r.v == nil }

// AppendMsgpack appends the record's fields, edits applied, as one msgpack
// map (without the envelope) to dst.
func (r Record) AppendMsgpack(dst []byte) ([]byte, error) {
	if r.v == nil {
		return dst, errZero
	}
	return appendValue(dst, r.v)
}
