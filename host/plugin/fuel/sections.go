package fuel

import (
	"bytes"
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

// assemble writes the output module: the input's sections in order with
// the global, export and code payloads replaced, the global and export
// sections inserted where §5.5.16's order puts them if the input had none,
// and offset-bearing custom sections dropped.
func assemble(sections []section, globals, exports, code []byte) ([]byte, error) {
	size := len(preamble) + len(globals) + len(exports) + len(code) + 32
	for _, s := range sections {
		size += len(s.payload) + 6
	}
	out := append(make([]byte, 0, size), preamble...)
	var err error
	put := func(id byte, payload []byte) {
		if err == nil {
			out, err = appendSection(out, id, payload)
		}
	}
	doneGlobal, doneExport := false, false
	for _, s := range sections {
		if s.id == secCustom {
			if !dropCustom(s) {
				put(s.id, s.payload)
			}
			continue
		}
		if !doneGlobal && sectionRank[s.id] >= sectionRank[secGlobal] {
			put(secGlobal, globals)
			doneGlobal = true
		}
		if !doneExport && sectionRank[s.id] >= sectionRank[secExport] {
			put(secExport, exports)
			doneExport = true
		}
		switch s.id {
		case secGlobal, secExport:
			// written above
		case secCode:
			put(s.id, code)
		default:
			put(s.id, s.payload)
		}
	}
	if !doneGlobal {
		put(secGlobal, globals)
	}
	if !doneExport {
		put(secExport, exports)
	}
	return out, err
}
