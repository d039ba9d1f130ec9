package sdktest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

// Exported ABI v1 functions and their signatures, from package abi.
var abiExports = map[string]funcSig{
	abi.MarkerExport:         {0, 0, true},
	abi.ExportBuffer:         {1, 1, true},
	abi.ExportOpen:           {5, 1, true},
	abi.ExportProcess:        {4, 1, true},
	abi.ExportProcessIndexed: {6, 1, true},
	abi.ExportPartition:      {4, 1, true},
	abi.ExportClose:          {0, 1, true},
	abi.ExportDescribe:       {0, 1, true},
	abi.ExportInitialize:     {0, 0, true},
	abi.ExportSnapshot:       {0, 1, true},
	abi.ExportRestore:        {2, 1, true},
}

// Host functions of ABI v1 and their signatures, from package abi.
var abiImports = map[string]funcSig{
	abi.ImportEmit:     {4, 1, true},
	abi.ImportEmitEnds: {5, 1, true},
	abi.ImportPort:     {2, 1, true},
	abi.ImportError:    {2, 0, true},
	abi.ImportStateGet: {5, 1, true},
	abi.ImportStatePut: {5, 1, true},
	abi.ImportStateDel: {3, 1, true},
	// optional: list and map state
	abi.ImportStateListGet:     {5, 1, true},
	abi.ImportStateListAppend:  {5, 1, true},
	abi.ImportStateListUpdate:  {5, 1, true},
	abi.ImportStateMapGet:      {7, 1, true},
	abi.ImportStateMapPut:      {7, 1, true},
	abi.ImportStateMapDel:      {5, 1, true},
	abi.ImportStateMapContains: {5, 1, true},
	abi.ImportStateMapEntries:  {5, 1, true},
	abi.ImportStateClear:       {3, 1, true},
	// optional: timers, with an i64 (the model here counts i32 only)
	abi.ImportTimerRegister:         {4, 1, false},
	abi.ImportTimerDelete:           {4, 1, false},
	abi.ImportCurrentWatermark:      {0, 1, false},
	abi.ImportCurrentProcessingTime: {0, 1, false},
}

// CheckModule builds the plugin in the package directory dir as a wasm
// module (GOOS=wasip1 GOARCH=wasm, -buildmode=c-shared, as make plugins
// does) and checks it against ABI v1: every export the Go SDK provides,
// with its signature, _initialize and no _start, and imports only from
// the sluice_v1 and wasi_snapshot_preview1 modules, sluice_v1 ones with
// the right signatures. It returns the module's bytes. Skipped with
// -short, since building takes a second or two.
func CheckModule(t testing.TB, dir string) []byte {
	t.Helper()
	if testing.Short() {
		t.Skip("sdktest.CheckModule builds a wasm module: skipped with -short")
	}
	out := filepath.Join(t.TempDir(), "plugin.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sdktest: building %s for wasip1: %v\n%s", dir, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseWasm(b)
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	if problems := checkABI(m); len(problems) > 0 {
		t.Fatalf("sdktest: %s is not an ABI v1 module:\n\t%s", dir, strings.Join(problems, "\n\t"))
	}
	return b
}

// checkABI lists what is missing or different in m.
func checkABI(m *wasmModule) []string {
	var problems []string
	for name, want := range abiExports {
		if got, ok := m.exports[name]; !ok {
			problems = append(problems, "missing export "+name)
		} else if got != want {
			problems = append(problems, "export "+name+" is "+got.String()+", want "+want.String())
		}
	}
	if _, ok := m.exports[abi.ExportStart]; ok {
		problems = append(problems, "exports _start: a command, not a reactor (build with -buildmode=c-shared)")
	}
	for full, got := range m.imports {
		mod, name, _ := strings.Cut(full, ".")
		switch mod {
		case "wasi_snapshot_preview1":
		case abi.ImportModule:
			if want, ok := abiImports[name]; !ok {
				problems = append(problems, "unknown host function "+full)
			} else if got != want {
				problems = append(problems, "import "+full+" is "+got.String()+", want "+want.String())
			}
		default:
			problems = append(problems, "import from module "+mod+" ("+full+")")
		}
	}
	sort.Strings(problems)
	return problems
}
