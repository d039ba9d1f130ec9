package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"strings"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/vmihailenco/msgpack/v5"
)

// Info describes a plugin module: what `host plugin inspect` prints.
type Info struct {
	Name       string
	Path       string // empty when loaded from bytes
	Size       int    // bytes
	SHA256     string // hex
	ABIVersion int    // from the marker export; 0 when there is none
	Kind       abi.Kind
	// KindFrom says where Kind comes from: "sluice_describe", or
	// "exports" when it is inferred (sluice_partition: partitioner;
	// otherwise process, the most general operator); StaticInfo of a
	// module with neither export says Kind "unknown", from "exports:
	// neither ...".
	KindFrom string
	SDK      string   // from sluice_describe
	Title    string   // the "name" sluice_describe reports
	Outputs  []string // side-output tags from sluice_describe
	Keyed    bool     // sluice_describe says the operator uses keyed state
	// State is the state slots sluice_describe declares (abi.Describe
	// "state"): their kinds and TTLs
	State   []runtime.SlotSpec
	Exports []Export
	Imports []Import
	Memory  Memory
}

// Export is one export of the module.
type Export struct {
	Name      string
	Kind      string // function, memory, table, global, tag
	Signature string // for functions: "(i32, i32) -> i32"
}

// Import is one import of the module.
type Import struct {
	Module, Name string
	Kind         string
	Signature    string
}

// Memory is the module's first memory, in 64 KiB pages.
type Memory struct {
	Min, Max uint64
	HasMax   bool
	Imported bool
}

// Info returns what the module declares, without running it: Kind is
// inferred from the exports.
func (m *Module) Info() Info {
	w := m.bin
	info := Info{
		Name: m.name, Path: m.path, Size: m.size, SHA256: hex.EncodeToString(m.sum[:]),
		ABIVersion: abiVersion(w), Kind: abi.KindProcess, KindFrom: "exports",
	}
	_, hasProcess := w.export(abi.ExportProcess)
	if _, ok := w.export(abi.ExportPartition); ok && !hasProcess {
		info.Kind = abi.KindPartitioner
	}
	for _, e := range w.exports {
		x := Export{Name: e.name, Kind: extName(e.kind)}
		if e.kind == extFunc {
			if t, ok := w.funcSig(e.index); ok {
				x.Signature = t.String()
			}
		}
		info.Exports = append(info.Exports, x)
	}
	for _, im := range w.imports {
		x := Import{Module: im.module, Name: im.name, Kind: extName(im.kind)}
		if im.kind == extFunc {
			x.Signature = im.typ.String()
		}
		info.Imports = append(info.Imports, x)
	}
	if len(w.memories) > 0 {
		l := w.memories[0]
		info.Memory = Memory{Min: l.min, Max: l.max, HasMax: l.hasMax, Imported: l.imported}
	}
	return info
}

// StaticInfo describes the module bin from its sections alone, without
// checking it against the ABI or compiling it: what `host plugin inspect`
// still shows of a module that does not load, so that its author sees
// what is there. ok is false when bin is not a wasm module it can read.
func StaticInfo(name, path string, bin []byte) (info Info, ok bool) {
	w, _, err := parseWasm(bin)
	if err != nil {
		return Info{}, false
	}
	m := &Module{name: name, path: path, size: len(bin), sum: sha256.Sum256(bin), bin: w}
	info = m.Info()
	_, process := w.export(abi.ExportProcess)
	_, partition := w.export(abi.ExportPartition)
	if !process && !partition { // nothing to infer a kind from
		info.Kind, info.KindFrom = "unknown", "exports: neither "+abi.ExportProcess+" nor "+abi.ExportPartition
	}
	return info, true
}

// Inspect returns Info with the plugin's own description when it exports
// sluice_describe: it makes an instance, calls describe (before open, as
// the ABI allows) and closes the instance.
func (m *Module) Inspect(ctx context.Context) (Info, error) {
	info := m.Info()
	if _, ok := m.bin.export(abi.ExportDescribe); !ok {
		return info, nil
	}
	in, err := m.instantiate(ctx, target{}, env{})
	if err != nil {
		return info, err
	}
	defer in.close()
	if st, err := in.invoke(expDescribe, outValues); err != nil {
		if st == abi.StatusUnsupported && in.c.refusal == nil {
			return info, nil // describe is optional: "not implemented" describes nothing
		}
		return info, err
	}
	fail := func(format string, args ...any) error {
		return in.fail(abi.ExportDescribe, fmt.Errorf("%w: "+format, append([]any{ErrMalformedOutput}, args...)...))
	}
	if in.c.count != 1 {
		return info, fail("emitted %d values, want one map", in.c.count)
	}
	var d struct {
		Kind    string   `msgpack:"kind"`
		SDK     string   `msgpack:"sdk"`
		Name    string   `msgpack:"name"`
		Outputs []string `msgpack:"outputs"`
		Keyed   bool     `msgpack:"keyed"`
		State   []struct {
			Slot   *int   `msgpack:"slot"`
			Kind   string `msgpack:"kind"`
			TTLms  int64  `msgpack:"ttl-ms"`
			Update string `msgpack:"update"`
		} `msgpack:"state"`
	}
	if abi.TypeOf(in.c.out) != abi.TypeMap {
		return info, fail("emitted a msgpack %s, want a map", abi.TypeOf(in.c.out))
	}
	if err := msgpack.Unmarshal(in.c.out, &d); err != nil {
		return info, fail("%v", err)
	}
	if d.Kind != "" {
		if !abi.Kind(d.Kind).Known() {
			// quoted (a guest's text), and no suggestion built from it
			return info, fail("kind %s is not a plugin kind: describe must name one of %s", quoteCapped(d.Kind), kindList())
		}
		info.Kind, info.KindFrom = abi.Kind(d.Kind), abi.ExportDescribe
	}
	info.SDK, info.Title, info.Outputs, info.Keyed = d.SDK, d.Name, d.Outputs, d.Keyed
	for i, sd := range d.State {
		if sd.Slot == nil {
			return info, fail("state[%d] has no slot", i)
		}
		sp := runtime.SlotSpec{Slot: *sd.Slot, TTL: time.Duration(sd.TTLms) * time.Millisecond}
		var err error
		if sd.Kind != "" {
			if sp.Kind, err = runtime.ParseStateKind(sd.Kind); err != nil {
				return info, fail("state[%d] (slot %d): %v", i, sp.Slot, err)
			}
		}
		if sp.Update, err = runtime.ParseTTLUpdate(sd.Update); err != nil {
			return info, fail("state[%d] (slot %d): %v", i, sp.Slot, err)
		}
		if sd.TTLms < 0 || sp.Slot < 0 || sp.Slot >= abi.MaxStateSlots {
			return info, fail("state[%d]: slot %d (0 to %d) or ttl-ms %d (> 0) out of range", i, sp.Slot, abi.MaxStateSlots-1, sd.TTLms)
		}
		info.State = append(info.State, sp)
	}
	return info, nil
}

// kindList is "map, filter, ..., key-selector".
func kindList() string {
	names := make([]string, len(abi.Kinds))
	for i, k := range abi.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}
