package web

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/host/server"
)

// gaugeCollector exposes the sources' and sinks' own gauges
// (server.ConnectorGauge: a Kafka source's currentOffset, committedOffset
// and records-lag per topic and partition, a Kafka sink's transactions
// committed and aborted) as sluice_connector_<name>, the connector's
// Flink name with '-' as '_' (records-lag is sluice_connector_records_lag),
// labelled tenant, job_id, operator, subtask and the gauge's own labels
// (topic, partition). The set of series follows the running jobs'
// connectors, so it is an unchecked collector: it describes nothing ahead.
type gaugeCollector struct {
	monitor func() server.Monitor
}

func (gaugeCollector) Describe(chan<- *prometheus.Desc) {}

func (c gaugeCollector) Collect(ch chan<- prometheus.Metric) {
	descs := map[string]*prometheus.Desc{}
	for _, j := range c.monitor().Jobs {
		for _, op := range j.Metrics.Operators {
			for _, s := range op.Subtasks {
				for _, g := range s.Gauges {
					names := []string{"tenant", "job_id", "operator", "subtask"}
					values := []string{j.Tenant, j.ID, op.ID, strconv.Itoa(s.Subtask)}
					for _, l := range g.Labels {
						names = append(names, promName(l.Name))
						values = append(values, l.Value)
					}
					name := "sluice_connector_" + promName(g.Name)
					key := name + "\x00" + strings.Join(names, "\x00")
					d := descs[key]
					if d == nil {
						d = prometheus.NewDesc(name, "The "+op.Kind+" connector's "+g.Name+" (its Flink connector's metric of that name).", names, nil)
						descs[key] = d
					}
					m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, g.Value, values...)
					if err != nil {
						m = prometheus.NewInvalidMetric(d, err)
					}
					ch <- m
				}
			}
		}
	}
}

// promName is a gauge's or label's name as Prometheus allows it: letters,
// digits and '_', not starting with a digit.
func promName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}
