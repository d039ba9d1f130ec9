package plan

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// The planner is pure (architecture.md: "no goroutines, no I/O, no
// clock"): these tests hold the rule the way Go's own deps_test does.

// forbiddenDirect may not be imported by the planner's own files.
var forbiddenDirect = []string{"os", "os/exec", "io/fs", "net", "syscall", "time", "math/rand", "math/rand/v2",
	"unsafe", "sync", "github.com/tetratelabs/wazero"}

// forbiddenDeps may not be reached through any import, by either package.
var forbiddenDeps = []string{"net", "github.com/tetratelabs/wazero",
	"github.com/sluicehq/sluice/host/runtime", "github.com/sluicehq/sluice/host/plugin"}

func TestPlannerImportsAndGoroutines(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbiddenDirect {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s: the planner does no I/O, reads no clock and starts no goroutine", file, path)
				}
			}
		}
		full, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(full, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s: go statement: the planner starts no goroutine", fset.Position(g.Pos()))
			}
			return true
		})
		checked++
	}
	if checked < 5 {
		t.Fatalf("checked only %d files", checked)
	}
}

// TestImportClosure: neither the planner nor the pipeline parser reaches
// wazero, the network or the engine, even indirectly.
func TestImportClosure(t *testing.T) {
	for _, pkg := range []string{"./host/plan", "./host/pipeline"} {
		deps := goListDeps(t, pkg)
		if len(deps) < 5 {
			t.Fatalf("%s: go list found %d deps", pkg, len(deps))
		}
		for _, d := range deps {
			for _, bad := range forbiddenDeps {
				if d == bad || strings.HasPrefix(d, bad+"/") {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
}

func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}", pkg)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}
