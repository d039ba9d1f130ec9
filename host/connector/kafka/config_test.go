package kafka

import (
	"strings"
	"testing"
	"time"
)

func TestSourceConfigDefaults(t *testing.T) {
	c := SourceConfig{Operator: "in", Connection: Connection{Brokers: []string{"b:9092"}}, Topics: []string{"t"}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	d := c.WithDefaults()
	if d.Start != StartEarliest || d.ValueFormat != FormatJSON || d.KeyFormat != "" || d.Isolation != ReadUncommitted ||
		d.DiscoveryInterval != 5*time.Minute || *d.CommitOffsets || d.CommittedFallback != FallbackNone {
		t.Fatalf("defaults: %+v", d)
	}
	c.GroupID = "g"
	if d := c.WithDefaults(); !*d.CommitOffsets {
		t.Fatal("with a group, offsets are committed on checkpoint by default (commit.offsets.on.checkpoint)")
	}
	c.Bounded = true
	if d := c.WithDefaults(); d.DiscoveryInterval >= 0 {
		t.Fatal("a bounded source does not discover partitions")
	}
}

func TestSinkConfigDefaults(t *testing.T) {
	c := SinkConfig{Operator: "out", Connection: Connection{Brokers: []string{"b:9092"}}, Topic: "t"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	d := c.WithDefaults()
	if d.Delivery != DeliveryNone || d.Partitioner != PartitionerDefault || d.ValueFormat != FormatJSON ||
		d.KeyFormat != FormatRaw || d.TransactionTimeout != 15*time.Minute {
		t.Fatalf("defaults: %+v", d)
	}
}

func TestConfigErrors(t *testing.T) {
	on := true
	conn := Connection{Brokers: []string{"b:9092"}}
	cases := []struct {
		name string
		err  error
		want []string
	}{
		{"no brokers", SourceConfig{Operator: "in", Topics: []string{"t"}}.Validate(),
			[]string{`source "in" (kafka): option "brokers": is required`}},
		{"bad broker", SourceConfig{Operator: "in", Connection: Connection{Brokers: []string{"nohost"}}, Topics: []string{"t"}}.Validate(),
			[]string{`option "brokers": "nohost" is not host:port`}},
		{"no topics", SourceConfig{Operator: "in", Connection: conn}.Validate(),
			[]string{`option "topics": is required (or topic-pattern)`}},
		{"both", SourceConfig{Operator: "in", Connection: conn, Topics: []string{"t"}, TopicPattern: "t.*"}.Validate(),
			[]string{`option "topic-pattern": give topics or topic-pattern, not both`}},
		{"bad pattern", SourceConfig{Operator: "in", Connection: conn, TopicPattern: "t("}.Validate(),
			[]string{`option "topic-pattern": error parsing regexp`}},
		{"committed without group", SourceConfig{Operator: "in", Connection: conn, Topics: []string{"t"}, Start: StartCommitted}.Validate(),
			[]string{`option "group-id": is required with start: committed`}},
		{"bad start", SourceConfig{Operator: "in", Connection: conn, Topics: []string{"t"}, Start: "first"}.Validate(),
			[]string{`option "start": "first" is not one of earliest, latest, committed, timestamp`}},
		{"fallback without committed", SourceConfig{Operator: "in", Connection: conn, Topics: []string{"t"}, CommittedFallback: FallbackLatest}.Validate(),
			[]string{`option "committed-fallback": applies only to start: committed`}},
		{"commit without group", SourceConfig{Operator: "in", Connection: conn, Topics: []string{"t"}, CommitOffsets: &on}.Validate(),
			[]string{`option "commit-offsets": needs group-id`}},
		{"bad format", SourceConfig{Operator: "in", Connection: conn, Topics: []string{"t"}, ValueFormat: "avro", KeyFormat: "xml"}.Validate(),
			[]string{`option "format": "avro" is not one of json, msgpack, raw, csv`, `option "key-format": "xml"`}},
		{"headers on raw", SourceConfig{Operator: "in", Connection: conn, Topics: []string{"t"}, ValueFormat: FormatRaw, HeadersField: "h"}.Validate(),
			[]string{`option "headers-field": needs values that are maps`}},
		{"sasl", SourceConfig{Operator: "in", Connection: Connection{Brokers: []string{"b:1"}, SASL: &SASL{Mechanism: "GSSAPI"}}, Topics: []string{"t"}}.Validate(),
			[]string{`option "sasl.mechanism": "GSSAPI" is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512`, `option "sasl.username": is required`}},
		{"sink no topic", SinkConfig{Operator: "out", Connection: conn}.Validate(),
			[]string{`sink "out" (kafka): option "topic": is required (or topic-field)`}},
		{"exactly-once without prefix", SinkConfig{Operator: "out", Connection: conn, Topic: "t", Delivery: DeliveryExactlyOnce}.Validate(),
			[]string{`option "transactional-id-prefix": is required with delivery: exactly-once`}},
		{"prefix without exactly-once", SinkConfig{Operator: "out", Connection: conn, Topic: "t", TransactionalIDPrefix: "p"}.Validate(),
			[]string{`option "transactional-id-prefix": applies only to delivery: exactly-once`}},
		{"bad delivery", SinkConfig{Operator: "out", Connection: conn, Topic: "t", Delivery: "twice", Partitioner: "round-robin"}.Validate(),
			[]string{`option "delivery": "twice" is not one of none, at-least-once, exactly-once`, `option "partitioner": "round-robin" is not one of default, fixed`}},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(c.err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, c.err, w)
			}
		}
	}
}

// TestAllLoopback: the hint to start host dev-kafka is for brokers on this
// machine only.
func TestAllLoopback(t *testing.T) {
	for brokers, want := range map[string]bool{
		"127.0.0.1:9092": true, "localhost:9092,[::1]:9093": true, "127.0.0.1:9092,kafka.example:9092": false,
		"10.0.0.5:9092": false, "nohost": false,
	} {
		if got := allLoopback(strings.Split(brokers, ",")); got != want {
			t.Errorf("allLoopback(%s) = %v", brokers, got)
		}
	}
}
