package kafka

import (
	"strconv"

	"github.com/sluicehq/sluice/host/runtime"
)

var (
	_ runtime.Gauges = (*Source)(nil)
	_ runtime.Gauges = (*Sink)(nil)
)

// Gauges are the source's Metrics as the engine shows them, with the
// names of Flink's Kafka source metrics: per partition (labels topic and
// partition) currentOffset, committedOffset and records-lag (-1 where not
// known yet).
func (s *Source) Gauges() []runtime.Gauge {
	m := s.Metrics()
	out := make([]runtime.Gauge, 0, 3*len(m.Partitions))
	for _, p := range m.Partitions {
		l := []runtime.Label{{Name: "topic", Value: p.Topic}, {Name: "partition", Value: strconv.Itoa(int(p.Partition))}}
		out = append(out,
			runtime.Gauge{Name: "currentOffset", Labels: l, Value: float64(p.CurrentOffset)},
			runtime.Gauge{Name: "committedOffset", Labels: l, Value: float64(p.CommittedOffset)},
			runtime.Gauge{Name: "records-lag", Labels: l, Value: float64(p.RecordsLag)})
	}
	return out
}

// Gauges are the sink's Metrics: records the brokers acknowledged,
// transactions committed and aborted.
func (s *Sink) Gauges() []runtime.Gauge {
	m := s.Metrics()
	return []runtime.Gauge{
		{Name: "records-acknowledged", Value: float64(m.Written)},
		{Name: "transactions-committed", Value: float64(m.Committed)},
		{Name: "transactions-aborted", Value: float64(m.Aborted)},
	}
}
