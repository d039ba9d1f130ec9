package connector

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/host/connector/kafka"
	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// TestKafkaSpecs: the specs are complete, in Set and not offered to host
// serve's tenants, and the source ends only with bounded: latest.
func TestKafkaSpecs(t *testing.T) {
	for _, c := range []*spec.Connector{KafkaSource, KafkaSink} {
		for _, p := range spec.Incomplete(c) {
			t.Error(p)
		}
		if Set().Lookup(c.Role, "kafka") != c || c.Contained {
			t.Errorf("%s kafka: in Set %v, contained %v", c.Role, Set().Lookup(c.Role, "kafka") == c, c.Contained)
		}
	}
	if KafkaSource.BoundednessOf(map[string]any{"bounded": "latest"}) != spec.Bounded || KafkaSource.BoundednessOf(nil) != spec.Unbounded {
		t.Error("boundedness")
	}
}

func kafkaPipeline(source, sink string) string {
	return "version: 1\nname: k\noperators:\n  - id: in\n    source: { type: kafka, " + source + " }\n  - id: out\n    sink: { type: kafka, " + sink + " }\n"
}

// TestKafkaLint: the core's rules across options are lint's, at the
// option's line and column.
func TestKafkaLint(t *testing.T) {
	for _, tc := range []struct{ source, sink, want string }{
		{"brokers: 'h:1', topics: [a], topic-pattern: 'a.*'", "brokers: 'h:1', topic: b",
			`k.yaml:5:57: source kafka: topic-pattern give topics or topic-pattern, not both`},
		{"brokers: 'h:1'", "brokers: 'h:1', topic: b", `k.yaml:5:13: source kafka: topics is required (or topic-pattern)`},
		{"brokers: 'h:1', topics: [a], start: committed", "brokers: 'h:1', topic: b",
			`k.yaml:5:13: source kafka: group-id is required with start: committed`},
		{"brokers: 'nohost', topics: [a]", "brokers: 'h:1', topic: b", `k.yaml:5:28: source kafka: brokers "nohost" is not host:port`},
		{"topics: [a]", "brokers: 'h:1', topic: b", `k.yaml:5:13: source kafka needs brokers`},
		{"brokers: 'h:1', topics: [a], committed-fallback: earliest", "brokers: 'h:1', topic: b",
			`k.yaml:5:57: source kafka: committed-fallback applies only to start: committed`},
		{"brokers: 'h:1', topics: [a], discovery-interval: 30", "brokers: 'h:1', topic: b",
			`k.yaml:5:77: source kafka discovery-interval: 30 has no unit`},
		{"brokers: 'h:1', topics: [a]", "brokers: 'h:1', topic: b, delivery: exactly-once",
			`k.yaml:7:11: sink kafka: transactional-id-prefix is required with delivery: exactly-once`},
		{"brokers: 'h:1', topics: [a], tls: { cert-file: c }", "brokers: 'h:1', topic: b",
			`k.yaml:5:57: source kafka: tls.cert-file and tls.key-file go together`},
		{"brokers: 'h:1', topics: [a], sasl: { mechanism: GSSAPI, username: u }", "brokers: 'h:1', topic: b",
			`source kafka sasl mechanism must be one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, not "GSSAPI"`},
		{"brokers: 'h:1', topics: [a], max-partition-fetch-bytes: 0", "brokers: 'h:1', topic: b",
			`source kafka max-partition-fetch-bytes must be between 1 and 2147483647, not 0`},
		{"brokers: 'h:1', topics: [a], fetch-max-bytes: 4294967296", "brokers: 'h:1', topic: b",
			`source kafka fetch-max-bytes must be between 1 and 2147483647, not 4294967296`},
	} {
		_, err := pipeline.Parse("k.yaml", []byte(kafkaPipeline(tc.source, tc.sink)), pipeline.ParseOptions{Connectors: Set()})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s | %s:\n%v\nwant %s", tc.source, tc.sink, err, tc.want)
		}
	}
	p, err := pipeline.Parse("k.yaml", []byte(kafkaPipeline("brokers: 'h:1, g:2', topics: [a, 2024], key-format: raw, discovery-interval: 0, bounded: latest, max-partition-fetch-bytes: 131072",
		"brokers: 'h:1', topic: b, delivery: exactly-once, transactional-id-prefix: job, transaction-timeout: 1m")), pipeline.ParseOptions{Connectors: Set()})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := KafkaSourceConfig(p.Operator("in"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Brokers, " ") != "h:1 g:2" || strings.Join(cfg.Topics, " ") != "a 2024" || cfg.KeyFormat != kafka.FormatRaw ||
		cfg.DiscoveryInterval >= 0 || !cfg.Bounded || cfg.Timeout != kafka.DefaultTimeout || cfg.ClientID != "sluice" || cfg.Start != kafka.StartEarliest ||
		cfg.MaxPartitionFetchBytes != 128<<10 || cfg.FetchMaxBytes != 0 {
		t.Errorf("source config %+v", cfg)
	}
	sink := kafkaSinkConfig("out", newOptions("sink", "out", p.Operator("out").Sink))
	if sink.Delivery != kafka.DeliveryExactlyOnce || sink.TransactionalIDPrefix != "job" || sink.TransactionTimeout != time.Minute || sink.KeyFormat != kafka.FormatRaw {
		t.Errorf("sink config %+v", sink)
	}
}

// TestKafkaThroughTheEngine: a job reads a topic to its end (bounded:
// latest, so automatic runs it as batch) and writes each record to
// another topic; a record that does not decode goes to the dead-letter
// output with its topic, partition and offset; the engine counts the
// source's wait for fetches as idle time.
func TestKafkaThroughTheEngine(t *testing.T) {
	c, err := kafkatest.Start(1, map[string]int32{"in": 3, "out": 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := range 30 {
		v := fmt.Sprintf(`{"n":%d}`, i)
		if i == 7 {
			v = `{"n":` // does not decode
		}
		recs = append(recs, &kgo.Record{Topic: "in", Partition: int32(i % 3), Value: []byte(v)})
	}
	if err := c.Produce(ctx, true, recs...); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	brokers := strings.Join(c.Addrs(), ",")
	src := fmt.Sprintf(`version: 1
name: k
mode: automatic
parallelism: 2
operators:
  - id: in
    source: { type: kafka, brokers: %q, topics: [in], bounded: latest }
    on-error: dead-letter
  - id: out
    input: in
    sink: { type: kafka, brokers: %q, topic: out }
  - id: dead
    input: in.dead-letter
    parallelism: 1
    sink: { type: file, path: dead.jsonl }
`, brokers, brokers)
	p, err := pipeline.Parse(filepath.Join(dir, "k.yaml"), []byte(src), pipeline.ParseOptions{Connectors: Set()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Mode != pipeline.Batch {
		t.Errorf("mode %s: bounded: latest ends", g.Mode)
	}
	res, err := runtime.Run(ctx, g, runtime.Deps{Connectors: &Builtin{Root: dir}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadAll(ctx, "out", false)
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, r := range got {
		ns = append(ns, string(r.Value))
	}
	sort.Strings(ns)
	var want []string
	for i := range 30 {
		if i != 7 {
			want = append(want, fmt.Sprintf(`{"n":%d}`, i))
		}
	}
	sort.Strings(want)
	if strings.Join(ns, " ") != strings.Join(want, " ") {
		t.Errorf("out holds %v\nwant %v", ns, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, "dead.jsonl"))
	if err != nil {
		ents, _ := os.ReadDir(dir)
		for _, m := range res.Operators {
			t.Logf("%s: in %d out %d skipped %d", m.ID, m.RecordsIn, m.RecordsOut, m.Skipped)
		}
		t.Fatal(err, ents)
	}
	var dead map[string]any
	if err := json.Unmarshal(b, &dead); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if dead["input"] != "kafka topic in partition 1 offset 2" || dead["record"] != `{"n":` || dead["operator"] != "in" {
		t.Errorf("dead letter %s", b)
	}
	m := res.Operator("in")
	if m == nil || m.RecordsOut != 30 { // 29 records and a dead letter
		t.Fatalf("source metrics %+v", m)
	}
	// Flink's Kafka source metrics, per partition: 10 records each, read
	// to the end
	gauges := map[string]float64{}
	for _, s := range m.Subtasks {
		for _, g := range s.Gauges {
			gauges[fmt.Sprintf("%s %s", g.Name, runtimeLabels(g.Labels))] = g.Value
		}
	}
	for p := range 3 {
		for name, want := range map[string]float64{"currentOffset": 9, "records-lag": 0, "committedOffset": -1} {
			k := fmt.Sprintf("%s topic=in partition=%d", name, p)
			if got, ok := gauges[k]; !ok || got != want {
				t.Errorf("%s = %v (present %v), want %v; all: %v", k, got, ok, want, gauges)
			}
		}
	}
	var acked float64
	for _, s := range res.Operator("out").Subtasks {
		for _, g := range s.Gauges {
			if g.Name == "records-acknowledged" {
				acked += g.Value
			}
		}
	}
	if acked != 29 {
		t.Errorf("the sink's records-acknowledged sum to %v, want 29", acked)
	}
}

// TestKafkaSourceWaitIsIdle: the time an unbounded source waits for
// fetches counts as its idle time, not busy time.
func TestKafkaSourceWaitIsIdle(t *testing.T) {
	c, err := kafkatest.Start(1, map[string]int32{"in": 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	src := fmt.Sprintf("version: 1\nname: k\noperators:\n  - id: in\n    source: { type: kafka, brokers: %q, topics: [in] }\n  - id: out\n    sink: { type: discard }\n",
		strings.Join(c.Addrs(), ","))
	p, err := pipeline.Parse("k.yaml", []byte(src), pipeline.ParseOptions{Connectors: Set()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := runtime.Start(ctx, g, runtime.Deps{Connectors: &Builtin{}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e.Cancel(); _, _ = e.Wait() }()
	if err := c.Produce(ctx, true, &kgo.Record{Topic: "in", Value: []byte(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	// once its record is out the source only waits for the broker: from
	// then on its idle time grows, and its busy time hardly does (its
	// start, compiling and connecting, was busy, and under the race
	// detector a long one: so the two are compared from then on)
	var first runtime.SubtaskMetrics
	for {
		m := e.Snapshot().Operator("in")
		if m != nil && m.RecordsOut == 1 {
			st := m.Subtasks[0]
			if first.IdleMs == 0 && first.BusyMs == 0 {
				first = st
			} else if st.IdleMs-first.IdleMs >= 500 {
				if busy := st.BusyMs - first.BusyMs; busy > st.IdleMs-first.IdleMs {
					t.Errorf("over %d ms of waiting for the broker the source was busy %d ms: waiting is idle", st.IdleMs-first.IdleMs, busy)
				}
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no idle time counted: %+v", m)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func runtimeLabels(ls []runtime.Label) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, l.Name+"="+l.Value)
	}
	return strings.Join(parts, " ")
}
