package fuel_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/fuel"
	"github.com/tetratelabs/wazero"
)

// TestRepositoryPlugins instruments the modules built into plugins/ when
// they exist, with and without the refuel import: Go modules must
// instrument; Rust and C modules must also compile with the same exports
// plus the counter.
func TestRepositoryPlugins(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "plugins", "*", "*.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no plugin modules built under plugins/: run make plugins first (make test does)")
	}
	rt := newRuntime(t, nil)
	for _, p := range paths {
		wasm := readFile(t, p)
		for _, refuel := range []bool{false, true} {
			checkPlugin(t, rt, p, wasm, fuel.Options{Refuel: refuel})
		}
	}
}

func checkPlugin(t *testing.T, rt wazero.Runtime, p string, wasm []byte, opts fuel.Options) {
	t.Helper()
	ctx := context.Background()
	out, err := fuel.Instrument(wasm, opts)
	if err != nil {
		t.Errorf("%s (Refuel %v): %v", p, opts.Refuel, err)
		return
	}
	if !strings.HasSuffix(p, "-rust.wasm") && !strings.HasSuffix(p, "-c.wasm") {
		return // Go: TestGoReactor compiles one; compiling all would take seconds each
	}
	orig, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Errorf("%s: original does not compile: %v", p, err)
		return
	}
	cm, err := rt.CompileModule(ctx, out)
	if err != nil {
		t.Errorf("%s (Refuel %v): instrumented module does not compile: %v", p, opts.Refuel, err)
		return
	}
	for name := range orig.ExportedFunctions() {
		if _, ok := cm.ExportedFunctions()[name]; !ok {
			t.Errorf("%s (Refuel %v): export %s lost", p, opts.Refuel, name)
		}
	}
	if len(cm.ExportedFunctions()) != len(orig.ExportedFunctions()) {
		t.Errorf("%s (Refuel %v): %d exported functions, had %d", p, opts.Refuel, len(cm.ExportedFunctions()), len(orig.ExportedFunctions()))
	}
	t.Logf("%s (Refuel %v): %d -> %d bytes", filepath.Base(p), opts.Refuel, len(wasm), len(out))
}
