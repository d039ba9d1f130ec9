package runtime

import "github.com/sluicehq/sluice/host/plan"

// heldInput is the consuming side of BLOCKING exchanges (batch mode: the
// plan marks every edge that is not chained as blocking, as Flink's
// ALL_EXCHANGES_BLOCKING does). The task's head operator sees none of its
// input until every input channel has ended: the batches are copied as
// they arrive and handed to the operator, in arrival order, when the input
// ends. Flink writes a blocking partition out and schedules its consumer
// once the producer finished; on one machine the consumer runs from the
// start, so holding its input is what gives the same order of events: no
// record is processed while an upstream task is still producing.
//
// Keyed operators in batch mode already hold their input, sorted
// (sortedInput), and are not wrapped again. Like sortedInput, the input is
// held in memory: batch jobs are bounded.
type heldInput struct {
	inner   Operator
	data    []byte
	batches []heldBatch
	wm      deferredWatermark // given after the held input, in Close
}

// ProcessWatermark holds wm until the held input was fed (BATCH: the end
// of event time comes when the input ended, after its records).
func (h *heldInput) ProcessWatermark(wm int64, _ Collector) error {
	h.wm.hold(wm)
	return nil
}

type heldBatch struct {
	input, count int
	end          int // data[previous end:end]
}

func newHeldInput(inner Operator) *heldInput { return &heldInput{inner: inner} }

func (h *heldInput) Open(ctx *OpenContext) error { return h.inner.Open(ctx) }

// Process copies the batch; nothing reaches the operator yet.
func (h *heldInput) Process(input int, b []byte, count int, _ Collector) error {
	if count == 0 {
		return nil
	}
	h.data = append(h.data, b...)
	h.batches = append(h.batches, heldBatch{input: input, count: count, end: len(h.data)})
	return nil
}

// Close feeds the held input to the operator, then closes it. On teardown
// (out == nil) the held input is dropped.
func (h *heldInput) Close(out Collector) error {
	if out != nil {
		start := 0
		for _, b := range h.batches {
			if err := h.inner.Process(b.input, h.data[start:b.end], b.count, out); err != nil {
				h.release()
				h.inner.Close(nil) // release only: the job fails with err
				return err
			}
			start = b.end
		}
		if err := h.wm.give(h.inner, out); err != nil {
			h.release()
			h.inner.Close(nil)
			return err
		}
	}
	h.release()
	return h.inner.Close(out)
}

func (h *heldInput) release() { h.data, h.batches = nil, nil }

// blockingInput reports whether op reads a BLOCKING exchange.
func blockingInput(inputs []*plan.Edge) bool {
	for _, e := range inputs {
		if e.Blocking {
			return true
		}
	}
	return false
}
