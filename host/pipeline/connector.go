package pipeline

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/suggest"
)

// connectors is the set a pipeline is parsed against: opts' own, else the
// built-in connectors.
func (o ParseOptions) connectors() *spec.Set {
	if o.Connectors != nil {
		return o.Connectors
	}
	return spec.Builtin
}

// specOf is c's spec: the one it was parsed against, else (a Connector
// made in code) the built-in connector of role called c.Type, else nil.
func (c *Connector) specOf(role spec.Role) *spec.Connector {
	if c.Spec != nil {
		return c.Spec
	}
	return spec.Builtin.Lookup(role, c.Type)
}

// Boundedness says whether a source ends by itself (Flink's Boundedness),
// as its spec says: a generator with a count, elements and a file do; a
// generator without count does not; stdin ends with its input, which a
// plan cannot foresee (automatic streams it, an explicit batch reads it to
// the end). A type no spec knows is unbounded.
func (c *Connector) Boundedness() spec.Boundedness {
	return c.specOf(spec.Source).BoundednessOf(c.Options)
}

// Bounded reports whether a plan can know that the source ends by itself.
func (c *Connector) Bounded() bool { return c.Boundedness() == spec.Bounded }

// UnboundedWhy says why a source is unbounded, for an error.
func (c *Connector) UnboundedWhy() string {
	if s := c.specOf(spec.Source); s != nil {
		return s.Why()
	}
	return c.Type + " never ends"
}

// NonParallel reports whether a source runs as one subtask whatever the
// job's parallelism, as Flink's non-parallel sources (fromElements): the
// inline elements and standard input.
func (c *Connector) NonParallel() bool {
	s := c.specOf(spec.Source)
	return s != nil && s.NonParallel
}

// Format is the format of a file or stdin connector: its format option,
// else csv for a file path ending in .csv (any case), else json.
func (c *Connector) Format() string { return spec.FormatOf(c.Options) }

// ParallelismOf is op's parallelism as the planner gives it: its own, else
// 1 for a non-parallel source, else the job's (at least 1).
func (p *Pipeline) ParallelismOf(op *Operator) int {
	switch {
	case op.Parallelism > 0:
		return op.Parallelism
	case op.Source != nil && op.Source.NonParallel():
		return 1
	case op.Window != nil && op.Window.All: // Flink's windowAll
		return 1
	case p.Parallelism > 0:
		return p.Parallelism
	}
	return 1
}

// connector decodes a source or sink: a mapping with a type of role in
// the decoder's set and the options of that type.
func (d *decoder) connector(n *yaml.Node, role spec.Role) *Connector {
	what := role.String()
	ps, ok := d.mapping(n, what)
	if !ok {
		return nil
	}
	c := &Connector{Pos: nodePos(deref(n)), Options: map[string]any{}}
	var typeNode *yaml.Node
	for _, p := range ps {
		if p.Key.Value == "type" {
			typeNode = p.Val
		}
	}
	names := d.set.Names(role)
	if typeNode == nil {
		d.errorf(n, "%s needs a type: one of %s", what, strings.Join(names, ", "))
		return nil
	}
	t, ok := d.str(typeNode, what+" type")
	if !ok {
		return nil
	}
	cs := d.set.Lookup(role, t)
	if cs == nil {
		hint := ""
		if s := suggest.Closest(t, names); s != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
		}
		d.errorf(typeNode, "%s type must be one of %s, not %q%s", what, strings.Join(names, ", "), t, hint)
		return nil
	}
	c.Type, c.Spec = t, cs
	where := what + " " + t
	keys, given := map[string]*yaml.Node{}, map[string]bool{}
	for _, p := range ps {
		k := p.Key.Value
		if k == "type" {
			continue
		}
		if k == "watermarks" && role == spec.Source {
			c.Watermarks = d.sourceWatermarks(p.Val)
			continue
		}
		keys[k], given[k] = p.Key, true
		o, found := cs.Option(k)
		if !found {
			switch {
			case d.notSupported(p.Key, "connector", where):
			case len(cs.Options) == 0:
				d.errorf(p.Key, "%s takes no option %s: it %s", where, k, cs.Summary)
			default:
				d.unknownKey(p.Key, where, append([]string{"type"}, cs.OptionNames()...))
			}
			continue
		}
		d.ordered = o.Ordered // records keep their key order
		v, ok := d.option(p.Val, where+" "+k, o)
		d.ordered = false
		if ok {
			c.Options[k] = v
		}
	}
	for _, o := range cs.Options {
		if _, given := keys[o.Name]; o.Required && !given {
			d.errorf(n, "%s needs %s", where, o.Name)
		}
	}
	for _, p := range cs.Problems(c.Options, given) {
		at := n
		if k, ok := keys[p.Option]; ok {
			at = k
		}
		d.errorf(at, "%s: %s", where, p.Msg)
	}
	return c
}

// option checks one option value against its spec and returns it as a
// plain Go value.
func (d *decoder) option(n *yaml.Node, what string, o spec.Option) (any, bool) {
	switch o.Type {
	case spec.Enum:
		return d.oneOf(n, what, o.Choices...)
	case spec.String:
		if o.Empty && deref(n).Kind == yaml.ScalarNode && deref(n).ShortTag() == "!!str" && deref(n).Value == "" {
			return "", true
		}
		return d.str(n, what)
	case spec.Int:
		return d.integer(n, what, int(o.Min), int(o.Max))
	case spec.Number:
		return d.number(n, what, o.Min, o.Max)
	case spec.Bool:
		return d.boolean(n, what)
	case spec.Map:
		return d.mapOption(n, what, o)
	case spec.Duration:
		return d.duration(n, what, o.MinDuration)
	case spec.List:
		if deref(n).Kind != yaml.SequenceNode {
			d.errorf(n, "%s must be a list, not %s", what, describe(n))
			return nil, false
		}
		if len(deref(n).Content) == 0 {
			d.errorf(n, "%s must not be empty", what)
			return nil, false
		}
		return d.value(n, what)
	}
	d.errorf(n, "%s: the connector's spec gives it no type", what)
	return nil, false
}

// mapOption checks a Map option: a mapping of its fields, each checked
// against its own spec, required ones given.
func (d *decoder) mapOption(n *yaml.Node, what string, o spec.Option) (any, bool) {
	ps, ok := d.mapping(n, what)
	if !ok {
		return nil, false
	}
	out, given := map[string]any{}, map[string]bool{}
	names := make([]string, len(o.Fields))
	for i, f := range o.Fields {
		names[i] = f.Name
	}
	for _, p := range ps {
		f, found := o.Field(p.Key.Value)
		if !found {
			d.unknownKey(p.Key, what, names)
			ok = false
			continue
		}
		given[f.Name] = true
		if v, vok := d.option(p.Val, what+" "+f.Name, f); vok {
			out[f.Name] = v
		} else {
			ok = false
		}
	}
	for _, f := range o.Fields {
		if f.Required && !given[f.Name] {
			d.errorf(n, "%s needs %s", what, f.Name)
			ok = false
		}
	}
	return out, ok
}
