package server

import (
	"fmt"
	"io"
	"strings"

	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

// connectors gives a tenant's job the sources and sinks it may use: the
// built-in generator and elements sources and discard sink, and the
// server's collect sink. Lint already refused the others; this refuses
// them again, so no path reaches the host's files or streams.
type connectors struct {
	builtin *connector.Builtin
	out     *tail
}

var _ runtime.Connectors = (*connectors)(nil)

func newConnectors(out *tail) *connectors {
	return &connectors{out: out, builtin: &connector.Builtin{Stdin: strings.NewReader(""), Stdout: io.Discard, Root: "/nonexistent"}}
}

func (c *connectors) Source(spec *pipeline.Operator, subtask, parallelism int) (runtime.Source, error) {
	if spec == nil || spec.Source == nil || !contains(tenantSources, spec.Source.Type) {
		return nil, fmt.Errorf("operator %q: this server offers only %s sources", opID(spec), strings.Join(tenantSources, " and "))
	}
	return c.builtin.Source(spec, subtask, parallelism)
}

func (c *connectors) Sink(spec *pipeline.Operator, subtask, parallelism int) (runtime.Operator, error) {
	switch {
	case spec == nil || spec.Sink == nil:
		return nil, fmt.Errorf("operator %q is not a sink", opID(spec))
	case spec.Sink.Type == "collect":
		return &collectSink{op: spec.ID, subtask: subtask, t: c.out}, nil
	case spec.Sink.Type == "discard":
		return c.builtin.Sink(spec, subtask, parallelism)
	}
	return nil, fmt.Errorf("operator %q: this server offers only %s sinks", spec.ID, strings.Join(tenantSinks, " and "))
}

func (c *connectors) Bounded(spec *pipeline.Connector) bool { return c.builtin.Bounded(spec) }

func opID(spec *pipeline.Operator) string {
	if spec == nil {
		return ""
	}
	return spec.ID
}
