package server

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/connector/kafka"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/settings"
)

// Kafka for tenants (docs/server.md, "Kafka"): offered when the server's
// settings name brokers (kafka-brokers). A tenant's kafka source or sink
// may name only those brokers; it reaches them with the server's
// credentials, never its own (sasl and tls are refused: tls files would
// be the host's files, and a tenant's credentials are not the platform
// team's to vouch for); it reads and writes only topics, and commits
// offsets only to groups, whose names start with the tenant's prefix
// (kafka-topic-prefix, {tenant} standing for its name); a sink may not
// take its topic from each record (topic-field), which could name any
// topic; and an exactly-once sink's transactional ids are
// <tenant>-<job id>-<its prefix>-<subtask>-<checkpoint>, so no tenant,
// and no other job, can fence a job's producers or abort its
// transactions; its client id is <tenant>-<its client-id>. Lint refuses
// what breaks the policy, at the connector's line; the connectors check
// it again when the job starts.

// kafkaType is the kafka connectors' type name.
const kafkaType = "kafka"

// kafkaPolicy is the server's Kafka policy applied to one tenant's job.
type kafkaPolicy struct {
	cfg    settings.ServerKafka
	tenant string
	prefix string // the tenant's topic prefix
	job    string // the job id; "" at lint
}

// kafkaPolicyFor is the policy of tenant's jobs; nil when the server
// offers no Kafka.
func (s *Server) kafkaPolicyFor(tenant, job string) *kafkaPolicy {
	k := s.cfg.Server.Kafka
	if len(k.Brokers) == 0 {
		return nil
	}
	return &kafkaPolicy{cfg: k, tenant: tenant, prefix: k.TenantPrefix(tenant), job: job}
}

// allowed reports whether broker is one of the server's.
func (k *kafkaPolicy) allowed(broker string) bool {
	for _, b := range k.cfg.Brokers {
		if strings.EqualFold(b, strings.TrimSpace(broker)) {
			return true
		}
	}
	return false
}

func (k *kafkaPolicy) connection(c kafka.Connection, opts map[string]any) []string {
	var out []string
	for _, b := range c.Brokers {
		if !k.allowed(b) {
			out = append(out, fmt.Sprintf("broker %s is not one this server offers (kafka-brokers: %s)", b, strings.Join(k.cfg.Brokers, ", ")))
		}
	}
	for _, key := range []string{"sasl", "tls"} {
		if _, ok := opts[key]; ok {
			out = append(out, fmt.Sprintf("%s is not a tenant's to give: this server connects to Kafka with its own credentials (its kafka-sasl-* and kafka-tls-* settings); remove %s", key, key))
		}
	}
	return out
}

func (k *kafkaPolicy) named(what, name string) []string {
	if strings.HasPrefix(name, k.prefix) {
		return nil
	}
	return []string{fmt.Sprintf("%s %q is not tenant %s's: its name must start with %q (kafka-topic-prefix)", what, name, k.tenant, k.prefix)}
}

// source lists what the policy refuses in a source's configuration; opts
// are the options as written.
func (k *kafkaPolicy) source(c kafka.SourceConfig, opts map[string]any) []string {
	out := k.connection(c.Connection, opts)
	for _, t := range c.Topics {
		out = append(out, k.named("topic", t)...)
	}
	if c.TopicPattern != "" && k.prefix != "" {
		// every whole-name match of the pattern starts with its literal
		// prefix: that must start with the tenant's
		if re, err := regexp.Compile("(?:" + c.TopicPattern + ")"); err == nil {
			if lit, _ := re.LiteralPrefix(); !strings.HasPrefix(lit, k.prefix) {
				out = append(out, fmt.Sprintf("topic-pattern %q may match topics that are not tenant %s's: begin it with %s", c.TopicPattern, k.tenant, regexp.QuoteMeta(k.prefix)))
			}
		}
	}
	if c.GroupID != "" {
		out = append(out, k.named("group-id", c.GroupID)...)
	}
	return out
}

// sink lists what the policy refuses in a sink's configuration.
func (k *kafkaPolicy) sink(c kafka.SinkConfig, opts map[string]any) []string {
	out := k.connection(c.Connection, opts)
	if c.Topic != "" {
		out = append(out, k.named("topic", c.Topic)...)
	}
	if c.TopicField != "" {
		out = append(out, fmt.Sprintf("topic-field %q is not offered by this server: a record could name a topic that is not tenant %s's; give topic", c.TopicField, k.tenant))
	}
	return out
}

// lint lists the problems of operator op's kafka source or sink.
func (k *kafkaPolicy) lint(op *pipeline.Operator) pipeline.Errors {
	var msgs []string
	var c *pipeline.Connector
	var role string
	if op.Source != nil && op.Source.Type == kafkaType {
		c, role = op.Source, "source"
		cfg, err := connector.KafkaSourceConfig(op)
		if err != nil {
			return nil // the parser reported it
		}
		msgs = k.source(cfg, c.Options)
	}
	if op.Sink != nil && op.Sink.Type == kafkaType {
		c, role = op.Sink, "sink"
		cfg, err := connector.KafkaSinkConfig(op)
		if err != nil {
			return nil
		}
		msgs = k.sink(cfg, c.Options)
	}
	var errs pipeline.Errors
	for _, m := range msgs {
		errs = append(errs, &pipeline.Error{File: PipelineFile, Pos: c.Pos, Msg: fmt.Sprintf("operator %s: %s kafka: %s", op.ID, role, m)})
	}
	return errs
}

// refused is a job's connector the policy refuses when it starts (lint
// refused it already, unless the settings changed).
func refused(role, op string, msgs []string) error {
	return fmt.Errorf("operator %q: %s kafka: %s", op, role, strings.Join(msgs, "; "))
}

// server is the connection the server's settings give, with a client id
// that starts with the tenant's name (Kafka's client quotas go by client
// id: a tenant cannot spend another's).
func (k *kafkaPolicy) server(c *kafka.Connection) {
	id := c.ClientID
	if id == "" {
		id = "sluice"
	}
	c.ClientID = k.tenant + "-" + id
	c.SASL, c.TLS = nil, nil
	if k.cfg.SASLMechanism != "" {
		c.SASL = &kafka.SASL{Mechanism: k.cfg.SASLMechanism, Username: k.cfg.SASLUsername, Password: k.cfg.SASLPassword}
	}
	if k.cfg.TLS {
		c.TLS = &kafka.TLS{CAFile: k.cfg.TLSCAFile, CertFile: k.cfg.TLSCertFile, KeyFile: k.cfg.TLSKeyFile, ServerName: k.cfg.TLSServerName}
	}
}

// applySource checks a source of the job and gives it the server's
// connection.
func (k *kafkaPolicy) applySource(c *kafka.SourceConfig) error {
	if msgs := k.source(*c, tenantKeys(c.Connection)); len(msgs) > 0 {
		return refused("source", c.Operator, msgs)
	}
	k.server(&c.Connection)
	return nil
}

// applySink checks a sink of the job, gives it the server's connection
// and, exactly-once, transactional ids that carry the tenant and the job.
func (k *kafkaPolicy) applySink(c *kafka.SinkConfig) error {
	if msgs := k.sink(*c, tenantKeys(c.Connection)); len(msgs) > 0 {
		return refused("sink", c.Operator, msgs)
	}
	k.server(&c.Connection)
	if c.Delivery == kafka.DeliveryExactlyOnce {
		c.TransactionalIDPrefix = k.transactionalIDPrefix(c.TransactionalIDPrefix)
	}
	return nil
}

// transactionalIDPrefix is the prefix a tenant's exactly-once sink runs
// with: <tenant>-<job id>-<the prefix it wrote>.
func (k *kafkaPolicy) transactionalIDPrefix(given string) string {
	return k.tenant + "-" + k.job + "-" + given
}

// tenantKeys stands for the options of a connection built from a
// tenant's options: sasl and tls are there when the tenant gave them.
func tenantKeys(c kafka.Connection) map[string]any {
	m := map[string]any{}
	if c.SASL != nil {
		m["sasl"] = true
	}
	if c.TLS != nil {
		m["tls"] = true
	}
	return m
}
