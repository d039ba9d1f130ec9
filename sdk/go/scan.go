package sdk

import (
	"strconv"
	"unsafe"

	"github.com/sluicehq/sluice/abi"
)

// This file is how the guest finds records and fields in a batch: from
// the host's batch index (abi.ExportProcessIndexed) when the host sends
// one, else by splitting each flat record with abi.FlatRecord — the same
// reader the host's index uses — which also says where its fields are.
// A getter then compares names against that table, one call. Compiled to
// wasm by Go, a call costs ~9 ns and a loop iteration ~5 (arguments go
// through the Go stack in linear memory, every branch through the
// function's dispatch loop), so abi's general scanner, which calls itself
// per value, took ~500 ns a record inside the guest; the split ~190, the
// index ~55 (RATIONALE.md). Records that are not flat, and views with no
// field table, go to abi.ParseRecord and abi.MapField, which decide.

// split reads the envelope at b[off:] into v and returns the offset just
// past it: a flat record through abi.FlatRecord (the reader the host's
// batch index uses), which also says where its fields are, any other
// through abi.ParseRecord. process runs it once per record.
func (v *view) split(b []byte, off int) (int, error) {
	var r abi.Flat
	if !abi.FlatRecord(b, off, &r, &v.own) {
		return v.splitSlow(b, off)
	}
	v.raw, v.value, v.key = b[off:r.End:r.End], b[r.Value:r.End:r.End], nil
	if r.Key >= 0 {
		v.key = b[r.Key:r.Value:r.Value]
	}
	v.time, v.hasTime, v.head = r.Time, r.HasTime, nil
	v.indexed, v.fields, v.dirty, v.shared = true, v.own[:r.Fields], false, false
	v.edits, v.vals = v.edits[:0], v.vals[:0]
	return r.End, nil
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
// name if there is one, else the value's field, from the index when the
// view has one (split, or the host's batch index) and from abi.MapField
// otherwise. nil means missing (or not a map, or malformed). It is the one
// call behind every field getter.
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
	if v.indexed {
		if vs, ve := v.lookup(name); vs >= 0 {
			return v.value[vs:ve:ve]
		}
		return nil
	}
	raw, ok, err := abi.MapField(v.value, name)
	if !ok || err != nil {
		return nil
	}
	return raw
}

// lookup finds name in the fields of an indexed view: the value is
// v.value[vs:ve], or vs is -1. Names are compared a word at a time:
// string == calls memequal, which costs more than the whole comparison in
// a Go wasm guest. Every load is inside the key and the name. view.int
// has its own copy of this loop.
func (v *view) lookup(name string) (vs, ve int) {
	q0 := unsafe.Pointer(unsafe.StringData(name))
	for i := range v.fields {
		f := &v.fields[i]
		if int(f.Val-f.Key) != len(name) {
			continue
		}
		k := v.value[f.Key:f.Val]
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
			return int(f.Val), int(f.End)
		}
	}
	return -1, 0
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
func readIndex(index []byte, count int32) ([]indexRecord, []abi.FlatField, error) {
	const rec, field = abi.IndexRecordWords * 4, abi.IndexFieldWords * 4
	n := int(count)
	if n < 0 || len(index) < n*rec || uintptr(unsafe.Pointer(unsafe.SliceData(index)))%abi.IndexAlign != 0 {
		return nil, nil, &Error{Status: abi.StatusMalformed, Text: "sluice_process_indexed: the index is not " + strconv.Itoa(n) + " aligned record entries"}
	}
	if n == 0 {
		return []indexRecord{}, nil, nil
	}
	recs := unsafe.Slice((*indexRecord)(unsafe.Pointer(unsafe.SliceData(index))), n)
	var fields []abi.FlatField
	if rest := index[n*rec:]; len(rest) >= field {
		fields = unsafe.Slice((*abi.FlatField)(unsafe.Pointer(unsafe.SliceData(rest))), len(rest)/field)
	}
	return recs, fields, nil
}

// fromIndex points v at the record an index entry describes and returns
// where the record ends.
func (v *view) fromIndex(b []byte, r *indexRecord, fields []abi.FlatField) int {
	v.raw, v.value = b[r.start:r.end:r.end], b[r.val:r.end:r.end]
	v.head = r // the key and the time stay in the entry: keyRaw, timeOf
	v.indexed, v.dirty, v.shared = r.flags&abi.IndexFields != 0, false, false
	if v.indexed {
		v.fields = fields[r.first : r.first+r.flags>>abi.IndexCountShift]
	}
	v.edits, v.vals = v.edits[:0], v.vals[:0]
	return int(r.end)
}
