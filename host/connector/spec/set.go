package spec

import (
	"fmt"
	"sort"
)

// Set is a set of connectors, at most one source and one sink per name
// (file is both). A Set does not change once made: With makes a larger
// one, so a Set may be shared.
type Set struct {
	byRole map[Role]map[string]*Connector
}

// NewSet makes a set of cs. It panics on a connector without a name or a
// role, or on two sources (or two sinks) of one name: a programming
// error in a spec, found by any test that builds the set.
func NewSet(cs ...*Connector) *Set {
	s := &Set{byRole: map[Role]map[string]*Connector{Source: {}, Sink: {}}}
	s.add(cs)
	return s
}

// With is s and cs: the host's connectors and one more of a server's.
func (s *Set) With(cs ...*Connector) *Set {
	out := NewSet(s.All()...)
	out.add(cs)
	return out
}

func (s *Set) add(cs []*Connector) {
	for _, c := range cs {
		m, ok := s.byRole[c.Role]
		if !ok || c.Name == "" {
			panic(fmt.Sprintf("spec: connector %q has no name or no role", c.Name))
		}
		if _, dup := m[c.Name]; dup {
			panic(fmt.Sprintf("spec: two %ss are named %q", c.Role, c.Name))
		}
		m[c.Name] = c
	}
}

// Lookup returns the connector of role called name, or nil.
func (s *Set) Lookup(role Role, name string) *Connector {
	if s == nil {
		return nil
	}
	return s.byRole[role][name]
}

// Names lists the names of role's connectors, sorted.
func (s *Set) Names(role Role) []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.byRole[role]))
	for n := range s.byRole[role] {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All lists every connector: the sources by name, then the sinks.
func (s *Set) All() []*Connector {
	if s == nil {
		return nil
	}
	var out []*Connector
	for _, r := range []Role{Source, Sink} {
		for _, n := range s.Names(r) {
			out = append(out, s.byRole[r][n])
		}
	}
	return out
}
