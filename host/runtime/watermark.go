package runtime

// This file is the contract between the engine and operators that act on
// event time (issue #27). The engine delivers watermarks in order with the
// data: a task's input watermark is the minimum over its non-idle input
// channels (Flink's StatusWatermarkValve); a chain hands it to each
// operator in turn, upstream first.

import "math"

// MaxWatermark is the end of event time: the watermark a source emits when
// its input ends (and every task's input watermark once all its inputs
// ended), so that every event-time window and timer fires, as Flink's
// Watermark.MAX_WATERMARK.
const MaxWatermark int64 = math.MaxInt64

// MinWatermark is the watermark before any was seen (Long.MIN_VALUE in
// Flink): no event-time window can fire.
const MinWatermark int64 = math.MinInt64

// WatermarkOperator is an Operator whose output depends on event time: a
// window operator, a keyed process plugin with event-time timers. An
// operator that is not one passes watermarks through untouched.
type WatermarkOperator interface {
	Operator
	// ProcessWatermark tells the operator that its input watermark
	// advanced to wm (epoch milliseconds; MaxWatermark at the end of
	// input). It emits what wm completes (windows, timers) to out before
	// it returns; the engine then forwards wm downstream, so nothing the
	// operator emitted here is late for the next operator. It is never
	// called with a watermark lower than one it already saw.
	ProcessWatermark(wm int64, out Collector) error
}
