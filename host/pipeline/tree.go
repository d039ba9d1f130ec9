package pipeline

import (
	"go.yaml.in/yaml/v3"
)

// Limits on what a pipeline file may expand to. YAML aliases can make a
// small file expand to billions of nodes (an alias bomb), and deep nesting
// makes every recursive walk expensive: both are refused before decoding.
const (
	// DefaultMaxBytes is the largest pipeline file read by default.
	DefaultMaxBytes = 4 << 20
	// MaxDepth is the deepest nesting of mappings and lists, aliases
	// expanded.
	MaxDepth = 64
	// MaxNodes is the most YAML nodes a file may hold, aliases expanded.
	MaxNodes = 100_000
)

// prepare walks the YAML tree once: it measures the expanded size and
// depth of every node (memoized, so an alias bomb costs as much as its
// text), refuses alias cycles, and interpolates every scalar value. It
// reports false when a limit is broken: decoding must not go on.
type prepare struct {
	file   string
	lookup func(string) (string, bool)
	errs   *Errors
	done   map[*yaml.Node]measure
	active map[*yaml.Node]bool
	broken bool
	failed map[*yaml.Node]bool // scalars whose interpolation failed
}

type measure struct{ nodes, depth int }

// prepareTree returns the scalars whose interpolation failed (already
// reported: later stages stay quiet about them) and whether decoding may go
// on.
func prepareTree(file string, root *yaml.Node, lookup func(string) (string, bool), errs *Errors) (map[*yaml.Node]bool, bool) {
	w := &prepare{file: file, lookup: lookup, errs: errs,
		done: map[*yaml.Node]measure{}, active: map[*yaml.Node]bool{}, failed: map[*yaml.Node]bool{}}
	m := w.walk(root, false)
	if w.broken {
		return nil, false
	}
	if m.depth > MaxDepth {
		errs.errorf(file, nodePos(root), "nesting is deeper than %d levels", MaxDepth)
		return nil, false
	}
	if m.nodes > MaxNodes {
		errs.errorf(file, nodePos(root), "the document expands to more than %d nodes (aliases expanded): refusing it", MaxNodes)
		return nil, false
	}
	return w.failed, true
}

func (w *prepare) walk(n *yaml.Node, isKey bool) measure {
	if m, ok := w.done[n]; ok {
		return m
	}
	if w.active[n] {
		w.broken = true
		w.errs.errorf(w.file, nodePos(n), "alias refers to a node that contains it")
		return measure{1, 1}
	}
	w.active[n] = true
	m := measure{nodes: 1}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias != nil {
			m = w.walk(n.Alias, isKey)
			m.nodes = satAdd(m.nodes, 1)
		}
	case yaml.ScalarNode:
		if !isKey {
			w.interpolate(n)
		}
	default:
		level := 1 // a mapping or a list nests one level deeper
		if n.Kind == yaml.DocumentNode {
			level = 0
		}
		m.depth = level
		for i, c := range n.Content {
			cm := w.walk(c, n.Kind == yaml.MappingNode && i%2 == 0)
			m.nodes = satAdd(m.nodes, cm.nodes)
			m.depth = max(m.depth, cm.depth+level)
			if w.broken {
				break
			}
		}
	}
	delete(w.active, n)
	w.done[n] = m
	return m
}

// interpolate substitutes ${VAR} in a scalar value. A scalar without an
// explicit tag is then typed again from its new text, quoted or not, so
// that `parallelism: ${P:4}` and `count: "${N}"` (quotes are needed inside
// a flow mapping { }) are integers; `!!str ${N}` keeps a string.
func (w *prepare) interpolate(n *yaml.Node) {
	v, err := Interpolate(n.Value, w.lookup)
	if err != nil {
		w.errs.errorf(w.file, nodePos(n), "%v", err)
		w.failed[n] = true
		return
	}
	if v == n.Value {
		return
	}
	n.Value = v
	if n.Style&yaml.TaggedStyle == 0 {
		// resolved again from the new text by ShortTag and Decode
		n.Tag = ""
		n.Style &^= yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle
	}
}

func satAdd(a, b int) int {
	if a+b > MaxNodes+1 {
		return MaxNodes + 1
	}
	return a + b
}

func nodePos(n *yaml.Node) Pos { return Pos{Line: n.Line, Col: n.Column} }
