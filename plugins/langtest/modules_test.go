package langtest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The plugins every language implements, and the languages besides Go.
var (
	pluginNames = []string{"valid", "double", "enrich", "split", "country"}
	languages   = []string{"c", "rust", "as"}
)

// module is what the checks need from a wasm binary.
type module struct {
	imports  []string // "module.name"
	exports  map[string]byte
	memMin   uint64 // pages of the first memory (defined or imported)
	size     int
	hasStart bool
}

// parseModule reads the import, memory, export and start sections of a
// wasm binary (https://webassembly.github.io/spec/core/binary/).
func parseModule(b []byte) (*module, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" || string(b[4:8]) != "\x01\x00\x00\x00" {
		return nil, errors.New("not a wasm module (version 1)")
	}
	m := &module{exports: map[string]byte{}, size: len(b)}
	r := &reader{b: b, off: 8}
	for r.off < len(b) && r.err == nil {
		id := r.byte()
		size := int(r.u32())
		end := r.off + size
		if r.err != nil || end > len(b) {
			return nil, errors.New("truncated section")
		}
		s := &reader{b: b[:end], off: r.off}
		switch id {
		case 2: // imports
			for n := s.u32(); n > 0 && s.err == nil; n-- {
				mod, name := s.name(), s.name()
				m.imports = append(m.imports, mod+"."+name)
				switch s.byte() {
				case 0: // func: type index
					s.u32()
				case 1: // table: reftype, limits
					s.byte()
					s.limits()
				case 2: // memory
					min := s.limits()
					if m.memMin == 0 {
						m.memMin = min
					}
				case 3: // global: valtype, mutability
					s.byte()
					s.byte()
				}
			}
		case 5: // memories
			if s.u32() > 0 {
				m.memMin = s.limits()
			}
		case 7: // exports
			for n := s.u32(); n > 0 && s.err == nil; n-- {
				name := s.name()
				m.exports[name] = s.byte()
				s.u32()
			}
		case 8:
			m.hasStart = true
		}
		if s.err != nil {
			return nil, s.err
		}
		r.off = end
	}
	return m, r.err
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) byte() byte {
	if r.off >= len(r.b) {
		r.err = errors.New("truncated module")
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *reader) u32() uint32 { // unsigned LEB128
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return uint32(v)
		}
	}
	r.err = errors.New("bad LEB128")
	return 0
}

func (r *reader) name() string {
	n := int(r.u32())
	if r.err != nil || r.off+n > len(r.b) {
		r.err = errors.New("truncated name")
		return ""
	}
	r.off += n
	return string(r.b[r.off-n : r.off])
}

func (r *reader) limits() uint64 {
	flags := r.byte()
	min := uint64(r.u32())
	if flags&1 != 0 {
		r.u32()
	}
	return min
}

// modulePath is where scripts/build-plugins.sh writes a plugin's module;
// lang "go" is the Go plugin (make plugins).
func modulePath(root, name, lang string) string {
	if lang == "go" {
		return filepath.Join(root, "plugins", name, name+".wasm")
	}
	return filepath.Join(root, "plugins", name, name+"-"+lang+".wasm")
}

// readModule reads a built module, skipping the test (failing it when
// SLUICE_REQUIRE_LANGS is set) when it has not been built.
func readModule(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		msg := path + " is not built: run `make plugins` (with plugins.mk) or scripts/build-plugins.sh"
		if os.Getenv("SLUICE_REQUIRE_LANGS") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestModulesExportTheABI checks every language's modules: the ABI v1
// marker and exports, imports from sluice_v1 only (C may add
// wasi_snapshot_preview1), and a small memory.
func TestModulesExportTheABI(t *testing.T) {
	root := repoRoot(t)
	type target struct{ name, lang, path string }
	var targets []target
	for _, name := range pluginNames {
		for _, lang := range languages {
			targets = append(targets, target{name, lang, modulePath(root, name, lang)})
		}
	}
	targets = append(targets, target{"identity", "wat", filepath.Join(root, "plugins/wat/identity.wasm")})
	for _, tg := range targets {
		t.Run(tg.name+"-"+tg.lang, func(t *testing.T) {
			m, err := parseModule(readModule(t, tg.path))
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"sluice_abi_v1", "sluice_buffer", "sluice_open", "sluice_describe", "memory"}
			if tg.name == "country" {
				want = append(want, "sluice_partition")
				if _, ok := m.exports["sluice_process"]; ok {
					t.Error("a partitioner exports sluice_process")
				}
			} else {
				want = append(want, "sluice_process", "sluice_close")
			}
			for _, e := range want {
				if _, ok := m.exports[e]; !ok {
					t.Errorf("missing export %s", e)
				}
			}
			if _, ok := m.exports["_start"]; ok {
				t.Error("exports _start: a command, not a reactor")
			}
			for _, imp := range m.imports {
				ok := strings.HasPrefix(imp, "sluice_v1.") ||
					(tg.lang == "c" && strings.HasPrefix(imp, "wasi_snapshot_preview1."))
				if !ok {
					t.Errorf("import %s: only sluice_v1.* (and, for C, wasi_snapshot_preview1.*) are allowed", imp)
				}
			}
			if m.memMin > 16 {
				t.Errorf("memory starts at %d pages: more than 1 MiB per instance", m.memMin)
			}
			t.Logf("%d bytes, memory min %d page(s), imports %v", m.size, m.memMin, m.imports)
		})
	}
}
