package server

import (
	"bytes"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/host/pipeline"
)

// The collect sink is the server's, not the pipeline package's, so the
// pipeline linter does not know its type. Before linting, markCollect
// finds every `sink: {type: collect}` and writes "discard" over the word
// "collect" in the source: the same length, so every line and column the
// linter reports stays true. After parsing, the sinks found at the
// recorded positions get their type back (restoreCollect).

// markCollect returns src with each collect sink's type rewritten, the
// positions of those sinks' mappings, and the problems found in them.
// YAML it cannot read is returned unchanged: the linter reports it.
func markCollect(src []byte) ([]byte, map[pipeline.Pos]bool, pipeline.Errors) {
	var doc yaml.Node
	if len(src) > pipeline.DefaultMaxBytes || yaml.Unmarshal(src, &doc) != nil || len(doc.Content) == 0 {
		return src, nil, nil
	}
	ops := mapValue(deref(doc.Content[0]), "operators")
	if ops == nil || ops.Kind != yaml.SequenceNode {
		return src, nil, nil
	}
	out := src
	found := map[pipeline.Pos]bool{}
	var errs pipeline.Errors
	lines := bytes.SplitAfter(src, []byte("\n"))
	for _, item := range ops.Content {
		sink := deref(mapValue(deref(item), "sink"))
		if sink == nil || sink.Kind != yaml.MappingNode {
			continue
		}
		typ := mapValue(sink, "type")
		if typ == nil || typ.Kind != yaml.ScalarNode || typ.Value != "collect" {
			continue
		}
		pos := pipeline.Pos{Line: sink.Line, Col: sink.Column}
		for i := 0; i+1 < len(sink.Content); i += 2 {
			if k := sink.Content[i]; k.Value != "type" {
				errs = append(errs, &pipeline.Error{Pos: pipeline.Pos{Line: k.Line, Col: k.Column},
					Msg: "sink collect takes no option " + k.Value + ": it keeps the last records of the job (server setting output-records), read with GET /v1/jobs/{id}/output"})
			}
		}
		off, ok := offset(lines, typ.Line, typ.Column)
		if ok && (typ.Style == yaml.DoubleQuotedStyle || typ.Style == yaml.SingleQuotedStyle) {
			off++
		}
		if !ok || off+len("collect") > len(src) || string(src[off:off+len("collect")]) != "collect" {
			errs = append(errs, &pipeline.Error{Pos: pipeline.Pos{Line: typ.Line, Col: typ.Column},
				Msg: "write the sink type collect as a plain word (no escapes or block scalars)"})
			continue
		}
		if len(found) == 0 {
			out = bytes.Clone(src)
		}
		copy(out[off:], "discard")
		found[pos] = true
	}
	return out, found, errs
}

// restoreCollect gives the sinks markCollect found their type back.
func restoreCollect(p *pipeline.Pipeline, found map[pipeline.Pos]bool) {
	for _, op := range p.Operators {
		if op.Sink != nil && found[op.Sink.Pos] {
			op.Sink.Type = "collect"
		}
	}
}

// offset is the byte offset of 1-based line and column (counted in
// characters, as yaml counts them).
func offset(lines [][]byte, line, col int) (int, bool) {
	if line < 1 || line > len(lines) || col < 1 {
		return 0, false
	}
	off := 0
	for _, l := range lines[:line-1] {
		off += len(l)
	}
	l := lines[line-1]
	for i := 1; i < col; i++ {
		if len(l) == 0 {
			return 0, false
		}
		_, n := utf8.DecodeRune(l)
		l = l[n:]
		off += n
	}
	return off, true
}

// mapValue returns the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// deref follows an alias (one level: the parser refuses cycles later).
func deref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}
