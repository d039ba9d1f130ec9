// Package watermark holds event time's pure parts, as Flink computes them:
// the strategies a source's watermarks: key names (Flink's
// WatermarkStrategy), the generator of a source subtask
// (BoundedOutOfOrdernessWatermarks wrapped in WatermarksWithIdleness,
// behind WatermarkToDataOutput's never-backwards output), and the valve
// that combines a task's input channels (StatusWatermarkValve). No
// goroutines, no clock: callers pass the time.
package watermark

import (
	"fmt"
	"math"
	"time"
)

// Strategy kinds, as the YAML names them.
const (
	BoundedOutOfOrderness = "bounded-out-of-orderness"
	Monotonous            = "monotonous"
	None                  = "none"
)

// Kinds are the strategy names in the order docs list them.
var Kinds = []string{BoundedOutOfOrderness, Monotonous, None}

// Timestamp formats of a field.
const (
	EpochMillis = "epoch-millis"
	RFC3339     = "rfc3339"
)

// Formats are the field formats a timestamp may have.
var Formats = []string{EpochMillis, RFC3339}

// DefaultInterval is Flink's pipeline.auto-watermark-interval.
const DefaultInterval = 200 * time.Millisecond

// Strategy is a source's watermark strategy.
type Strategy struct {
	Kind string // BoundedOutOfOrderness, Monotonous or None
	// MaxOutOfOrderness is the bound of bounded-out-of-orderness (0 for
	// monotonous).
	MaxOutOfOrderness time.Duration
	// Interval is the processing time between periodic emits.
	Interval time.Duration
	// Idleness marks the source subtask idle after that long without a
	// record; 0: never.
	Idleness time.Duration
	// Field, when set, is the top-level value field the event time is
	// read from (written into the envelope); "" reads the envelope's
	// event time.
	Field  string
	Format string // EpochMillis or RFC3339, for Field
}

// Active reports whether s generates watermarks (not nil, not none).
func (s *Strategy) Active() bool { return s != nil && s.Kind != None && s.Kind != "" }

// Bound is the out-of-orderness bound in milliseconds.
func (s *Strategy) Bound() int64 {
	if s.Kind == Monotonous {
		return 0
	}
	return s.MaxOutOfOrderness.Milliseconds()
}

// String describes s as host plan prints it.
func (s *Strategy) String() string {
	if s == nil || s.Kind == None || s.Kind == "" {
		return "none"
	}
	out := s.Kind
	if s.Kind == BoundedOutOfOrderness {
		out += " " + s.MaxOutOfOrderness.String()
	}
	out += ", every " + s.Interval.String()
	if s.Idleness > 0 {
		out += ", idle after " + s.Idleness.String()
	}
	if s.Field != "" {
		out += fmt.Sprintf(", time from field %s (%s)", s.Field, s.Format)
	} else {
		out += ", time from the envelope"
	}
	return out
}

// Min and Max are the first and the last watermark (Long.MIN_VALUE, and
// Watermark.MAX_WATERMARK at the end of input).
const (
	Min int64 = math.MinInt64
	Max int64 = math.MaxInt64
)
