package server

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/connector/kafka"
	"github.com/sluicehq/sluice/host/settings"
)

// TestKafkaPolicyAtStart: when a job's Kafka source and sink are built,
// the server's credentials replace whatever the connection had, the
// client id and an exactly-once sink's transactional-id prefix carry the
// tenant (and the job), and what lint would refuse is refused again (the
// settings may have changed since the job was linted).
func TestKafkaPolicyAtStart(t *testing.T) {
	cfg := testConfig(t)
	cfg.Server.Kafka = settings.ServerKafka{Brokers: []string{"k1:9092"}, TopicPrefix: "{tenant}.", SASLMechanism: kafka.SASLScramSHA512,
		SASLUsername: "svc", SASLPassword: "pw", TLS: true, TLSCAFile: "/etc/ca.pem"}
	s := &Server{cfg: cfg}
	k := s.kafkaPolicyFor("a", "job1")
	srcBase := kafka.SourceConfig{Operator: "in", Connection: kafka.Connection{Brokers: []string{"K1:9092"}, Timeout: time.Second}, Topics: []string{"a.in"}, GroupID: "a.g"}
	src := srcBase
	if err := k.applySource(&src); err != nil {
		t.Fatal(err)
	}
	if src.SASL == nil || src.SASL.Username != "svc" || src.SASL.Mechanism != kafka.SASLScramSHA512 || src.TLS == nil || src.TLS.CAFile != "/etc/ca.pem" || src.ClientID != "a-sluice" {
		t.Errorf("source connection %+v (sasl %+v, tls %+v)", src.Connection, src.SASL, src.TLS)
	}
	sinkBase := kafka.SinkConfig{Operator: "out", Connection: kafka.Connection{Brokers: []string{"k1:9092"}, ClientID: "mine"}, Topic: "a.out",
		Delivery: kafka.DeliveryExactlyOnce, TransactionalIDPrefix: "eos"}
	sink := sinkBase
	if err := k.applySink(&sink); err != nil {
		t.Fatal(err)
	}
	if sink.TransactionalIDPrefix != "a-job1-eos" || sink.ClientID != "a-mine" || sink.SASL == nil {
		t.Errorf("sink %+v", sink)
	}
	for _, tc := range []struct {
		apply func() error
		want  string
	}{
		{func() error {
			c := srcBase
			c.Brokers = []string{"k2:9092"}
			return k.applySource(&c)
		}, `operator "in": source kafka: broker k2:9092 is not one this server offers (kafka-brokers: k1:9092)`},
		{func() error {
			c := sinkBase
			c.Topic = "b.out"
			return k.applySink(&c)
		}, `operator "out": sink kafka: topic "b.out" is not tenant a's`},
		{func() error {
			c := srcBase
			c.SASL = &kafka.SASL{Mechanism: kafka.SASLPlain, Username: "me"}
			return k.applySource(&c)
		}, "sasl is not a tenant's to give"},
	} {
		if err := tc.apply(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want %q", err, tc.want)
		}
	}
	if s.kafkaPolicyFor("a", "") == nil || (&Server{cfg: testConfig(t)}).kafkaPolicyFor("a", "") != nil {
		t.Error("a policy exactly when kafka-brokers names brokers")
	}
}
