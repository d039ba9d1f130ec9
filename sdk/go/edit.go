package sdk

import "github.com/sluicehq/sluice/abi"

// Setters change one top-level field of r in place and return r itself
// for chaining: a Record is a handle on one view, so r.SetInt(...) is r
// and later setters change it too (what Emit already wrote stays as it
// was). To emit variants of one input, Clone first:
// out.Emit(r.Clone().SetStr("a", "1")).
// An existing field keeps its position; a new one is appended after the
// existing fields, in the order new fields are first set. The value is
// encoded into SDK-owned scratch memory: no allocation in steady state.

// SetInt sets an integer field.
func (r Record) SetInt(name string, v int64) Record {
	w := r.mut()
	if -32 <= v && v <= 0x7f {
		// a fixint without a call to abi; over a 1-byte value in place
		// (view.writable), the commonest edit of a map
		if w.writable() {
			if vs, ve := w.lookup(name); vs >= 0 && ve == vs+1 {
				w.value[vs] = byte(v)
				return r
			}
		}
		w.vals = append(w.vals, byte(v))
		w.set(name, len(w.vals)-1)
		return r
	}
	var b [9]byte
	w.setEncoded(name, abi.AppendInt(b[:0], v))
	return r
}

// SetFloat sets a float field (encoded as float64).
func (r Record) SetFloat(name string, v float64) Record {
	w := r.mut()
	var b [9]byte
	w.setEncoded(name, abi.AppendFloat(b[:0], v))
	return r
}

// SetStr sets a string field.
func (r Record) SetStr(name, v string) Record {
	w := r.mut()
	off := len(w.vals)
	w.vals = abi.AppendStr(w.vals, v)
	w.set(name, off)
	return r
}

// SetStrBytes sets a string field from bytes, which are copied.
func (r Record) SetStrBytes(name string, v []byte) Record {
	w := r.mut()
	off := len(w.vals)
	w.vals = abi.AppendStrBytes(w.vals, v)
	w.set(name, off)
	return r
}

// SetBool sets a boolean field.
func (r Record) SetBool(name string, v bool) Record {
	w := r.mut()
	var b [1]byte
	w.setEncoded(name, abi.AppendBool(b[:0], v))
	return r
}

// SetNil sets a field to nil.
func (r Record) SetNil(name string) Record {
	w := r.mut()
	off := len(w.vals)
	w.vals = abi.AppendNil(w.vals)
	w.set(name, off)
	return r
}

// SetValue sets a field to a copy of v (e.g. a field of another record).
// A missing v deletes the field.
func (r Record) SetValue(name string, v Value) Record {
	if !v.Exists() {
		return r.Delete(name)
	}
	w := r.mut()
	off := len(w.vals)
	w.vals = append(w.vals, v.raw...)
	w.set(name, off)
	return r
}

// SetRaw sets a field to one pre-encoded msgpack value, which is copied.
// It panics if raw is not exactly one valid msgpack value.
func (r Record) SetRaw(name string, raw []byte) Record {
	if end, err := abi.Skip(raw, 0); err != nil || end != len(raw) {
		panic("sluice sdk: SetRaw(" + name + "): not exactly one msgpack value")
	}
	return r.SetValue(name, Value{raw})
}

// Delete removes a field (a no-op when it is missing).
func (r Record) Delete(name string) Record {
	w := r.mut()
	if i := w.find(name); i >= 0 {
		w.edits[i].del = true
		return r
	}
	w.edits = append(w.edits, edit{name: name, del: true})
	return r
}

// SetTime sets the record's event time (milliseconds since the epoch).
func (r Record) SetTime(ms int64) Record {
	w := r.mut()
	w.ownHead()
	w.time, w.hasTime, w.dirty = ms, true, true
	return r
}

// SetKey sets the record's envelope key (e.g. a Key from Get(...).Key()).
// The key's bytes are not copied; any Key obtained during the call stays
// valid until the record is written.
func (r Record) SetKey(k Key) Record {
	w := r.mut()
	w.ownHead()
	w.key, w.dirty = k.raw, true
	return r
}

func (r Record) mut() *view {
	if r.v == nil {
		panic("sluice sdk: setter called on the zero Record; make one with sdk.NewRecord")
	}
	return r.v
}
