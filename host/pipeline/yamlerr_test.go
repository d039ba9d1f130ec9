package pipeline

import (
	"errors"
	"strings"
	"testing"
)

// TestYAMLSyntaxErrorLines: a syntax error is reported at the line of the
// problem, whatever the kind (the library's own "line N" is 0-based for
// the parser's problems, 1-based for the scanner's, and names the
// problem's context, not the problem).
func TestYAMLSyntaxErrorLines(t *testing.T) {
	head := "version: 1\nname: x\noperators:\n  - id: a\n" // lines 1-4
	for _, tc := range []struct {
		name, src string
		line      int
		msg       string
	}{
		{"unclosed flow mapping", head + "    source: { type: stdin }\n  - id: b\n    sink: { type: print\n  - id: c\n", 7, "did not find expected ',' or '}'"},
		{"unclosed flow mapping at the end", head + "    sink: { type: print\n", 5, "did not find expected ',' or '}'"},
		{"unclosed flow sequence", "version: 1\nname: [a, b\n", 2, "did not find expected ',' or ']'"},
		{"tab in the indentation", head + "\tsource: { type: stdin }\n", 5, "found a tab character that violates indentation"},
		{"unclosed quote", "version: 1\nname: x\nmode: \"batch\nslots: 2\n", 3, "found unexpected end of stream"},
		{"mapping value in a plain scalar", "version: 1\nname: x\nmode: a: b\n", 3, "mapping values are not allowed in this context"},
		{"over-indented key", "version: 1\nname: x\n  mode: batch\n", 3, "mapping values are not allowed in this context"},
		{"key beside a sequence", "version: 1\noperators:\n  - id: a\n  name: x\n", 4, "did not find expected '-' indicator"},
		{"under-indented key in a nested mapping", "version: 1\nplugins:\n  a: { path: a.wasm }\n  b:\n    path: b.wasm\n   config: 1\n", 6, "did not find expected key"},
		{"bad escape", "version: 1\nname: x\nmode: batch\nslots: \"\\q\"\n", 4, "found unknown escape character"},
		{"stray character", "version: 1\n@name: x\n", 2, "found character that cannot start any token"},
		{"unknown alias", "version: 1\nname: x\nmode: *m\n", 3, "unknown anchor 'm' referenced"},
		{"first line", "\tversion: 1\nname: x\n", 1, "found character that cannot start any token"},
		{"second document", "version: 1\nname: x\n--- # the second starts here\nversion: 2\n", 3, "a pipeline file holds one document; this is a second one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tc.src), ParseOptions{})
			var list Errors
			if !errors.As(err, &list) || len(list) != 1 {
				t.Fatalf("want one problem, got %v", err)
			}
			want := Error{File: "p.yaml", Pos: Pos{tc.line, 1}, Msg: "invalid YAML: " + tc.msg}
			if *list[0] != want {
				t.Errorf("got  %s\nwant %s", list[0], &want)
			}
		})
	}
}

// TestYAMLErrorSearchIsBounded: the search parses prefixes again only
// within prefixBudget bytes; past it, the line the library named stands.
func TestYAMLErrorSearchIsBounded(t *testing.T) {
	data := []byte("version: 1\nname: [" + strings.Repeat("a, ", prefixBudget/3) + "\n")
	_, _, err := firstDocument(data)
	if err == nil {
		t.Fatal("no error")
	}
	if got := problemLine(data[:len(data)-prefixBudget/2], err.Error(), 1); got != 2 {
		t.Errorf("within the budget: line %d, want 2", got)
	}
	if got := problemLine(data, err.Error(), 1); got != 1 {
		t.Errorf("past the budget: line %d, want the library's 1", got)
	}
}
