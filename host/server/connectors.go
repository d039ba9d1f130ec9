package server

import (
	"fmt"
	"io"
	"strings"

	"github.com/sluicehq/sluice/host/connector"
	connspec "github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

// connectors gives a tenant's job the sources and sinks it may use: the
// host's connectors that touch nothing outside the job (Contained: no
// files, streams or network), and the server's collect sink. Lint already refused the
// others; this refuses them again, so no path reaches the host's files or
// streams.
type connectors struct {
	builtin *connector.Builtin
	out     *tail
	kafka   *kafkaPolicy // nil: no Kafka for tenants
}

var _ runtime.Connectors = (*connectors)(nil)

func newConnectors(out *tail, k *kafkaPolicy) *connectors {
	c := &connectors{out: out, kafka: k, builtin: &connector.Builtin{Stdin: strings.NewReader(""), Stdout: io.Discard, Root: "/nonexistent"}}
	if k != nil {
		c.builtin.KafkaSourcePolicy, c.builtin.KafkaSinkPolicy = k.applySource, k.applySink
	}
	return c
}

// offers reports whether the job may use the connector of role named typ.
func (c *connectors) offers(role connspec.Role, typ string) bool {
	return offered(role, typ) || typ == kafkaType && c.kafka != nil
}

func (c *connectors) Source(spec *pipeline.Operator, subtask, parallelism int) (runtime.Source, error) {
	if spec == nil || spec.Source == nil || !c.offers(connspec.Source, spec.Source.Type) {
		return nil, fmt.Errorf("operator %q: this server offers only %s sources", opID(spec), strings.Join(tenantNames(connspec.Source, c.kafka != nil), " and "))
	}
	return c.builtin.Source(spec, subtask, parallelism)
}

func (c *connectors) Sink(spec *pipeline.Operator, subtask, parallelism int) (runtime.Operator, error) {
	switch {
	case spec == nil || spec.Sink == nil:
		return nil, fmt.Errorf("operator %q is not a sink", opID(spec))
	case spec.Sink.Type == Collect.Name:
		return &collectSink{op: spec.ID, subtask: subtask, t: c.out}, nil
	case c.offers(connspec.Sink, spec.Sink.Type):
		return c.builtin.Sink(spec, subtask, parallelism)
	}
	return nil, fmt.Errorf("operator %q: this server offers only %s sinks", spec.ID, strings.Join(tenantNames(connspec.Sink, c.kafka != nil), " and "))
}

// offered reports whether tenants may use the connector of role named
// typ: one of the server's set that does not touch the host.
func offered(role connspec.Role, typ string) bool {
	c := connectorSet.Lookup(role, typ)
	return c != nil && c.Contained
}

// tenantNames lists the connectors of role tenants may use, sorted; kafka
// among them when the server offers it.
func tenantNames(role connspec.Role, kafka bool) []string {
	var out []string
	for _, n := range connectorSet.Names(role) {
		if offered(role, n) || kafka && n == kafkaType {
			out = append(out, n)
		}
	}
	return out
}

func (c *connectors) Bounded(spec *pipeline.Connector) bool { return c.builtin.Bounded(spec) }

func opID(spec *pipeline.Operator) string {
	if spec == nil {
		return ""
	}
	return spec.ID
}
