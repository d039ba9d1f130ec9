package wasmbin

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode: it must never panic, every
// error must be an *Error of class ErrMalformed or ErrUnsupported at an
// offset inside the input, and a module it decodes must tile the input
// with its sections and decode to the same thing once its sections are
// written again (by AppendSection, with minimal LEB128 sizes). The corpus
// in testdata/fuzz/FuzzDecode holds the sections before the code of the
// Go and WAT identity plugins and whole WAT plugin fixtures.
func FuzzDecode(f *testing.F) {
	for _, m := range seeds {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		m, err := Decode(wasm)
		if err != nil {
			var we *Error
			if !errors.As(err, &we) || (!errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnsupported)) {
				t.Fatalf("error without a class: %v (%T)", err, err)
			}
			if we.Offset < 0 || we.Offset > len(wasm) {
				t.Fatalf("error at offset %d of a %d-byte input: %v", we.Offset, len(wasm), err)
			}
			return
		}
		at := len(Preamble)
		again := append([]byte(nil), Preamble...)
		for _, s := range m.Sections {
			if s.Offset <= at || s.Offset+len(s.Payload) > len(wasm) {
				t.Fatalf("section %d at %d (%d bytes) does not follow the one ending at %d in %d bytes", s.ID, s.Offset, len(s.Payload), at, len(wasm))
			}
			at = s.Offset + len(s.Payload)
			again, _ = AppendSection(again, s.ID, s.Payload)
		}
		if at != len(wasm) {
			t.Fatalf("the sections end at %d of %d bytes", at, len(wasm))
		}
		m2, err := Decode(again)
		if err != nil {
			t.Fatalf("the module written again does not decode: %v", err)
		}
		if !sameModule(m, m2) {
			t.Fatalf("the module written again decodes differently:\n%+v\n%+v", m, m2)
		}
	})
}

// sameModule compares what Decode read, but the offsets.
func sameModule(a, b *Module) bool {
	strip := func(m *Module) Module {
		c := *m
		c.Sections = nil
		c.Imports = append([]Import(nil), m.Imports...)
		for i := range c.Imports {
			c.Imports[i].At, c.Imports[i].Limits.At = 0, 0
		}
		c.Tables = append([]Table(nil), m.Tables...)
		for i := range c.Tables {
			c.Tables[i].Limits.At = 0
		}
		c.Memories = append([]Limits(nil), m.Memories...)
		for i := range c.Memories {
			c.Memories[i].At = 0
		}
		return c
	}
	return reflect.DeepEqual(strip(a), strip(b)) && len(a.Sections) == len(b.Sections)
}

// seeds are small hand-written modules, one per decoded section kind.
var seeds = [][]byte{
	[]byte("\x00asm\x01\x00\x00\x00"),
	// (type (func (param i32) (result i32))) (func (type 0)) (export "f" (func 0)) (code)
	[]byte("\x00asm\x01\x00\x00\x00\x01\x06\x01\x60\x01\x7f\x01\x7f\x03\x02\x01\x00\x07\x05\x01\x01f\x00\x00\x0a\x06\x01\x04\x00\x20\x00\x0b"),
	// imports of each kind: func, table, memory, global
	[]byte("\x00asm\x01\x00\x00\x00\x01\x04\x01\x60\x00\x00\x02\x1e\x04\x01m\x01f\x00\x00\x01m\x01t\x01\x70\x00\x01\x01m\x01m\x02\x01\x01\x02\x01m\x01g\x03\x7f\x01"),
	// a table and a memory with maxima, a memory export
	[]byte("\x00asm\x01\x00\x00\x00\x04\x05\x01\x70\x01\x01\x10\x05\x04\x01\x01\x01\x02\x07\x0a\x01\x06memory\x02\x00"),
	// a name section naming function 0 "f"
	[]byte("\x00asm\x01\x00\x00\x00\x00\x0b\x04name\x01\x04\x01\x00\x01f"),
	// truncated: a type section claiming more bytes than remain
	[]byte("\x00asm\x01\x00\x00\x00\x01\x10\x01\x60"),
}
