package fuel

import (
	"bytes"
	"math"
	"strings"
)

// Section ids (WebAssembly Core Specification 2.0, §5.5.2 "Sections").
const (
	secCustom   = 0
	secType     = 1
	secImport   = 2
	secFunction = 3
	secTable    = 4
	secMemory   = 5
	secGlobal   = 6
	secExport   = 7
	secStart    = 8
	secElement  = 9
	secCode     = 10
	secData     = 11
	secTag      = 13 // exception handling proposal
)

// preamble is the magic number and version 1 (§5.5.16 "Modules").
var preamble = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}

// sectionRank orders the non-custom sections as §5.5.16 requires (the data
// count section, id 12, sits between element and code). Zero marks an id
// that is not a known section.
var sectionRank = [14]uint8{
	1: 1, 2: 2, 3: 3, 4: 4, 5: 5, secTag: 6, secGlobal: 7, secExport: 8,
	8: 9, 9: 10, 12: 11, secCode: 12, 11: 13,
}

// sectionOrder lists the non-custom section ids in that order.
var sectionOrder = []byte{secType, secImport, secFunction, secTable, secMemory, secTag, secGlobal, secExport, secStart, secElement, 12, secCode, secData}

// section is one section of the input; payload aliases the input.
type section struct {
	id      byte
	name    string // custom sections only
	body    []byte // custom sections only: the contents after the name
	payload []byte
	offset  int // absolute offset of payload
}

// splitSections checks the preamble and cuts the module into sections,
// enforcing the order and uniqueness of non-custom sections (§5.5.2,
// §5.5.16).
func splitSections(wasm []byte) ([]section, error) {
	r := newReader(wasm, 0)
	head, err := r.bytes(uint64(min(len(wasm), len(preamble))))
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(head, preamble) {
		r.off = 0
		return nil, r.errorf(ErrMalformed, "not a WebAssembly 1.0 module (bad magic number or version)")
	}
	var out []section
	last := uint8(0)
	for !r.eof() {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		if int(id) >= len(sectionRank) || (id != secCustom && sectionRank[id] == 0) {
			r.off--
			return nil, r.errorf(ErrMalformed, "unknown section id %d", id)
		}
		if id == secTag {
			r.off--
			return nil, r.errorf(ErrUnsupported, "tag section (exception handling)")
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		s := section{id: id, offset: r.pos()}
		if s.payload, err = r.bytes(uint64(size)); err != nil {
			return nil, err
		}
		if id == secCustom {
			cr := newReader(s.payload, s.offset)
			name, err := cr.name()
			if err != nil {
				return nil, err
			}
			s.name, s.body = string(name), s.payload[cr.off:]
		} else {
			if sectionRank[id] <= last {
				return nil, r.errorf(ErrMalformed, "section id %d out of order or repeated", id)
			}
			last = sectionRank[id]
		}
		out = append(out, s)
	}
	return out, nil
}

// dropCustom reports whether a custom section must go because it refers to
// byte offsets in the code section, which instrumentation moves: DWARF
// (.debug_*), source maps, relocations and linking data of object files,
// and code metadata such as branch hints. The "name" section holds indices
// only and survives if well formed, as do all others (producers,
// target_features, ...).
func dropCustom(s section) bool {
	name := s.name
	switch {
	case name == "name":
		return !nameSectionWellFormed(s.body)
	case strings.HasPrefix(name, ".debug_"),
		strings.HasPrefix(name, "reloc."),
		strings.HasPrefix(name, "metadata.code."),
		name == "linking",
		name == "sourceMappingURL",
		name == "external_debug_info":
		return true
	}
	return false
}

// appendSection appends one section: id, u32 size, payload.
func appendSection(dst []byte, id byte, payload []byte) ([]byte, error) {
	return appendVec(append(dst, id), payload)
}

// rewritten holds the payloads Instrument replaces, by section id; nil
// keeps the input's. A replaced section the input lacks is inserted where
// §5.5.16's order puts it. names, when set, rewrites the contents of the
// "name" custom section (after its name).
type rewritten struct {
	payload [len(sectionRank)][]byte
	names   func(contents []byte) []byte
}

// assemble writes the output module: the input's sections in order with
// the payloads of out replaced, missing ones inserted in order, and
// offset-bearing custom sections dropped.
func assemble(sections []section, out rewritten) ([]byte, error) {
	size := len(preamble) + 64
	for _, p := range out.payload {
		size += len(p)
	}
	for _, s := range sections {
		size += len(s.payload) + 6
	}
	dst := append(make([]byte, 0, size), preamble...)
	var err error
	put := func(id byte, payload []byte) {
		if err == nil {
			dst, err = appendSection(dst, id, payload)
		}
	}
	var done [len(sectionRank)]bool
	// insert writes the replaced sections that rank before rank and were
	// not written yet, in order.
	insert := func(rank uint8) {
		for _, id := range sectionOrder {
			if p := out.payload[id]; p != nil && !done[id] && sectionRank[id] < rank {
				put(id, p)
				done[id] = true
			}
		}
	}
	for _, s := range sections {
		if s.id == secCustom {
			switch {
			case dropCustom(s):
			case s.name == "name" && out.names != nil:
				payload, _ := appendVec(nil, []byte(s.name))
				put(s.id, append(payload, out.names(s.body)...))
			default:
				put(s.id, s.payload)
			}
			continue
		}
		insert(sectionRank[s.id])
		if p := out.payload[s.id]; p != nil {
			put(s.id, p)
			done[s.id] = true
		} else {
			put(s.id, s.payload)
		}
	}
	insert(math.MaxUint8)
	return dst, err
}
