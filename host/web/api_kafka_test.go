package web

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
	"github.com/sluicehq/sluice/host/server"
)

// kafkaServed starts a kfake cluster that requires SCRAM-SHA-256 (user
// sluice), with topics, and an API whose server offers Kafka on it with
// those credentials: a tenant's pipeline names no credentials, so a job
// that reads or writes proves the server's reached the brokers.
func kafkaServed(t *testing.T, topics map[string]int32) (*testAPI, *kgo.Client, string) {
	t.Helper()
	c, err := kafkatest.Start(1, topics, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "sluice", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.SASL(scram.Auth{User: "sluice", Pass: "pw"}.AsSha256Mechanism()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	hs, ss := testSettings(t)
	hs.CheckpointStorage = t.TempDir()
	ss.Kafka.Brokers = c.Addrs()
	ss.Kafka.SASLMechanism, ss.Kafka.SASLUsername, ss.Kafka.SASLPassword = "SCRAM-SHA-256", "sluice", "pw"
	return startAPI(t, hs, ss, nil), cl, c.Addrs()[0]
}

// readTopic reads topic from its start until it holds n records
// (read_committed when committed), or the test's deadline.
func readTopic(t *testing.T, cl *kgo.Client, topic string, n int, committed bool) []string {
	t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(cl.OptValue(kgo.SeedBrokers).([]string)...), kgo.SASL(scram.Auth{User: "sluice", Pass: "pw"}.AsSha256Mechanism()),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	rd, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out []string
	for len(out) < n {
		fs := rd.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("topic %s: %d records, waited for %d: %v", topic, len(out), n, out)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	sort.Strings(out)
	return out
}

func numbered(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(`{"n":%d}`, i))
	}
	sort.Strings(out)
	return out
}

// TestServedKafka: a tenant's job submitted with POST /v1/jobs reads a
// topic of its own and writes another through the server's brokers and
// credentials (the cluster requires SCRAM; the pipeline names none).
func TestServedKafka(t *testing.T) {
	a, cl, broker := kafkaServed(t, map[string]int32{"a.in": 2, "a.out": 1})
	ctx := t.Context()
	var recs []*kgo.Record
	for i := range 20 {
		recs = append(recs, &kgo.Record{Topic: "a.in", Partition: int32(i % 2), Value: []byte(fmt.Sprintf(`{"n":%d}`, i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	job := a.submit(tokenA, fmt.Sprintf(`version: 1
name: copy
parallelism: 2
operators:
  - id: in
    source: { type: kafka, brokers: %q, topics: [a.in], bounded: latest }
  - id: out
    sink: { type: kafka, brokers: %q, topic: a.out }
`, broker, broker))
	if end := a.wait(job.ID); end.State != server.Finished {
		t.Fatalf("job %s: %s", end.State, end.Error)
	}
	got := readTopic(t, cl, "a.out", 20, false)
	if strings.Join(got, " ") != strings.Join(numbered(20), " ") {
		t.Errorf("a.out holds %v", got)
	}
}

// TestServedKafkaExactlyOnce: an exactly-once sink of a served job runs
// with transactional ids <tenant>-<job id>-<its prefix>-..., so two
// tenants (or two jobs) that write the same prefix never fence each
// other; a read_committed consumer sees every record once.
func TestServedKafkaExactlyOnce(t *testing.T) {
	a, cl, broker := kafkaServed(t, map[string]int32{"a.in": 1, "a.out": 1})
	ctx := t.Context()
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "a.in", Value: []byte(fmt.Sprintf(`{"n":%d}`, i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	job := a.submit(tokenA, fmt.Sprintf(`version: 1
name: eos
parallelism: 1
checkpointing: { interval: 100ms }
operators:
  - id: in
    source: { type: kafka, brokers: %q, topics: [a.in] }
  - id: out
    sink: { type: kafka, brokers: %q, topic: a.out, delivery: exactly-once, transactional-id-prefix: eos, transaction-timeout: 1m }
`, broker, broker))
	got := readTopic(t, cl, "a.out", 10, true)
	if strings.Join(got, " ") != strings.Join(numbered(10), " ") {
		t.Errorf("a.out (read_committed) holds %v", got)
	}
	txns, err := kadm.NewClient(cl).ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := txns.TransactionalIDs()
	want := "a-" + job.ID + "-eos-0-"
	if len(ids) == 0 {
		t.Fatal("the brokers list no transactional id")
	}
	for _, id := range ids {
		if !strings.HasPrefix(id, want) {
			t.Errorf("transactional id %q does not start with %q (tenant, job id, the pipeline's prefix, subtask)", id, want)
		}
	}
	a.ok(tokenA, "POST", "/v1/jobs/"+job.ID+"/cancel", nil, http.StatusOK, nil)
}

// TestServedKafkaRefusals: what the server's Kafka policy refuses is a
// lint problem at the connector's line, saying what to do: a broker the
// server does not offer, the tenant's own credentials, another tenant's
// topics and groups, a pattern that may match them, a topic taken from
// each record; and with no kafka-brokers no Kafka at all.
func TestServedKafkaRefusals(t *testing.T) {
	a, _, broker := kafkaServed(t, map[string]int32{"a.in": 1})
	for _, tc := range []struct{ source, sink, want string }{
		{"brokers: 'elsewhere:9092', topics: [a.in]", "topic: a.out",
			`5:13: operator in: source kafka: broker elsewhere:9092 is not one this server offers (kafka-brokers: ` + broker + `)`},
		{"topics: [a.in], sasl: { mechanism: PLAIN, username: me, password: x }", "topic: a.out",
			"5:13: operator in: source kafka: sasl is not a tenant's to give: this server connects to Kafka with its own credentials"},
		{"topics: [a.in]", "topic: a.out, tls: { ca-file: /etc/ssl/ca.pem }",
			"7:11: operator out: sink kafka: tls is not a tenant's to give"},
		{"topics: [a.in, b.secret]", "topic: a.out",
			`5:13: operator in: source kafka: topic "b.secret" is not tenant a's: its name must start with "a." (kafka-topic-prefix)`},
		{"topics: [a.in]", "topic: b.out",
			`7:11: operator out: sink kafka: topic "b.out" is not tenant a's: its name must start with "a."`},
		{"topic-pattern: '.*'", "topic: a.out",
			`5:13: operator in: source kafka: topic-pattern ".*" may match topics that are not tenant a's: begin it with a\.`},
		{"topics: [a.in], group-id: b.g", "topic: a.out",
			`5:13: operator in: source kafka: group-id "b.g" is not tenant a's`},
		{"topics: [a.in]", "topic-field: dest",
			`7:11: operator out: sink kafka: topic-field "dest" is not offered by this server`},
	} {
		src := fmt.Sprintf("version: 1\nname: k\noperators:\n  - id: in\n    source: { type: kafka, brokers: %q, %s }\n  - id: out\n    sink: { type: kafka, brokers: %q, %s }\n",
			broker, tc.source, broker, tc.sink)
		src = strings.Replace(src, fmt.Sprintf("brokers: %q, brokers:", broker), "brokers:", 1)
		r := a.do(tokenA, "POST", "/v1/jobs", []byte(src))
		if r.code != http.StatusBadRequest || !strings.Contains(r.errorJSON(t).Error, tc.want) {
			t.Errorf("%s | %s: %d %s\nwant %s", tc.source, tc.sink, r.code, r.body, tc.want)
		}
	}
	// a pattern that starts with the tenant's prefix is the tenant's
	own := a.submit(tokenA, fmt.Sprintf("version: 1\nname: k\noperators:\n  - id: in\n    source: { type: kafka, brokers: %q, topic-pattern: 'a\\..*', group-id: a.g }\n  - id: out\n    sink: { type: collect }\n", broker))
	a.ok(tokenA, "POST", "/v1/jobs/"+own.ID+"/cancel", nil, http.StatusOK, nil)

	hs, ss := testSettings(t)
	none := startAPI(t, hs, ss, nil)
	r := none.do(tokenA, "POST", "/v1/jobs", []byte(fmt.Sprintf("version: 1\nname: k\noperators:\n  - id: in\n    source: { type: kafka, brokers: %q, topics: [a.in] }\n  - id: out\n    sink: { type: collect }\n", broker)))
	if r.code != http.StatusBadRequest || !strings.Contains(r.errorJSON(t).Error, "source type kafka is not offered by this server") {
		t.Errorf("kafka without kafka-brokers: %d %s", r.code, r.body)
	}
}

// TestServedKafkaTypo: on a server that offers Kafka, a mistyped
// connector type is told the types the tenant may use, kafka among them.
func TestServedKafkaTypo(t *testing.T) {
	a, _, broker := kafkaServed(t, map[string]int32{"a.in": 1})
	r := a.do(tokenA, "POST", "/v1/jobs", []byte(fmt.Sprintf("version: 1\nname: k\noperators:\n  - id: in\n    source: { type: kafak, brokers: %q, topics: [a.in] }\n  - id: out\n    sink: { type: collect }\n", broker)))
	if e := r.errorJSON(t).Error; r.code != http.StatusBadRequest || !strings.Contains(e, `source type must be one of elements, generator, kafka, not "kafak" (did you mean "kafka"?)`) {
		t.Errorf("%d %s", r.code, e)
	}
}
