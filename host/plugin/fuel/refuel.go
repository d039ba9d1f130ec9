package fuel

import (
	"math"

	"github.com/sluicehq/sluice/internal/wasmbin"
)

// The refuel import (Options.Refuel): a function the rewrite imports so
// that a site whose charge leaves the counter negative asks the host for
// more fuel before it traps. Its type is (i64 counter) -> (i64 counter).
const (
	RefuelModule = "sluice_fuel"
	RefuelName   = "refuel"
)

// funcShift renumbers function indices for the refuel import, which is
// appended after the module's function imports: every defined function's
// index moves up by one, imported functions keep theirs.
type funcShift struct {
	on bool
	at uint32 // the imported function count: the refuel import's index
}

// index returns the new index of function x.
func (s funcShift) index(x uint32) uint32 {
	if s.on && x >= s.at {
		return x + 1
	}
	return x
}

// patches returns a collector of the indices to renumber, nil when
// nothing is renumbered.
func (s funcShift) patches() *patches {
	if s.on {
		return &patches{}
	}
	return nil
}

// readFuncIndex reads a function index, refused unless below b.funcs when
// that is set, and records it in fixes.
func readFuncIndex(r *wasmbin.Reader, b bounds, fixes *patches) (uint32, error) {
	at := r.Off
	var x uint32
	var err error
	if b.funcs > 0 {
		x, err = r.Index(b.funcs, ErrMalformed, "function")
	} else {
		x, err = r.U32()
	}
	if err == nil {
		fixes.add(at, r.Off, x)
	}
	return x, err
}

// patch replaces the function index encoded in src[at:end] (offsets in
// the bytes being rewritten) by the shifted index of x.
type patch struct {
	at, end int
	x       uint32
}

// patches collects the function indices of one section's payload that
// the refuel import renumbers; nil collects nothing.
type patches struct{ list []patch }

// add records the index x read from [at, end).
func (p *patches) add(at, end int, x uint32) {
	if p != nil {
		p.list = append(p.list, patch{at, end, x})
	}
}

// apply appends src[from:] to dst with every patch at or past from
// re-encoded under s.
func (p *patches) apply(dst, src []byte, from int, s funcShift) []byte {
	prev := from
	if p != nil {
		for _, q := range p.list {
			if q.at < from {
				continue
			}
			dst = append(dst, src[prev:q.at]...)
			dst = wasmbin.AppendU32(dst, s.index(q.x))
			prev = q.end
		}
	}
	return append(dst, src[prev:]...)
}

// vecHead reads the entry count of section s, one vector of what, and
// refuses a count that leaves no room for one more entry; the reader is
// left at the first entry. A nil section has no entries and no reader.
func vecHead(s *section, what string) (*wasmbin.Reader, uint32, error) {
	if s == nil {
		return nil, 0, nil
	}
	r := wasmbin.NewReader(s.Payload, s.Offset)
	n, err := r.Count()
	if err == nil && n == math.MaxUint32 {
		err = r.Errorf(ErrMalformed, "too many %s", what)
	}
	return r, n, err
}

// appendEntry returns section s (nil: none) with one more entry, the
// bytes of entry.
func appendEntry(s *section, what string, entry []byte) ([]byte, error) {
	r, n, err := vecHead(s, what)
	if err != nil {
		return nil, err
	}
	var rest []byte
	if r != nil {
		rest = r.B[r.Off:]
	}
	out := wasmbin.AppendU32(make([]byte, 0, len(rest)+len(entry)+5), n+1)
	return append(append(out, rest...), entry...), nil
}

// appendRefuelType returns the type section with the refuel import's type,
// func [i64] -> [i64], appended, and that type's index.
func appendRefuelType(s *section) ([]byte, uint32, error) {
	_, n, err := vecHead(s, "types")
	if err != nil {
		return nil, 0, err
	}
	out, err := appendEntry(s, "types", []byte{0x60, 0x01, valI64, 0x01, valI64})
	return out, n, err
}

// appendRefuelImport returns the import section with the refuel import
// appended as the last function import: (import RefuelModule RefuelName
// (func (type typ))). Imports are not renumbered by this (imports of
// other kinds have their own index spaces).
func appendRefuelImport(s *section, typ uint32) ([]byte, error) {
	entry, _ := wasmbin.AppendVec(nil, []byte(RefuelModule))
	entry, _ = wasmbin.AppendVec(entry, []byte(RefuelName))
	return appendEntry(s, "imports", wasmbin.AppendU32(append(entry, 0x00), typ)) // importdesc: func typeidx
}

// shiftStart rewrites the start section (§5.5.11): one function index.
func shiftStart(s section, b bounds, sh funcShift) ([]byte, error) {
	r := wasmbin.NewReader(s.Payload, s.Offset)
	x, err := readFuncIndex(r, b, nil)
	if err != nil {
		return nil, err
	}
	if err := r.Trailing(); err != nil {
		return nil, err
	}
	return wasmbin.AppendU32(nil, sh.index(x)), nil
}

// shiftNames rewrites the contents of a well-formed "name" section
// (§7.4.1) for the renumbered functions: the function names (subsection
// 1) and local names (2) are re-indexed; label names (3, from the
// extended name section proposal, indexed by function too) are dropped;
// every other subsection is kept as it is.
func shiftNames(contents []byte, sh funcShift) []byte {
	out := make([]byte, 0, len(contents)+16)
	r := wasmbin.NewReader(contents, 0)
	for !r.EOF() {
		id, _ := r.Byte()
		sub, _ := r.Vec() // well formed: checked by wasmbin.NameSectionWellFormed
		var body []byte
		switch id {
		case 1:
			body = shiftNameMap(nil, wasmbin.NewReader(sub, 0), sh, false)
		case 2:
			body = shiftNameMap(nil, wasmbin.NewReader(sub, 0), sh, true)
		case 3:
			continue
		default:
			body = sub
		}
		out, _ = wasmbin.AppendVec(append(out, id), body)
	}
	return out
}

// shiftNameMap re-indexes vec(idx name) or, when indirect, vec(idx
// namemap), whose outer indices are functions.
func shiftNameMap(dst []byte, r *wasmbin.Reader, sh funcShift, indirect bool) []byte {
	n, _ := r.Count()
	dst = wasmbin.AppendU32(dst, n)
	for ; n > 0; n-- {
		x, _ := r.U32()
		dst = wasmbin.AppendU32(dst, sh.index(x))
		start := r.Off
		if indirect {
			_ = r.NameMap()
		} else {
			_, _ = r.Name()
		}
		dst = append(dst, r.B[start:r.Off]...)
	}
	return dst
}
