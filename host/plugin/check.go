package plugin

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/abi"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// The signatures ABI v1 gives every guest export and host import (see the
// doc comments of the constants in package abi).
var (
	exportSigs = map[string]funcType{
		abi.MarkerExport:         sig(0, 0),
		abi.ExportBuffer:         sig(1, 1),
		abi.ExportOpen:           sig(5, 1),
		abi.ExportProcess:        sig(4, 1),
		abi.ExportProcessIndexed: sig(6, 1),
		abi.ExportClose:          sig(0, 1),
		abi.ExportPartition:      sig(4, 1),
		abi.ExportDescribe:       sig(0, 1),
		abi.ExportInitialize:     sig(0, 0),
		abi.ExportSnapshot:       sig(0, 1),
		abi.ExportRestore:        sig(2, 1),
		abi.ExportOnTimer:        {params: []valType{valI32, valI64, valI32, valI32}, results: []valType{valI32}},
	}
	importSigs = map[string]funcType{
		abi.ImportEmit:     sig(4, 1),
		abi.ImportEmitEnds: sig(5, 1),
		abi.ImportPort:     sig(2, 1),
		abi.ImportError:    sig(2, 0),
		abi.ImportStateGet: sig(5, 1),
		abi.ImportStatePut: sig(5, 1),
		abi.ImportStateDel: sig(3, 1),
		// optional: list and map state (state_kinds.go)
		abi.ImportStateListGet:     sig(5, 1),
		abi.ImportStateListAppend:  sig(5, 1),
		abi.ImportStateListUpdate:  sig(5, 1),
		abi.ImportStateMapGet:      sig(7, 1),
		abi.ImportStateMapPut:      sig(7, 1),
		abi.ImportStateMapDel:      sig(5, 1),
		abi.ImportStateMapContains: sig(5, 1),
		abi.ImportStateMapEntries:  sig(5, 1),
		abi.ImportStateClear:       sig(3, 1),
		// optional: timers (timers.go)
		abi.ImportTimerRegister:         {params: []valType{valI32, valI32, valI32, valI64}, results: []valType{valI32}},
		abi.ImportTimerDelete:           {params: []valType{valI32, valI32, valI32, valI64}, results: []valType{valI32}},
		abi.ImportCurrentWatermark:      {results: []valType{valI64}},
		abi.ImportCurrentProcessingTime: {results: []valType{valI64}},
	}
)

// wasiModule is the only import module besides abi.ImportModule.
const wasiModule = "wasi_snapshot_preview1"

var (
	wasiOnce sync.Once
	wasiSigs map[string]funcType
	wasiErr  error
)

// wasiSignatures are the host's WASI functions, read once per process from
// a throw-away interpreter runtime (no plugin is compiled): Load checks a
// module's WASI imports against them before WASI is instantiated (useWASI),
// and CheckFile without a Host.
func wasiSignatures() (map[string]funcType, error) {
	wasiOnce.Do(func() {
		ctx := context.Background()
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
		defer rt.Close(ctx)
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
			wasiErr = fmt.Errorf("read the host's WASI signatures: %w", err)
			return
		}
		wasiSigs = map[string]funcType{}
		for name, def := range rt.Module(wasiModule).ExportedFunctionDefinitions() {
			wasiSigs[name] = funcType{params: apiTypes(def.ParamTypes()), results: apiTypes(def.ResultTypes())}
		}
	})
	return wasiSigs, wasiErr
}

// sig builds a signature of i32 parameters and results.
func sig(params, results int) funcType {
	t := funcType{params: make([]valType, params), results: make([]valType, results)}
	for i := range t.params {
		t.params[i] = valI32
	}
	for i := range t.results {
		t.results[i] = valI32
	}
	return t
}

// check lists every way the module fails ABI v1 under the host's limits,
// in a stable order. wasi maps the names of the host's WASI functions to
// their signatures.
func check(w *wasmBinary, memoryLimitPages uint32, wasi map[string]funcType) []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }

	// The version marker.
	if _, ok := w.export(abi.MarkerExport); !ok {
		if v, name := otherMarker(w); name != "" {
			add("built for ABI v%s (it exports %s), but this host speaks ABI v%d (marker %s)", v, name, abi.Version, abi.MarkerExport)
		} else {
			hint := fmt.Sprintf("it was not built with a sluice ABI v%d SDK", abi.Version)
			if !sluiceExports(w) {
				hint += ", or it is not registered (Go: import the SDK and register an operator in init; Rust: sluice::filter!(...) " +
					"or the like; C: SLUICE_OPERATOR(plugin); AssemblyScript: export * from the SDK's assembly/operator)"
			}
			add("missing the ABI marker export %s %s: %s", abi.MarkerExport, exportSigs[abi.MarkerExport], hint)
		}
	}

	// Required and optional exports, with their signatures.
	required := []string{abi.MarkerExport, abi.ExportBuffer, abi.ExportOpen}
	_, hasProcess := w.export(abi.ExportProcess)
	_, hasPartition := w.export(abi.ExportPartition)
	if !hasProcess && !hasPartition {
		add("missing export %s %s (or %s %s for a partitioner)", abi.ExportProcess, exportSigs[abi.ExportProcess], abi.ExportPartition, exportSigs[abi.ExportPartition])
	}
	for _, name := range required[1:] {
		if _, ok := w.export(name); !ok {
			add("missing export %s %s", name, exportSigs[name])
		}
	}
	for _, e := range w.exports {
		want, known := exportSigs[e.name]
		if !known {
			continue
		}
		if e.kind != extFunc {
			add("export %s is a %s; ABI v%d requires a function %s", e.name, extName(e.kind), abi.Version, want)
			continue
		}
		if got, ok := w.funcSig(e.index); ok && !got.equal(want) {
			add("export %s has signature %s; ABI v%d requires %s", e.name, got, abi.Version, want)
		}
	}
	_, hasSnapshot := w.export(abi.ExportSnapshot)
	_, hasRestore := w.export(abi.ExportRestore)
	if hasSnapshot != hasRestore {
		have, missing := abi.ExportSnapshot, abi.ExportRestore
		if hasRestore {
			have, missing = missing, have
		}
		add("exports %s without %s %s: operator state needs both (one writes it into a checkpoint, the other reads it back)", have, missing, exportSigs[missing])
	}
	if w.importsHost(abi.ImportTimerRegister) {
		if _, ok := w.export(abi.ExportOnTimer); !ok {
			add("imports %s.%s but does not export %s %s: the host calls it back when a timer fires (Go: sdk.KeyedProcess(fn).OnTimer(onTimer))",
				abi.ImportModule, abi.ImportTimerRegister, abi.ExportOnTimer, exportSigs[abi.ExportOnTimer])
		}
	}
	if _, ok := w.export(abi.ExportStart); ok {
		add("exports %s, so it is a WASI command, not a reactor: build it as a library (Go: -buildmode=c-shared; C: -mexec-model=reactor)", abi.ExportStart)
	}

	// Imports: only the host's functions.
	for _, im := range w.imports {
		full := im.module + "." + im.name
		if im.kind != extFunc {
			add("imports %s %s; a plugin may import only functions (it must define its own memory)", extName(im.kind), full)
			continue
		}
		switch {
		case im.module == abi.ImportModule:
			want, ok := importSigs[im.name]
			if !ok {
				add("imports %s, which ABI v%d does not define", full, abi.Version)
			} else if !im.typ.equal(want) {
				add("imports %s as %s; ABI v%d defines it as %s", full, im.typ, abi.Version, want)
			}
		case im.module == wasiModule:
			want, ok := wasi[im.name]
			if !ok {
				add("imports %s, which the host's WASI does not provide", full)
			} else if !im.typ.equal(want) {
				add("imports %s as %s; WASI defines it as %s", full, im.typ, want)
			}
		case strings.HasPrefix(im.module, "sluice_v"):
			add("imports %s: built for ABI v%s, but this host provides module %s (ABI v%d)", full, strings.TrimPrefix(im.module, "sluice_v"), abi.ImportModule, abi.Version)
		case im.module == "env" && im.name == "abort":
			// AssemblyScript's default abort handler
			add("imports env.abort, which this host does not provide: an AssemblyScript plugin is built with --use abort=<sdk>/assembly/abort/sluiceAbort (sdk/assemblyscript/README.md)")
		default:
			add("imports %s, which this host does not provide (plugins may import only from %s and %s)", full, abi.ImportModule, wasiModule)
		}
	}

	// Memory.
	if len(w.memories) == 0 {
		add("defines no memory; the host exchanges records through the plugin's linear memory")
	} else if e, ok := w.export("memory"); !ok {
		add("does not export its memory as \"memory\" (ABI v%d: the host writes records into it and reads what the plugin emits)", abi.Version)
	} else if e.kind != extMemory {
		add("exports a %s named \"memory\"; ABI v%d requires its linear memory under that name", extName(e.kind), abi.Version)
	}
	for i, m := range w.memories {
		if m.mem64 {
			add("memory %d is a 64-bit memory, which ABI v%d does not support", i, abi.Version)
			continue
		}
		if m.min > uint64(memoryLimitPages) {
			add("declares %s of initial memory, above the host's limit of %s", pagesText(m.min), pagesText(uint64(memoryLimitPages)))
		}
	}
	return p
}

// otherMarker finds the marker of another ABI version: its version and name.
func otherMarker(w *wasmBinary) (version, name string) {
	for _, e := range w.exports {
		if v, ok := strings.CutPrefix(e.name, abi.MarkerPrefix); ok && e.name != abi.MarkerExport {
			if _, err := strconv.Atoi(v); err == nil {
				return v, e.name
			}
		}
	}
	return "", ""
}

// abiVersion is the version the module's marker declares, 0 when none.
func abiVersion(w *wasmBinary) int {
	if _, ok := w.export(abi.MarkerExport); ok {
		return abi.Version
	}
	v, _ := otherMarker(w)
	n, _ := strconv.Atoi(v)
	return n
}

// sluiceExports reports whether w exports any sluice_ function of the ABI.
func sluiceExports(w *wasmBinary) bool {
	for _, e := range w.exports {
		if _, ok := exportSigs[e.name]; ok && strings.HasPrefix(e.name, "sluice_") {
			return true
		}
	}
	return false
}

// importsHost reports whether w imports the host function name (module
// abi.ImportModule).
func (w *wasmBinary) importsHost(name string) bool {
	for _, im := range w.imports {
		if im.module == abi.ImportModule && im.name == name {
			return true
		}
	}
	return false
}
