package runtime

import (
	"fmt"
	"strconv"
	"strings"
)

// Gauges is implemented by sources and sinks that have figures of their
// own, named as their Flink connector names them (a Kafka source's
// records-lag, currentOffset and committedOffset per partition). Snapshot
// calls it from any goroutine; the summary and host/web's Prometheus
// collector show what it returns.
type Gauges interface {
	Gauges() []Gauge
}

// Gauge is one figure of a connector subtask.
type Gauge struct {
	Name   string  // Flink's metric name: "records-lag", "currentOffset"
	Labels []Label // what it is about, in order: topic, partition
	Value  float64
}

// Label is one label of a Gauge.
type Label struct{ Name, Value string }

// labelText writes labels as the summary shows them: "topic txns partition 0".
func labelText(ls []Label) string {
	parts := make([]string, 0, 2*len(ls))
	for _, l := range ls {
		parts = append(parts, l.Name, l.Value)
	}
	return strings.Join(parts, " ")
}

// gaugeLines are the summary's lines of an operator's gauges: one per
// subtask and label set, its gauges in the order the connector gives them.
func gaugeLines(m OperatorMetrics) []string {
	var out []string
	for _, s := range m.Subtasks {
		var keys []string
		byKey := map[string][]string{}
		for _, g := range s.Gauges {
			k := labelText(g.Labels)
			if _, seen := byKey[k]; !seen {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], g.Name+" "+strconv.FormatFloat(g.Value, 'f', -1, 64))
		}
		for _, k := range keys {
			where := fmt.Sprintf("%s %q subtask %d", m.Kind, m.ID, s.Subtask)
			if k != "" {
				where += " " + k
			}
			out = append(out, where+": "+strings.Join(byKey[k], ", "))
		}
	}
	return out
}
