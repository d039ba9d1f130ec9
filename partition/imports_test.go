package partition

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestImportsOnlyStdlibAndABI holds partition's import rule
// (architecture.md): the strategies and their conformance kit depend on
// the standard library and abi only, even indirectly, so that anything
// (a guest SDK, another host) can use them without the host. It imported
// host/codec once, to print a key.
func TestImportsOnlyStdlibAndABI(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", "./partition/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./partition/...: %v", err)
	}
	allowed := func(p string) bool {
		return p == "github.com/sluicehq/sluice/abi" || p == "github.com/sluicehq/sluice/partition" ||
			strings.HasPrefix(p, "github.com/sluicehq/sluice/partition/")
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, _ := strings.Cut(line, " ")
		seen++
		if std != "true" && !allowed(path) {
			t.Errorf("partition depends on %s: it may import the standard library and abi only", path)
		}
	}
	if seen < 10 {
		t.Fatalf("go list found %d packages: %s", seen, out)
	}
}
