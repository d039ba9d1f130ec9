package cluster

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The cluster planner and its state machines are pure (no goroutines, no
// I/O, no clock), like host/plan: the driver that talks to Kafka will
// live elsewhere and feed them events.
var forbidden = []string{"os", "os/exec", "io/fs", "net", "syscall", "time", "math/rand", "math/rand/v2",
	"unsafe", "sync", "context", "github.com/tetratelabs/wazero", "github.com/twmb/franz-go/pkg/kgo",
	"github.com/sluicehq/sluice/host/runtime", "github.com/sluicehq/sluice/host/connector/kafka"}

func TestPureImportsAndNoGoroutines(t *testing.T) {
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
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if p == bad {
					t.Errorf("%s imports %s: the cluster planner is pure", file, p)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s: a go statement: the state machines start no goroutine", fset.Position(g.Pos()))
			}
			return true
		})
	}
	if checked < 5 {
		t.Fatalf("checked %d files", checked)
	}
}
