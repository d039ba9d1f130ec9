package main

// The documents against the tree: every file they name exists, the map in
// docs/layout.md lists every Go package, and every test they name is one.

import (
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
)

// buildOutputs are the paths the documents may name that git does not
// hold, because make builds them (.gitignore keeps them out of git).
var buildOutputs = []struct{ pattern, why string }{
	{"bin", "make build writes the CLI there"},
	{"bin/host", "make build"},
	{"plugins/*/*.wasm", "make go-plugins (Go) and make plugins (C, Rust, AssemblyScript) build each example plugin next to its source"},
	{"plugins/wat/*.wasm", "make plugins-wat assembles each hand-written module"},
}

// foreignPaths look like paths of this repository but name another's,
// each with what it is.
var foreignPaths = map[string]string{
	"cmd/vet": "Go's own vet command, built for wasip1 as the largest real module the compile limits were measured on",
}

// pendingFiles are pages another branch writes: allowed while they do not
// exist, and an error once they do, so the entry goes when they land.
var pendingFiles = []struct{ path, why string }{}

// builtOrPending reports whether p is a build output (its source folder
// tracked) or a pending page.
func builtOrPending(p string, tr map[string]bool) bool {
	for _, b := range buildOutputs {
		if ok, _ := path.Match(b.pattern, p); ok && (p == "bin" || strings.HasPrefix(p, "bin/") || tr[path.Dir(p)]) {
			return true
		}
	}
	for _, f := range pendingFiles {
		if p == f.path {
			return true
		}
	}
	return false
}

// exists reports whether the repository holds p (slash-separated, from the
// root): a tracked file or folder, a build output, or a pending page. A p
// with wildcards or placeholders (<name>, NAME) must match one.
func exists(p string, tr map[string]bool) bool {
	p = strings.TrimSuffix(p, "/")
	pattern := placeholder.ReplaceAllString(p, "*")
	if !strings.ContainsAny(pattern, "*?[") {
		return tr[p] || builtOrPending(p, tr)
	}
	for f := range tr {
		if ok, _ := path.Match(pattern, f); ok {
			return true
		}
	}
	for _, b := range buildOutputs {
		if pattern == b.pattern {
			return true
		}
	}
	return false
}

var (
	// a path from the root: segments with a slash between, the first one
	// a top-level entry of the repository (checked by the caller)
	rootPath = regexp.MustCompile(`(?:^|[\s(\x60"'@=])((?:[A-Za-z0-9_.*<>-]+/)+[A-Za-z0-9_.*<>-]*)`)
	// a bare file name with a documentation or source extension
	bareName = regexp.MustCompile(`(?:^|[\s(\x60"'])([A-Za-z0-9_-]+\.(?:md|go|yaml|wat|sh|mk))(?:[^A-Za-z0-9_./-]|$)`)
	// a link's destination, blanked before the text is scanned
	linkDest = regexp.MustCompile(`\]\([^)]*\)`)
	testName = regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z0-9]\w*`)
)

// TestDocsPathsExist: every file a document names exists in the
// repository: link targets (from the document's folder, anchors
// included), paths from the root in its text and commands, and bare
// names of .md, .go, .yaml, .wat, .sh and .mk files.
func TestDocsPathsExist(t *testing.T) {
	atRoot(t)
	tr := tracked(t)
	top := map[string]bool{"bin": true}
	for f := range tr {
		if !strings.Contains(f, "/") {
			top[f] = true
		}
	}
	bases := map[string]bool{}
	for f := range tr {
		bases[path.Base(f)] = true
	}
	for _, d := range docs(t) {
		for _, b := range d.blocks {
			if name := blockName(b); name != "" {
				bases[name] = true
			}
		}
	}
	for _, p := range pendingFiles {
		if _, err := os.Stat(p.path); err == nil {
			t.Errorf("%s exists now: remove it from pendingFiles in docs_tree_test.go", p.path)
		}
	}
	for _, d := range docs(t) {
		for _, l := range d.links {
			checkLink(t, d, l, tr)
		}
		for i, line := range strings.Split(proseOf(d), "\n") {
			for _, m := range rootPath.FindAllStringSubmatch(line, -1) {
				p := strings.TrimRight(m[1], ".")
				first, _, _ := strings.Cut(p, "/")
				if top[first] && foreignPaths[p] == "" && !exists(p, tr) {
					t.Errorf("%s: %s is not in the repository", d.where(i+1), p)
				}
			}
			if d.path == "docs/benchmarks.md" {
				// make bench writes it (bench/cmd/benchtable), citing the
				// performance brief by its file name
				continue
			}
			for _, m := range bareName.FindAllStringSubmatch(line, -1) {
				if !bases[m[1]] {
					t.Errorf("%s: no file of the repository is named %s", d.where(i+1), m[1])
				}
			}
		}
	}
}

// proseOf is d's text with its fenced blocks blanked (sh blocks are
// checked by TestDocsCommands, YAML by TestDocsPipelines) and its link
// destinations too (checked by checkLink), lines kept in place.
func proseOf(d *mdDoc) string {
	lines := strings.Split(string(d.src), "\n")
	for _, b := range d.blocks {
		for i := 0; i < strings.Count(b.text, "\n"); i++ {
			if n := b.line - 1 + i; n < len(lines) {
				lines[n] = ""
			}
		}
	}
	for i, l := range lines {
		lines[i] = linkDest.ReplaceAllString(l, "]")
	}
	return strings.Join(lines, "\n")
}

func checkLink(t *testing.T, d *mdDoc, l mdText, tr map[string]bool) {
	t.Helper()
	dest := l.text
	if strings.Contains(dest, "://") || strings.HasPrefix(dest, "mailto:") {
		return
	}
	file, anchor, _ := strings.Cut(dest, "#")
	target := d
	if file != "" {
		p := path.Clean(path.Join(path.Dir(d.path), file))
		if strings.HasPrefix(p, "../") {
			t.Errorf("%s: link %s leaves the repository", d.where(l.line), dest)
			return
		}
		if !exists(p, tr) {
			t.Errorf("%s: link %s: %s is not in the repository", d.where(l.line), dest, p)
			return
		}
		target = nil
		if strings.HasSuffix(p, ".md") && anchor != "" {
			if src, err := os.ReadFile(p); err == nil {
				target = parseDoc(p, src)
			}
		}
	}
	if anchor != "" && target != nil && !target.anchors[anchor] {
		t.Errorf("%s: link %s: %s has no heading #%s", d.where(l.line), dest, target.path, anchor)
	}
}

// TestDocsLayoutMatchesTree: docs/layout.md's tables list every Go package
// folder under abi/, cmd/, host/, partition/ and sdk/ (testdata aside), and
// every path they list exists.
func TestDocsLayoutMatchesTree(t *testing.T) {
	atRoot(t)
	tr := tracked(t)
	listed := map[string]int{}
	d := doc(t, "docs/layout.md")
	for _, tb := range d.tables {
		for _, row := range tb.rows {
			if len(row) == 0 {
				continue
			}
			for _, p := range row[0] {
				listed[strings.TrimSuffix(p, "/")] = tb.line
			}
		}
	}
	var add, remove []string
	for _, dir := range goPackageDirs(tr) {
		if _, ok := listed[dir]; !ok {
			add = append(add, dir)
		}
	}
	for _, p := range sortedKeys(listed) {
		if !exists(p, tr) {
			remove = append(remove, p)
		}
	}
	if len(add) > 0 || len(remove) > 0 {
		var b strings.Builder
		b.WriteString("docs/layout.md and the tree disagree:\n")
		if len(add) > 0 {
			fmt.Fprintf(&b, "  add a row for each of these Go package folders: %s\n", strings.Join(add, ", "))
		}
		if len(remove) > 0 {
			fmt.Fprintf(&b, "  remove these paths, which are not in the repository: %s\n", strings.Join(remove, ", "))
		}
		t.Error(b.String())
	}
}

// goPackageDirs lists the folders holding tracked .go files under the
// roots of the map, as Go sees packages: testdata, node_modules and
// folders starting with . or _ are not.
func goPackageDirs(tr map[string]bool) []string {
	set := map[string]bool{}
	for f := range tr {
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		dir := path.Dir(f)
		first, _, _ := strings.Cut(dir, "/")
		switch first {
		case "abi", "cmd", "host", "internal", "partition", "sdk":
		default:
			continue
		}
		ignored := false
		for _, seg := range strings.Split(dir, "/") {
			if seg == "testdata" || seg == "node_modules" || strings.HasPrefix(seg, ".") || strings.HasPrefix(seg, "_") {
				ignored = true
			}
		}
		if !ignored {
			set[dir] = true
		}
	}
	return sortedKeys(set)
}

// TestDocsNameTestsThatExist: every test, benchmark and fuzz target a
// document names is a function of a tracked _test.go file (a name that
// ends early, TestSandbox01 or BenchmarkStartWarmCache*, is the start of
// one).
func TestDocsNameTestsThatExist(t *testing.T) {
	atRoot(t)
	tr := tracked(t)
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)\w*)\(`)
	var funcs []string
	for f := range tr {
		if !strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			funcs = append(funcs, m[1])
		}
	}
	for _, d := range docs(t) {
		for i, line := range strings.Split(string(d.src), "\n") {
			for _, name := range testName.FindAllString(line, -1) {
				found := false
				for _, f := range funcs {
					if strings.HasPrefix(f, name) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("%s: no test function is named %s", d.where(i+1), name)
				}
			}
		}
	}
}
