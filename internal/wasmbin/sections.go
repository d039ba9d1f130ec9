package wasmbin

import "strings"

// Section ids (§5.5.2 "Sections").
const (
	SecCustom    = 0
	SecType      = 1
	SecImport    = 2
	SecFunction  = 3
	SecTable     = 4
	SecMemory    = 5
	SecGlobal    = 6
	SecExport    = 7
	SecStart     = 8
	SecElement   = 9
	SecCode      = 10
	SecData      = 11
	SecDataCount = 12
	SecTag       = 13 // exception handling proposal
	NumSections  = 14 // one past the highest id
)

// Preamble is the magic number and version 1 (§5.5.16 "Modules").
const Preamble = "\x00asm\x01\x00\x00\x00"

// Rank orders the non-custom sections as §5.5.16 requires (the data count
// section sits between element and code). Zero marks an id that is not a
// known section. A table: never written.
var Rank = [NumSections]uint8{
	SecType: 1, SecImport: 2, SecFunction: 3, SecTable: 4, SecMemory: 5, SecTag: 6, SecGlobal: 7, SecExport: 8,
	SecStart: 9, SecElement: 10, SecDataCount: 11, SecCode: 12, SecData: 13,
}

// Order lists the non-custom section ids in that order. A table: never
// written.
var Order = []byte{SecType, SecImport, SecFunction, SecTable, SecMemory, SecTag, SecGlobal, SecExport, SecStart, SecElement, SecDataCount, SecCode, SecData}

// Section is one section of a module; Payload aliases the module.
type Section struct {
	ID      byte
	Name    string // custom sections only
	Body    []byte // custom sections only: the contents after the name
	Payload []byte
	Offset  int // absolute offset of Payload
}

// Reader returns a reader of the section's payload.
func (s *Section) Reader() *Reader { return NewReader(s.Payload, s.Offset) }

// Split checks the preamble and cuts the module into sections, enforcing
// the order and uniqueness of non-custom sections (§5.5.2, §5.5.16). The
// tag section (exception handling) is refused as ErrUnsupported.
func Split(wasm []byte) ([]Section, error) {
	r := NewReader(wasm, 0)
	head, err := r.Bytes(uint64(min(len(wasm), len(Preamble))))
	if err != nil {
		return nil, err
	}
	if string(head) != Preamble {
		r.Off = 0
		if len(wasm) < len(Preamble) && strings.HasPrefix(Preamble, string(wasm)) {
			return nil, r.end("the module ends after %d bytes, inside the 8-byte header", len(wasm))
		}
		return nil, r.Errorf(ErrMalformed, "not a WebAssembly 1.0 module (bad magic number or version)")
	}
	var out []Section
	last := uint8(0)
	for !r.EOF() {
		start := r.Off
		id, err := r.Byte()
		if err != nil {
			return nil, err
		}
		if int(id) >= len(Rank) || (id != SecCustom && Rank[id] == 0) {
			r.Off--
			return nil, r.Errorf(ErrMalformed, "unknown section id %d", id)
		}
		if id == SecTag {
			r.Off--
			return nil, r.Errorf(ErrUnsupported, "tag section (exception handling)")
		}
		size, err := r.U32()
		if err != nil {
			return nil, err
		}
		s := Section{ID: id, Offset: r.Pos()}
		if uint64(size) > uint64(len(wasm)-r.Off) {
			r.Off = start
			return nil, r.end("section %d claims %d bytes but only %d remain", id, size, len(wasm)-s.Offset)
		}
		s.Payload, _ = r.Bytes(uint64(size))
		if id == SecCustom {
			cr := s.Reader()
			name, err := cr.Name()
			if err != nil {
				return nil, err
			}
			s.Name, s.Body = string(name), s.Payload[cr.Off:]
		} else {
			if Rank[id] <= last {
				r.Off = start
				return nil, r.Errorf(ErrMalformed, "section id %d out of order or repeated", id)
			}
			last = Rank[id]
		}
		out = append(out, s)
	}
	return out, nil
}
