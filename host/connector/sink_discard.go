package connector

import (
	"sync/atomic"

	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

func init() {
	registerSink(spec.Discard, func(_ *Builtin, o *options, _ *pipeline.Operator, _, _ int) (runtime.Operator, error) {
		return newDiscardSink(o)
	})
}

// discardSink counts records and drops them (Flink's DiscardingSink).
type discardSink struct {
	records atomic.Int64
	bytes   atomic.Int64
}

func newDiscardSink(o *options) (*discardSink, error) {
	if err := o.finish(); err != nil {
		return nil, err
	}
	return &discardSink{}, nil
}

func (d *discardSink) Open(*runtime.OpenContext) error { return nil }

func (d *discardSink) Process(_ int, batch []byte, count int, _ runtime.Collector) error {
	d.records.Add(int64(count))
	d.bytes.Add(int64(len(batch)))
	return nil
}

func (d *discardSink) Close(runtime.Collector) error { return nil }

// Records is how many records were dropped; safe from any goroutine.
func (d *discardSink) Records() int64 { return d.records.Load() }

// Bytes is how many bytes of batches were dropped.
func (d *discardSink) Bytes() int64 { return d.bytes.Load() }
