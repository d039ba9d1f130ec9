package pipeline

import (
	"regexp"

	"go.yaml.in/yaml/v3"
)

// Parallelism bounds, as in Flink (KeyGroupRangeAssignment.
// UPPER_BOUND_MAX_PARALLELISM is 1 << 15).
const (
	MaxParallelismBound = 1 << 15
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

var pipelineKeys = []string{"version", "name", "mode", "parallelism", "max-parallelism",
	"chaining", "slots", "plugins", "operators", "checkpointing", "restart-strategy", "watermarks"}

// pipeline decodes the top-level mapping and applies the defaults.
func (d *decoder) pipeline(n *yaml.Node) *Pipeline {
	ps, ok := d.mapping(n, "the pipeline")
	if !ok {
		return nil
	}
	p := &Pipeline{
		Pos:         nodePos(deref(n)),
		Mode:        Streaming,
		Parallelism: 1,
		Chaining:    true,
		Plugins:     map[string]*Plugin{},
		KeyPos:      map[string]Pos{},
	}
	var operators *yaml.Node
	for _, kv := range ps {
		k, v := kv.Key.Value, kv.Val
		p.KeyPos[k] = nodePos(kv.Key)
		switch k {
		case "version":
			if ver, ok := d.integer(v, "version", 0, 1<<31-1); ok {
				p.Version = ver
				if ver != 1 {
					d.errorf(v, "unsupported version %d: this host reads version 1", ver)
				}
			}
		case "name":
			p.Name, _ = d.str(v, "name")
		case "mode":
			if m, ok := d.oneOf(v, "mode", string(Streaming), string(Batch), string(Automatic)); ok {
				p.Mode = Mode(m)
			}
		case "parallelism":
			if par, ok := d.integer(v, "parallelism", 1, MaxParallelismBound); ok {
				p.Parallelism = par
			}
		case "max-parallelism":
			p.MaxParallelism, _ = d.integer(v, "max-parallelism", 1, MaxParallelismBound)
		case "chaining":
			if c, ok := d.boolean(v, "chaining"); ok {
				p.Chaining = c
			}
		case "slots":
			p.Slots, _ = d.integer(v, "slots", 1, 1<<31-1)
		case "plugins":
			d.plugins(p, v)
		case "operators":
			operators = v
		case "checkpointing":
			p.Checkpointing = d.checkpointing(v)
		case "restart-strategy":
			p.RestartStrategy = d.restartStrategy(v)
		case "watermarks":
			p.Watermarks = d.watermarks(v, "the pipeline's watermarks")
		default:
			if !d.notSupported(kv.Key, "pipeline", "the pipeline") {
				d.unknownKey(kv.Key, "the pipeline", pipelineKeys)
			}
		}
	}
	for _, req := range []string{"version", "name", "operators"} {
		if _, ok := p.KeyPos[req]; !ok {
			d.errorf(n, "the pipeline needs %s", req)
		}
	}
	if operators != nil {
		d.operators(p, operators)
	}
	return p
}

// plugins decodes the plugins: section, name -> {path, config}.
func (d *decoder) plugins(p *Pipeline, n *yaml.Node) {
	ps, ok := d.mapping(n, "plugins")
	if !ok {
		return
	}
	for _, kv := range ps {
		name := kv.Key.Value
		if !idPattern.MatchString(name) {
			d.errorf(kv.Key, "invalid plugin name %q: use letters, digits, _ and -", name)
			continue
		}
		pl := &Plugin{Name: name, Pos: nodePos(kv.Key)}
		fields, ok := d.mapping(kv.Val, "plugin "+name)
		if !ok {
			continue
		}
		for _, f := range fields {
			switch f.Key.Value {
			case "path":
				pl.Path, _ = d.str(f.Val, "plugin "+name+" path")
			case "config":
				pl.Config = d.config(f.Val, "plugin "+name+" config")
				pl.ConfigPos = configPos(f.Val)
			case "grant":
				pl.Grants, pl.GrantsPos = d.grants(f.Val, "plugin "+name+" grant"), nodePos(f.Val)
			default:
				d.unknownKey(f.Key, "plugin "+name, []string{"path", "config", "grant"})
			}
		}
		if pl.Path == "" && !hasKey(fields, "path") {
			d.errorf(kv.Key, "plugin %s needs a path to its .wasm module", name)
		}
		p.Plugins[name] = pl
	}
}

// grants decodes grant: one name or a list of names, each clock or
// random, none twice.
func (d *decoder) grants(n *yaml.Node, what string) []string {
	n = deref(n)
	items := []*yaml.Node{n}
	switch n.Kind {
	case yaml.SequenceNode:
		items = n.Content
	case yaml.MappingNode:
		d.errorf(n, "%s must be a list such as [clock, random], not %s", what, describe(n))
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, it := range items {
		g, ok := d.oneOf(it, what, GrantClock, GrantRandom)
		if !ok {
			continue
		}
		if seen[g] {
			d.errorf(it, "%s names %s twice", what, g)
			continue
		}
		seen[g] = true
		out = append(out, g)
	}
	return out
}

// config decodes a config: mapping into plain values.
func (d *decoder) config(n *yaml.Node, what string) map[string]any {
	if deref(n).Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping, not %s", what, describe(n))
		return nil
	}
	v, _ := d.value(n, what)
	m, _ := v.(map[string]any)
	return m
}

// configPos maps each key written in the config mapping n to where its
// value starts. It reports nothing itself: config, which decodes the same
// node, has reported its problems. Keys brought in by a merge (<<: *x)
// point at the merge's value.
func configPos(n *yaml.Node) map[string]Pos {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	pos := map[string]Pos{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
		case k.ShortTag() == "!!merge":
			merges = append(merges, v)
		default:
			if _, dup := pos[k.Value]; !dup {
				pos[k.Value] = nodePos(v)
			}
		}
	}
	for _, v := range merges { // a key of its own wins over a merged one
		sources := []*yaml.Node{v}
		if deref(v).Kind == yaml.SequenceNode {
			sources = deref(v).Content
		}
		for _, src := range sources {
			for k := range configPos(src) {
				if _, ok := pos[k]; !ok {
					pos[k] = nodePos(v)
				}
			}
		}
	}
	return pos
}

func hasKey(ps []pair, k string) bool {
	for _, p := range ps {
		if p.Key.Value == k {
			return true
		}
	}
	return false
}
