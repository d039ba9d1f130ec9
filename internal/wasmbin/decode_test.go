package wasmbin

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeSeeds decodes the hand-written seeds to what they declare.
func TestDecodeSeeds(t *testing.T) {
	m, err := Decode(seeds[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Types) != 1 || string(m.Types[0].Params) != "\x7f" || string(m.Types[0].Results) != "\x7f" ||
		len(m.Funcs) != 1 || len(m.Exports) != 1 || m.Exports[0] != (Export{Name: "f", Kind: KindFunc, Index: 0}) {
		t.Errorf("function module: %+v", m)
	}
	m, err = Decode(seeds[2])
	if err != nil {
		t.Fatal(err)
	}
	kinds := ""
	for _, im := range m.Imports {
		kinds += string('0' + im.Kind)
	}
	if kinds != "0123" || m.ImportedFuncs != 1 || m.ImportedGlobals != 1 || !m.Imports[2].Limits.HasMax() ||
		m.Imports[2].Limits.Min != 1 || m.Imports[2].Limits.Max != 2 || !m.Imports[3].Global.Mutable {
		t.Errorf("imports: %+v", m.Imports)
	}
	m, err = Decode(seeds[3])
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tables) != 1 || m.Tables[0].Limits.Max != 16 || len(m.Memories) != 1 || m.Memories[0].Max != 2 {
		t.Errorf("table and memory: %+v %+v", m.Tables, m.Memories)
	}
	m, err = Decode(seeds[4])
	if err != nil {
		t.Fatal(err)
	}
	if name, ok := FunctionName(m.Sections, 0); !ok || name != "f" {
		t.Errorf("function 0's name: %q %v", name, ok)
	}
}

// TestDecodeErrors: each malformed module is refused with its class, its
// offset, and End when the input stops short.
func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		wasm   string
		class  error
		offset int
		end    bool
		msg    string
	}{
		{"header", "\x00asm\x01\x00", ErrMalformed, 0, true, "inside the 8-byte header"},
		{"magic", "\x00asn\x01\x00\x00\x00", ErrMalformed, 0, false, "bad magic"},
		{"section past the end", string(seeds[5]), ErrMalformed, 8, true, "section 1 claims 16 bytes but only 2 remain"},
		{"unknown section", "\x00asm\x01\x00\x00\x00\x0e\x00", ErrMalformed, 8, false, "unknown section id 14"},
		{"out of order", "\x00asm\x01\x00\x00\x00\x03\x01\x00\x01\x01\x00", ErrMalformed, 11, false, "out of order"},
		{"tag section", "\x00asm\x01\x00\x00\x00\x0d\x00", ErrUnsupported, 8, false, "tag section"},
		{"vector count past the end", "\x00asm\x01\x00\x00\x00\x01\x01\x05", ErrMalformed, 10, true, "vector of 5 elements"},
		{"type index", "\x00asm\x01\x00\x00\x00\x03\x02\x01\x00", ErrMalformed, 11, false, "type index 0 out of range (0 types)"},
		{"value type", "\x00asm\x01\x00\x00\x00\x01\x04\x01\x60\x01\x40", ErrUnsupported, 13, false, "value type 0x40"},
		{"u32 too long", "\x00asm\x01\x00\x00\x00\x03\x06\x80\x80\x80\x80\x80\x00", ErrMalformed, 10, false, "too long for u32"},
		{"u32 too large", "\x00asm\x01\x00\x00\x00\x03\x05\xff\xff\xff\xff\x7f", ErrMalformed, 10, false, "too large for u32"},
		{"trailing bytes", "\x00asm\x01\x00\x00\x00\x03\x02\x00\x00", ErrMalformed, 11, false, "1 unexpected bytes"},
		{"name not UTF-8", "\x00asm\x01\x00\x00\x00\x07\x05\x01\x01\xff\x00\x00", ErrMalformed, 11, false, "not valid UTF-8"},
		{"export kind", "\x00asm\x01\x00\x00\x00\x07\x05\x01\x01f\x05\x00", ErrMalformed, 13, false, "unknown kind 0x05"},
	} {
		_, err := Decode([]byte(c.wasm))
		var we *Error
		if !errors.As(err, &we) || !errors.Is(err, c.class) || we.Offset != c.offset || we.End != c.end || !strings.Contains(we.Msg, c.msg) {
			t.Errorf("%s: %#v, want %v at %d, end %v, %q", c.name, err, c.class, c.offset, c.end, c.msg)
		}
	}
}
