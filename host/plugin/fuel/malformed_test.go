package fuel_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/fuel"
)

// module assembles a module from raw sections.
func module(sections ...[]byte) []byte {
	out := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	for _, s := range sections {
		out = append(out, s...)
	}
	return out
}

// sec frames a section payload (sizes below 128 only).
func sec(id byte, payload ...byte) []byte {
	return append([]byte{id, byte(len(payload))}, payload...)
}

// oneFunc is a module with one () -> () function whose body is body.
func oneFunc(body ...byte) []byte {
	return module(
		sec(1, 1, 0x60, 0, 0), // type section: [] -> []
		sec(3, 1, 0),          // function section: one function of type 0
		sec(10, append([]byte{1, byte(len(body))}, body...)...),
	)
}

func TestMalformedInputs(t *testing.T) {
	for _, c := range []struct {
		name string
		wasm []byte
		want error
	}{
		{"empty", nil, fuel.ErrMalformed},
		{"bad magic", []byte("\x00asn\x01\x00\x00\x00"), fuel.ErrMalformed},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), fuel.ErrMalformed},
		{"component", []byte("\x00asm\x0d\x00\x01\x00"), fuel.ErrMalformed},
		{"section size past the end", append(module(), 1, 10, 0), fuel.ErrMalformed},
		{"unknown section", module(sec(14)), fuel.ErrMalformed},
		{"sections out of order", module(sec(3, 0), sec(1, 0)), fuel.ErrMalformed},
		{"section repeated", module(sec(1, 0), sec(1, 0)), fuel.ErrMalformed},
		{"datacount after code", module(sec(10, 0), sec(12, 0)), fuel.ErrMalformed},
		{"tag section", module(sec(13, 0)), fuel.ErrUnsupported},
		{"custom name past the section", module(sec(0, 5, 'a')), fuel.ErrMalformed},
		{"custom name not UTF-8", module(sec(0, 2, 0xc3, 0x28)), fuel.ErrMalformed},
		{"export name not UTF-8", module(sec(7, 1, 1, 0xff, 0, 0)), fuel.ErrMalformed},
		{"overlong u32 (6 bytes)", module(sec(1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00)), fuel.ErrMalformed},
		{"u32 too large", module(sec(3, 0xff, 0xff, 0xff, 0xff, 0x1f)), fuel.ErrMalformed},
		{"GC type form", module(sec(1, 1, 0x4e, 0)), fuel.ErrUnsupported},
		{"functions without code", module(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0)), fuel.ErrMalformed},
		{"code count mismatch", module(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(10, 2, 2, 0, 0x0b, 2, 0, 0x0b)), fuel.ErrMalformed},
		{"body without end", oneFunc(0, 0x01), fuel.ErrMalformed},
		{"bytes after the final end", oneFunc(0, 0x0b, 0x01), fuel.ErrMalformed},
		{"unbalanced block", oneFunc(0, 0x02, 0x40, 0x0b), fuel.ErrMalformed},
		{"else without if", oneFunc(0, 0x02, 0x40, 0x05, 0x0b, 0x0b), fuel.ErrMalformed},
		{"two elses", oneFunc(0, 0x41, 0, 0x04, 0x40, 0x05, 0x05, 0x0b, 0x0b), fuel.ErrMalformed},
		{"i32.const overlong", oneFunc(0, 0x41, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x1a, 0x0b), fuel.ErrMalformed},
		{"i32.const high bits not sign", oneFunc(0, 0x41, 0xff, 0xff, 0xff, 0xff, 0x4f, 0x1a, 0x0b), fuel.ErrMalformed},
		{"i64.const 11 bytes", oneFunc(0, 0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x1a, 0x0b), fuel.ErrMalformed},
		{"i64.const bad last byte", oneFunc(0, 0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0x1a, 0x0b), fuel.ErrMalformed},
		{"truncated f64.const", oneFunc(0, 0x44, 0, 0, 0), fuel.ErrMalformed},
		{"truncated v128.const", oneFunc(0, 0xfd, 0x0c, 1, 2, 3), fuel.ErrMalformed},
		{"truncated br_table", oneFunc(0, 0x41, 0, 0x0e, 0xff, 0xff, 0x03), fuel.ErrMalformed},
		{"2^32-1 locals in 6 bytes", oneFunc(1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x7f, 0x0b), fuel.ErrLimit},
		{"50001 locals", oneFunc(2, 0xd0, 0x86, 0x03, 0x7f, 0x01, 0x7e, 0x0b), fuel.ErrLimit},
		{"vector count past the section", module(sec(3, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00)), fuel.ErrMalformed},
		{"br_table count past the body", oneFunc(0, 0x41, 0, 0x0e, 0xff, 0xff, 0x03, 0x00, 0x0b), fuel.ErrMalformed},
		{"atomic.fence flags", oneFunc(0, 0xfe, 0x03, 0x01, 0x0b), fuel.ErrMalformed},
		{"unknown opcode", oneFunc(0, 0x27, 0x0b), fuel.ErrUnsupported},
		{"unassigned SIMD opcode", oneFunc(0, 0xfd, 0x9a, 0x01, 0x0b), fuel.ErrUnsupported},
		{"unknown 0xfc opcode", oneFunc(0, 0xfc, 0x12, 0x0b), fuel.ErrUnsupported},
		{"GC block type", oneFunc(0, 0x02, 0x63, 0x70, 0x0b, 0x0b), fuel.ErrUnsupported},
		{"typed ref.null", oneFunc(0, 0xd0, 0x00, 0x1a, 0x0b), fuel.ErrUnsupported},
		{"call_ref", oneFunc(0, 0x14, 0x00, 0x0b), fuel.ErrUnsupported},
		{"tag import", module(sec(2, 1, 1, 'm', 1, 'n', 4, 0, 0)), fuel.ErrUnsupported},
		{"bad import kind", module(sec(2, 1, 1, 'm', 1, 'n', 9, 0)), fuel.ErrMalformed},
		{"bad global mutability", module(sec(6, 1, 0x7f, 2, 0x41, 0, 0x0b)), fuel.ErrMalformed},
		{"global expr without end", module(sec(6, 1, 0x7f, 0, 0x41, 0)), fuel.ErrMalformed},
		{"trailing bytes in global section", module(sec(6, 1, 0x7f, 0, 0x41, 0, 0x0b, 0x00)), fuel.ErrMalformed},
		{"global init reads the counter's index", module(sec(6, 1, 0x7e, 0, 0x23, 1, 0x0b)), fuel.ErrExportExists},
		{"data segment longer than the section", module(sec(11, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 'x')), fuel.ErrMalformed},
		{"data segment count past the section", module(sec(11, 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0)), fuel.ErrMalformed},
		{"data segment flags", module(sec(11, 1, 3, 0)), fuel.ErrMalformed},
		{"data offset reads the counter's index", module(sec(11, 1, 0, 0x23, 0, 0x0b, 0)), fuel.ErrExportExists},
		{"element vector past the section", module(sec(9, 1, 1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0)), fuel.ErrMalformed},
		{"element flags", module(sec(9, 1, 8)), fuel.ErrMalformed},
		{"element kind", module(sec(9, 1, 1, 5, 0)), fuel.ErrMalformed},
		{"table of a GC type", module(sec(4, 1, 0x6e, 0, 1)), fuel.ErrUnsupported},
		{"export kind unknown", module(sec(7, 1, 1, 'f', 9, 0)), fuel.ErrMalformed},
	} {
		_, err := fuel.Instrument(c.wasm, fuel.Options{})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	// Small well-formed inputs are accepted, and stay valid.
	rt := newRuntime(t, nil)
	for name, wasm := range map[string][]byte{
		"empty module":   module(),
		"empty function": oneFunc(0, 0x0b),
		"50000 locals":   oneFunc(2, 0xcf, 0x86, 0x03, 0x7f, 0x01, 0x7e, 0x0b),
		"all element encodings": module(
			sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(4, 1, 0x70, 0, 4),
			sec(9, 8,
				0, 0x41, 0, 0x0b, 1, 0, // active, table 0, funcidx
				1, 0, 1, 0, // passive, elemkind, funcidx
				2, 0, 0x41, 1, 0x0b, 0, 1, 0, // active, explicit table, elemkind
				3, 0, 1, 0, // declarative
				4, 0x41, 2, 0x0b, 1, 0xd2, 0, 0x0b, // active, exprs
				5, 0x70, 1, 0xd0, 0x70, 0x0b, // passive, reftype, exprs
				6, 0, 0x41, 3, 0x0b, 0x70, 1, 0xd2, 0, 0x0b, // active, explicit table, exprs
				7, 0x70, 1, 0xd2, 0, 0x0b), // declarative exprs
			sec(10, 1, 2, 0, 0x0b)),
		"i64.const min":       oneFunc(0, 0x42, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f, 0x1a, 0x0b),
		"i32.const -1 padded": oneFunc(0, 0x41, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x1a, 0x0b),
	} {
		out, err := fuel.Instrument(wasm, fuel.Options{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, m := range [][]byte{wasm, out} {
			if err := compile(context.Background(), rt, m); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// sectionEnds returns the offsets at which a module's sections end: the
// only prefixes of a module that can still be well formed.
func sectionEnds(t *testing.T, wasm []byte) map[int]bool {
	ends := map[int]bool{8: true}
	for off := 8; off < len(wasm); {
		off++ // id
		size, shift := 0, 0
		for {
			c := wasm[off]
			off++
			size |= int(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				break
			}
		}
		off += size
		ends[off] = true
	}
	return ends
}

// TestTruncatedInputs cuts every fixture at every length: each cut inside
// a section is an ErrMalformed error, and none panics.
func TestTruncatedInputs(t *testing.T) {
	for _, name := range []string{"loops", "imports", "multivalue", "features", "bulk", "exits", "start"} {
		wasm := watFile(t, name)
		ends := sectionEnds(t, wasm)
		for n := 0; n < len(wasm); n++ {
			_, err := fuel.Instrument(wasm[:n], fuel.Options{})
			if !ends[n] && !errors.Is(err, fuel.ErrMalformed) {
				t.Errorf("%s cut at %d of %d: got %v, want %v", name, n, len(wasm), err, fuel.ErrMalformed)
			}
		}
	}
}
