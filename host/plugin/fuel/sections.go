package fuel

import (
	"math"
	"strings"

	"github.com/sluicehq/sluice/internal/wasmbin"
)

// Section ids (WebAssembly Core Specification 2.0, §5.5.2 "Sections").
const (
	secCustom   = wasmbin.SecCustom
	secType     = wasmbin.SecType
	secImport   = wasmbin.SecImport
	secFunction = wasmbin.SecFunction
	secTable    = wasmbin.SecTable
	secMemory   = wasmbin.SecMemory
	secGlobal   = wasmbin.SecGlobal
	secExport   = wasmbin.SecExport
	secStart    = wasmbin.SecStart
	secElement  = wasmbin.SecElement
	secCode     = wasmbin.SecCode
	secData     = wasmbin.SecData
)

// section is one section of the input; its payload aliases the input.
type section = wasmbin.Section

// dropCustom reports whether a custom section must go because it refers to
// byte offsets in the code section, which instrumentation moves: DWARF
// (.debug_*), source maps, relocations and linking data of object files,
// and code metadata such as branch hints. The "name" section holds indices
// only and survives if well formed, as do all others (producers,
// target_features, ...).
func dropCustom(s section) bool {
	name := s.Name
	switch {
	case name == "name":
		return !wasmbin.NameSectionWellFormed(s.Body)
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

// rewritten holds the payloads Instrument replaces, by section id; nil
// keeps the input's. A replaced section the input lacks is inserted where
// §5.5.16's order puts it. names, when set, rewrites the contents of the
// "name" custom section (after its name).
type rewritten struct {
	Payload [wasmbin.NumSections][]byte
	names   func(contents []byte) []byte
}

// assemble writes the output module: the input's sections in order with
// the payloads of out replaced, missing ones inserted in order, and
// offset-bearing custom sections dropped.
func assemble(sections []section, out rewritten) ([]byte, error) {
	size := len(wasmbin.Preamble) + 64
	for _, p := range out.Payload {
		size += len(p)
	}
	for _, s := range sections {
		size += len(s.Payload) + 6
	}
	dst := append(make([]byte, 0, size), wasmbin.Preamble...)
	var err error
	put := func(id byte, payload []byte) {
		if err == nil {
			dst, err = wasmbin.AppendSection(dst, id, payload)
		}
	}
	var done [wasmbin.NumSections]bool
	// insert writes the replaced sections that rank before rank and were
	// not written yet, in order.
	insert := func(rank uint8) {
		for _, id := range wasmbin.Order {
			if p := out.Payload[id]; p != nil && !done[id] && wasmbin.Rank[id] < rank {
				put(id, p)
				done[id] = true
			}
		}
	}
	for _, s := range sections {
		if s.ID == secCustom {
			switch {
			case dropCustom(s):
			case s.Name == "name" && out.names != nil:
				payload, _ := wasmbin.AppendVec(nil, []byte(s.Name))
				put(s.ID, append(payload, out.names(s.Body)...))
			default:
				put(s.ID, s.Payload)
			}
			continue
		}
		insert(wasmbin.Rank[s.ID])
		if p := out.Payload[s.ID]; p != nil {
			put(s.ID, p)
			done[s.ID] = true
		} else {
			put(s.ID, s.Payload)
		}
	}
	insert(math.MaxUint8)
	return dst, err
}
