package connector

import (
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

// A connector of this package is one file: its constructor, registered in
// an init function of that file against its spec (spec.Generator for the
// generator, ...). A connector whose spec the engine-free packages need
// (host/plan's and host/runtime's own tests parse pipelines with it) has
// its spec in host/connector/spec and in spec.Builtin; one only the CLI
// and the server offer may declare its spec in its own file here, and Set
// adds it.

// sourceFunc makes subtask's part of source operator op; o reads its
// options.
type sourceFunc func(b *Builtin, o *options, op *pipeline.Operator, subtask, parallelism int) (runtime.Source, error)

// sinkFunc makes subtask's part of sink operator op.
type sinkFunc func(b *Builtin, o *options, op *pipeline.Operator, subtask, parallelism int) (runtime.Operator, error)

type maker struct {
	spec   *spec.Connector
	source sourceFunc
	sink   sinkFunc
}

// makers holds every registered connector by role and name. The init
// functions of this package's files fill it; it is only read afterwards
// (so no lock).
var makers = map[spec.Role]map[string]maker{spec.Source: {}, spec.Sink: {}}

func registerSource(s *spec.Connector, f sourceFunc) { register(maker{spec: s, source: f}) }

func registerSink(s *spec.Connector, f sinkFunc) { register(maker{spec: s, sink: f}) }

func register(m maker) {
	byName := makers[m.spec.Role]
	if _, dup := byName[m.spec.Name]; dup || byName == nil || (m.spec.Role == spec.Source) != (m.source != nil) {
		panic(fmt.Sprintf("connector: %s %q registered twice or with the wrong constructor", m.spec.Role, m.spec.Name))
	}
	byName[m.spec.Name] = m
}

// Set is the set of connectors this package makes: the built-in ones and
// those declared here only. The CLI parses pipelines against it; the
// server extends it with its collect sink.
func Set() *spec.Set { return set() }

var set = sync.OnceValue(func() *spec.Set {
	var extra []*spec.Connector
	for _, r := range []spec.Role{spec.Source, spec.Sink} {
		for _, m := range makers[r] {
			if spec.Builtin.Lookup(r, m.spec.Name) != m.spec {
				extra = append(extra, m.spec)
			}
		}
	}
	return spec.Builtin.With(extra...)
})

// lookup returns the registered connector of role named by c, if any.
func lookup(role spec.Role, c *pipeline.Connector) (maker, bool) {
	m, ok := makers[role][c.Type]
	return m, ok
}
