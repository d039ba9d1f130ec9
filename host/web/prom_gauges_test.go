package web

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/host/connector/kafka"
	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
	"github.com/sluicehq/sluice/host/server"
)

// sinkInto is a runtime.Collector that hands each batch to a sink, as a
// chained source and sink do.
type sinkInto struct{ s *kafka.Sink }

func (c sinkInto) Emit(_ int, buf []byte, count int) error { return c.s.Process(0, buf, count, nil) }

// TestPrometheusConnectorGauges: the Kafka source's and sink's gauges, as
// a job's metrics carry them, are scraped from /metrics's registry under
// sluice_connector_<Flink's name>, labelled by job, operator, subtask,
// topic and partition. A real source reads a kfake topic to its end (3
// and 2 records in its two partitions) straight into a real exactly-once
// sink, which commits its one transaction when the input ends.
func TestPrometheusConnectorGauges(t *testing.T) {
	c, err := kafkatest.Start(1, map[string]int32{"txns": 2, "out": 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := range 5 {
		recs = append(recs, &kgo.Record{Topic: "txns", Partition: int32(i % 2), Value: fmt.Appendf(nil, `{"n":%d}`, i)})
	}
	if err := c.Produce(ctx, true, recs...); err != nil {
		t.Fatal(err)
	}
	conn := kafka.Connection{Brokers: c.Addrs()}
	src, err := kafka.NewSource(kafka.SourceConfig{Operator: "in", Connection: conn, Topics: []string{"txns"}, Bounded: true}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := kafka.NewSink(kafka.SinkConfig{Operator: "out", Connection: conn, Topic: "out",
		Delivery: kafka.DeliveryExactlyOnce, TransactionalIDPrefix: "g"}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Open(nil); err != nil {
		t.Fatal(err)
	}
	if err := sink.Open(nil); err != nil {
		t.Fatal(err)
	}
	if err := src.Run(ctx, sinkInto{sink}); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(sinkInto{sink}); err != nil {
		t.Fatal(err)
	}
	src.Close()

	job := server.JobSample{Tenant: "a", ID: "j1", Metrics: server.JobMetrics{Operators: []server.OperatorMetrics{
		{ID: "in", Kind: "source", Subtasks: []server.OperatorSubtask{{Subtask: 0, Gauges: server.ConnectorGauges(src.Gauges())}}},
		{ID: "out", Kind: "sink", Subtasks: []server.OperatorSubtask{{Subtask: 0, Gauges: server.ConnectorGauges(sink.Gauges())}}},
	}}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(gaugeCollector{monitor: func() server.Monitor { return server.Monitor{Jobs: []server.JobSample{job}} }})
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	if rec.Code != 200 {
		t.Fatalf("scrape: %d\n%s", rec.Code, text)
	}
	job1 := []string{`tenant="a"`, `job_id="j1"`, `subtask="0"`}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		// partition 0 holds records 0, 2, 4 at offsets 0..2; partition 1 records 1, 3
		{"sluice_connector_currentOffset", []string{`operator="in"`, `topic="txns"`, `partition="0"`}, 2},
		{"sluice_connector_currentOffset", []string{`operator="in"`, `topic="txns"`, `partition="1"`}, 1},
		{"sluice_connector_records_lag", []string{`operator="in"`, `topic="txns"`, `partition="0"`}, 0},
		{"sluice_connector_committedOffset", []string{`operator="in"`, `partition="1"`}, -1}, // no group, no commit
		{"sluice_connector_records_acknowledged", []string{`operator="out"`}, 5},
		{"sluice_connector_transactions_committed", []string{`operator="out"`}, 1},
		{"sluice_connector_transactions_aborted", []string{`operator="out"`}, 0},
	} {
		v, ok := series(text, c.name, append(job1, c.labels...)...)
		if !ok || v != c.want {
			t.Errorf("%s{%s}: %v (found %v), want %v", c.name, strings.Join(c.labels, ","), v, ok, c.want)
		}
	}
	if !strings.Contains(text, "# TYPE sluice_connector_records_lag gauge") {
		t.Errorf("records_lag is not typed a gauge:\n%s", text)
	}
	if t.Failed() {
		t.Log(text)
	}
}
