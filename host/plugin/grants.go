package plugin

import (
	"fmt"
	"slices"
	"strings"
)

// Grants are the nondeterministic capabilities a pipeline gives one
// plugin (plugins: {x: {path, grant: [clock, random]}}). Without them a
// guest sees wazero's fake clocks and a seeded random stream: two runs of
// a job give byte-identical output.
type Grants struct {
	Clock  bool // the real wall and monotonic clocks, and sleep
	Random bool // crypto/rand
}

// Grant names, as the pipeline writes them.
const (
	GrantClock  = "clock"
	GrantRandom = "random"
)

// ParseGrants reads grant names; an unknown name is an error.
func ParseGrants(names []string) (Grants, error) {
	var g Grants
	for _, n := range names {
		switch n {
		case GrantClock:
			g.Clock = true
		case GrantRandom:
			g.Random = true
		default:
			return g, fmt.Errorf("unknown grant %q (known: %s, %s)", n, GrantClock, GrantRandom)
		}
	}
	return g, nil
}

// String lists the grants, e.g. "clock, random"; "" for none.
func (g Grants) String() string {
	var s []string
	if g.Clock {
		s = append(s, GrantClock)
	}
	if g.Random {
		s = append(s, GrantRandom)
	}
	return strings.Join(slices.Clip(s), ", ")
}

// Grant returns a copy of m whose instances get g (on top of the Host's
// AllowClock and AllowRandom). The compiled code is shared.
func (m *Module) Grant(g Grants) *Module {
	c := *m
	c.grants = g
	return &c
}

// Named returns the module under another name, by which its errors name
// it (a pipeline's name for the plugin); the module is shared, not copied.
func (m *Module) Named(name string) *Module {
	c := *m
	c.name = name
	return &c
}

// Grants returns the module's grants.
func (m *Module) Grants() Grants { return m.grants }
