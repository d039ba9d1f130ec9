package plan

import (
	"sort"
	"strings"
)

// Grants returns the plugins given nondeterministic capabilities (grant:
// [clock, random]) with their grants, by plugin name; nil when none is.
// A job using them is not reproducible: the plan says so.
func (g *JobGraph) Grants() map[string][]string {
	if g.Pipeline == nil {
		return nil
	}
	var out map[string][]string
	for name, pl := range g.Pipeline.Plugins {
		if pl != nil && len(pl.Grants) > 0 {
			if out == nil {
				out = map[string][]string{}
			}
			out[name] = append([]string(nil), pl.Grants...)
		}
	}
	return out
}

// grantLines renders Grants as "name: clock, random", sorted by name.
func grantLines(g *JobGraph) []string {
	grants := g.Grants()
	names := make([]string, 0, len(grants))
	for n := range grants {
		names = append(names, n)
	}
	sort.Strings(names)
	lines := make([]string, len(names))
	for i, n := range names {
		lines[i] = "plugin " + n + ": " + strings.Join(grants[n], ", ")
	}
	return lines
}

// operatorGrants is what the plugin of op is granted.
func operatorGrants(g *JobGraph, op *Operator) []string {
	if g.Pipeline == nil || op.Spec == nil || op.Spec.Plugin == "" {
		return nil
	}
	if pl := g.Pipeline.Plugins[op.Spec.Plugin]; pl != nil {
		return pl.Grants
	}
	return nil
}
