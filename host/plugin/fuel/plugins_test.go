package fuel_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/plugin/fuel"
)

// TestRepositoryPlugins instruments the modules built into plugins/ when
// they exist: Go modules must instrument; Rust and C modules must also
// compile with the same exports plus the counter.
func TestRepositoryPlugins(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "plugins", "*", "*.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no plugin modules built under plugins/: run make plugins first (make test does)")
	}
	ctx := context.Background()
	rt := newRuntime(t, nil)
	for _, p := range paths {
		wasm := readFile(t, p)
		out, err := fuel.Instrument(wasm, fuel.Options{})
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !strings.HasSuffix(p, "-rust.wasm") && !strings.HasSuffix(p, "-c.wasm") {
			continue // Go: TestGoReactor compiles one; compiling all would take seconds each
		}
		orig, err := rt.CompileModule(ctx, wasm)
		if err != nil {
			t.Errorf("%s: original does not compile: %v", p, err)
			continue
		}
		cm, err := rt.CompileModule(ctx, out)
		if err != nil {
			t.Errorf("%s: instrumented module does not compile: %v", p, err)
			continue
		}
		for name := range orig.ExportedFunctions() {
			if _, ok := cm.ExportedFunctions()[name]; !ok {
				t.Errorf("%s: export %s lost", p, name)
			}
		}
		if len(cm.ExportedFunctions()) != len(orig.ExportedFunctions()) {
			t.Errorf("%s: %d exported functions, had %d", p, len(cm.ExportedFunctions()), len(orig.ExportedFunctions()))
		}
		t.Logf("%s: %d -> %d bytes", filepath.Base(p), len(wasm), len(out))
	}
}
