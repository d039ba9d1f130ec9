package plugin_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
)

const (
	modulePath = "github.com/sluicehq/sluice"
	wazeroPath = "github.com/tetratelabs/wazero"
)

// wazeroTests are the packages whose tests, and only their tests, may
// import wazero besides host/plugin: fuel's tests compile and run the
// modules the rewriter writes (that they validate, spend what they should
// and trap where they should), which only a runtime can tell.
var wazeroTests = []string{modulePath + "/host/plugin/fuel"}

// standalone are the packages that import the standard library only (and
// each other): the fuel rewriter and the binary reader it stands on.
var standalone = []string{modulePath + "/host/plugin/fuel", modulePath + "/internal/wasmbin"}

// TestOnlyPluginImportsWazero walks every package of the module (go list
// ./...) and holds the boundary: host/plugin is the only package that
// imports wazero; among the others only the tests of wazeroTests do, and
// the packages of standalone import nothing outside the standard library.
func TestOnlyPluginImportsWazero(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(goruntime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(gobin, "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	isWazero := func(p string) bool { return p == wazeroPath || strings.HasPrefix(p, wazeroPath+"/") }
	var pkgs, importers []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			t.Fatalf("go list printed %q", sc.Text())
		}
		pkg, imports, tests := f[0], strings.Fields(f[1]), strings.Fields(f[2])
		pkgs = append(pkgs, pkg)
		for _, imp := range imports {
			if isWazero(imp) {
				importers = append(importers, pkg)
				if pkg != modulePath+"/host/plugin" {
					t.Errorf("%s imports %s: only host/plugin, the wazero boundary, may (docs/layout.md)", pkg, imp)
				}
			}
			if slices.Contains(standalone, pkg) && strings.Contains(strings.Split(imp, "/")[0], ".") && !slices.Contains(standalone, imp) {
				t.Errorf("%s imports %s: it stands on the standard library alone", pkg, imp)
			}
		}
		for _, imp := range tests {
			if isWazero(imp) && pkg != modulePath+"/host/plugin" && !slices.Contains(wazeroTests, pkg) {
				t.Errorf("the tests of %s import %s: test through host/plugin's API (or add the package to wazeroTests, saying why)", pkg, imp)
			}
		}
	}
	// the walk must have seen the module, and the boundary itself
	if len(pkgs) < 20 || !slices.Contains(importers, modulePath+"/host/plugin") {
		t.Fatalf("go list found %d packages, wazero imported by %v: the walk does not see the module", len(pkgs), importers)
	}
	for _, p := range append(slices.Clone(wazeroTests), standalone...) {
		if !slices.Contains(pkgs, p) {
			t.Errorf("%s is not a package of the module any more: update this test", p)
		}
	}
}
