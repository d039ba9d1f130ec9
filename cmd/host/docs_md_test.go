package main

// The documents the docs tests read (README.md, RATIONALE.md, docs/*.md),
// parsed once with goldmark: fenced code blocks, inline code spans, links,
// headings and tables, each with its line.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// mdDoc is one markdown document of the repository.
type mdDoc struct {
	path     string // slash-separated, from the repository's root
	src      []byte
	blocks   []mdBlock
	spans    []mdText // inline code, outside fenced blocks
	links    []mdText // link destinations
	anchors  map[string]bool
	tables   []mdTable
	headings []mdText
}

type mdBlock struct {
	lang string
	text string
	line int // of the block's first line of code
}

type mdText struct {
	text string
	line int
}

// mdTable is a table and the heading it follows; each row holds its cells'
// code spans.
type mdTable struct {
	heading string
	line    int
	rows    [][][]string
}

// where names a place in a document as file:line.
func (d *mdDoc) where(line int) string { return d.path + ":" + strconv.Itoa(line) }

var (
	docsOnce sync.Once
	docsAll  []*mdDoc
	docsErr  error
)

// docPaths are the documents under test: the README, RATIONALE.md and
// every page in docs/.
func docPaths() ([]string, error) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		return nil, err
	}
	return append([]string{"README.md", "RATIONALE.md"}, pages...), nil
}

// docs parses the documents; the caller's working directory is the
// repository's root (atRoot).
func docs(t *testing.T) []*mdDoc {
	t.Helper()
	docsOnce.Do(func() {
		paths, err := docPaths()
		if err != nil {
			docsErr = err
			return
		}
		for _, p := range paths {
			src, err := os.ReadFile(p)
			if err != nil {
				docsErr = err
				return
			}
			docsAll = append(docsAll, parseDoc(filepath.ToSlash(p), src))
		}
	})
	if docsErr != nil {
		t.Fatal(docsErr)
	}
	return docsAll
}

// doc returns the document at path.
func doc(t *testing.T, path string) *mdDoc {
	t.Helper()
	for _, d := range docs(t) {
		if d.path == path {
			return d
		}
	}
	t.Fatalf("no document %s", path)
	return nil
}

func parseDoc(path string, src []byte) *mdDoc {
	d := &mdDoc{path: path, src: src, anchors: map[string]bool{}}
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	root := md.Parser().Parse(text.NewReader(src))
	lineOf := func(offset int) int { return bytes.Count(src[:offset], []byte("\n")) + 1 }
	heading := ""
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock:
			var b strings.Builder
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
			line := 0
			if lines.Len() > 0 {
				line = lineOf(lines.At(0).Start)
			}
			d.blocks = append(d.blocks, mdBlock{lang: string(n.Language(src)), text: b.String(), line: line})
			return ast.WalkSkipChildren, nil
		case *ast.Heading:
			heading = plainText(n, src)
			d.anchors[slug(heading)] = true
			d.headings = append(d.headings, mdText{heading, lineOf(firstOffset(n))})
		case *ast.CodeSpan:
			d.spans = append(d.spans, mdText{plainText(n, src), lineOf(firstOffset(n))})
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			d.links = append(d.links, mdText{string(n.Destination), lineOf(firstOffset(n))})
		case *east.Table:
			tb := mdTable{heading: heading, line: lineOf(firstOffset(n))}
			for row := n.FirstChild(); row != nil; row = row.NextSibling() {
				if _, header := row.(*east.TableHeader); header {
					continue
				}
				var cells [][]string
				for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
					var spans []string
					_ = ast.Walk(cell, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
						if cs, ok := c.(*ast.CodeSpan); ok && entering {
							spans = append(spans, plainText(cs, src))
						}
						return ast.WalkContinue, nil
					})
					cells = append(cells, spans)
				}
				tb.rows = append(tb.rows, cells)
			}
			d.tables = append(d.tables, tb)
		}
		return ast.WalkContinue, nil
	})
	return d
}

// plainText is the text of n's inline children.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() {
				b.WriteByte(' ')
			}
		}
		if s, ok := c.(*ast.String); ok && entering {
			b.Write(s.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// firstOffset is the source offset of n's first text, for its line.
func firstOffset(n ast.Node) int {
	off := -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering && off < 0 {
			off = t.Segment.Start
			return ast.WalkStop, nil
		}
		if entering && c.Type() == ast.TypeBlock && c.Lines().Len() > 0 && off < 0 {
			off = c.Lines().At(0).Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return max(off, 0)
}

// slug is the anchor GitHub gives a heading: lower case, letters, digits,
// '-' and '_' kept, spaces as '-', everything else dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

var (
	trackedOnce sync.Once
	trackedSet  map[string]bool // tracked files and every folder holding one
	trackedErr  error
)

// tracked lists what git holds: every tracked file and folder, so that a
// document cannot lean on a file that only exists in one checkout.
func tracked(t *testing.T) map[string]bool {
	t.Helper()
	trackedOnce.Do(func() {
		out, err := exec.Command("git", "ls-files", "-z").Output()
		if err != nil {
			trackedErr = err
			return
		}
		trackedSet = map[string]bool{}
		for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			if _, err := os.Lstat(f); err != nil {
				continue // deleted in the work tree, not yet committed
			}
			trackedSet[f] = true
			for dir := filepath.ToSlash(filepath.Dir(f)); dir != "."; dir = filepath.ToSlash(filepath.Dir(dir)) {
				trackedSet[dir] = true
			}
		}
	})
	if trackedErr != nil {
		t.Fatalf("the docs tests read the tracked files with git ls-files: %v", trackedErr)
	}
	return trackedSet
}

// atRoot makes the repository's root the working directory for the test.
func atRoot(t *testing.T) {
	t.Helper()
	t.Chdir("../..")
	t.Setenv("SLUICE_SLOTS", "")
}

var placeholder = regexp.MustCompile(`<[^<>/]*>|\b[A-Z][A-Z]+\b`)

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
