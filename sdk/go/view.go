package sdk

import "github.com/sluicehq/sluice/abi"

// view is the SDK-owned state behind a Record: the parts of the envelope
// (slices into the input, no copies) plus a list of pending field edits
// whose encoded values live in vals. Views come from an arena that is
// recycled after each input record, so steady-state processing allocates
// nothing.
type view struct {
	raw     []byte // the original envelope; nil when not read from a batch
	value   []byte // the original value (a msgpack map); nil is the empty map
	key     []byte // raw msgpack key; nil when unkeyed (see head)
	time    int64  // see head
	hasTime bool
	// head, when not nil, is the host's index entry of the record (read
	// from it by fromIndex), whose key and time were not copied into key,
	// time and hasTime: a record's step costs fewer stores in a Go wasm
	// guest, and most operators never ask. Read them with keyRaw and
	// timeOf; a setter of either copies them first (ownHead).
	head  *indexRecord
	dirty bool // time or key changed: raw no longer describes the record
	// shared: Get handed out a view of value's bytes, so a setter may no
	// longer write over them (see writable)
	shared bool
	edits  []edit
	vals   []byte // encoded values of the edits
	// fields says where the fields of value are when indexed is true:
	// filled by split for a flat value (in own), or the host's batch index
	// (abi.ExportProcessIndexed) for any map with string keys.
	indexed bool
	fields  []abi.FlatField
	own     [15]abi.FlatField
}

// edit is a pending change of one top-level field: a new value
// (vals[off:end]) or a deletion.
type edit struct {
	name     string
	off, end int
	del      bool
	seen     bool // scratch flag of the writer
}

func (v *view) reset() {
	v.raw, v.value, v.key, v.indexed, v.head = nil, nil, nil, false, nil
	v.time, v.hasTime, v.dirty, v.shared = 0, false, false, false
	v.edits, v.vals = v.edits[:0], v.vals[:0]
}

// load points the view at a record read from a batch.
func (v *view) load(r abi.Record) {
	v.reset()
	v.raw, v.value, v.key, v.time, v.hasTime = r.Raw, r.Value, r.Key, r.Time, r.HasTime
}

// keyRaw is the record's key (raw msgpack), nil when unkeyed.
func (v *view) keyRaw() []byte {
	if r := v.head; r != nil {
		if r.key == abi.IndexNoKey {
			return nil
		}
		k, e := r.key-r.start, r.val-r.start
		return v.raw[k:e:e]
	}
	return v.key
}

// timeOf is the record's event time and whether it has one.
func (v *view) timeOf() (int64, bool) {
	if r := v.head; r != nil {
		return int64(uint64(r.timeLo) | uint64(r.timeHi)<<32), r.flags&abi.IndexHasTime != 0
	}
	return v.time, v.hasTime
}

// ownHead copies the key and time the index entry holds into the view, so
// that a setter can change one of them.
func (v *view) ownHead() {
	if v.head != nil {
		v.key = v.keyRaw()
		v.time, v.hasTime = v.timeOf()
		v.head = nil
	}
}

// writable reports whether a setter may write a value of the same size
// over a field's in place, instead of recording an edit: the view is an
// input record with its fields found (its bytes are the SDK's input
// buffer, which the host writes afresh for every call and never reads
// back), nothing is edited yet, no Value of its bytes was handed out (one
// would see the change, where an edit leaves it as it was), and its value
// is a fixmap (an edit writes a map16 or map32 header in its smallest
// form, as every SDK does). Written in place, the record stays unedited:
// emitting it is one copy, where an edit is spliced in at emit (~300 ns a
// record in a Go wasm guest).
func (v *view) writable() bool {
	return v.indexed && v.raw != nil && len(v.edits) == 0 && !v.shared && len(v.value) > 0 && v.value[0]&0xf0 == 0x80
}

// overwrite writes enc over the value of field name when the view is
// writable and that value has enc's size, and reports whether it did.
func (v *view) overwrite(name string, enc []byte) bool {
	if !v.writable() {
		return false
	}
	vs, ve := v.lookup(name)
	if vs < 0 || ve-vs != len(enc) {
		return false
	}
	copy(v.value[vs:ve], enc)
	return true
}

// setEncoded sets field name to the encoded value enc: over the old value
// in place when it can (overwrite), else as an edit (enc is copied).
func (v *view) setEncoded(name string, enc []byte) {
	if !v.overwrite(name, enc) {
		off := len(v.vals)
		v.vals = append(v.vals, enc...)
		v.set(name, off)
	}
}

// edited reports whether the view must be re-encoded to be written.
func (v *view) edited() bool { return v.raw == nil || v.dirty || len(v.edits) > 0 }

// find returns the index of the edit of name, or -1.
func (v *view) find(name string) int {
	for i := range v.edits {
		if v.edits[i].name == name {
			return i
		}
	}
	return -1
}

// findBytes is find for a key read from the value.
func (v *view) findBytes(name []byte) int {
	for i := range v.edits {
		if v.edits[i].name == string(name) {
			return i
		}
	}
	return -1
}

// set records a new value for name, encoded in vals[off:].
func (v *view) set(name string, off int) {
	if i := v.find(name); i >= 0 {
		v.edits[i] = edit{name: name, off: off, end: len(v.vals)}
		return
	}
	v.edits = append(v.edits, edit{name: name, off: off, end: len(v.vals)})
}

// arena hands out views for the records of one input record's call.
type arena struct {
	views []*view
	used  int
}

func (a *arena) get() *view {
	if a.used == len(a.views) {
		a.views = append(a.views, &view{})
	}
	v := a.views[a.used]
	a.used++
	v.reset()
	return v
}

// release makes every view reusable; Records handed out before are invalid.
func (a *arena) release() { a.used = 0 }
