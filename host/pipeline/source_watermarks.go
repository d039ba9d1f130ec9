package pipeline

// This file is the least of a source's watermarks: that a window's lint
// needs (issue #27): whether the key is there, and whether it says none.
// The watermark strategies themselves (bounded-out-of-orderness,
// monotonous, idleness, timestamps) are decoded and checked elsewhere.

import "go.yaml.in/yaml/v3"

// Watermarks is a source's watermarks: as far as lint reads it.
type Watermarks struct {
	Pos  Pos
	None bool // watermarks: none, or {strategy: none}: the source emits none
}

// sourceWatermarks reads a source's watermarks: (a strategy name, or a
// mapping whose strategy key names one).
func (d *decoder) sourceWatermarks(n *yaml.Node) *Watermarks {
	n = deref(n)
	w := &Watermarks{Pos: nodePos(n)}
	switch n.Kind {
	case yaml.ScalarNode:
		w.None = n.Value == "none"
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "strategy" {
				w.None = deref(n.Content[i+1]).Value == "none"
			}
		}
	default:
		d.errorf(n, "watermarks must be a strategy or a mapping, not %s", describe(n))
	}
	return w
}
