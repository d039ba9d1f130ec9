package pebblestate_test

import (
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// TestOnlyPebblestateImportsPebble walks every package of the module (go
// list ./...): host/state/pebblestate is the only one whose code or tests
// import Pebble; the engine reaches it through runtime.StateBackends.
func TestOnlyPebblestateImportsPebble(t *testing.T) {
	const module, pebble = "github.com/sluicehq/sluice", "github.com/cockroachdb/pebble"
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(goruntime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(gobin, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	cmd.Dir = filepath.Join("..", "..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	seen := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if imp != pebble && !strings.HasPrefix(imp, pebble+"/") {
				continue
			}
			if f[0] == module+"/host/state/pebblestate" {
				seen = true
				continue
			}
			t.Errorf("%s imports %s: only host/state/pebblestate may (the engine opens it through runtime.StateBackends)", f[0], imp)
		}
	}
	if !seen {
		t.Fatal("the walk did not see host/state/pebblestate import Pebble")
	}
}
