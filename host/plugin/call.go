package plugin

import (
	"fmt"

	"github.com/sluicehq/sluice/abi"
)

// outMode is what a call may emit.
type outMode uint8

const (
	outNone     outMode = iota // buffer, _initialize, open: nothing
	outRecords                 // process, close: count envelopes per emit
	outValues                  // describe, key selector: count msgpack values on port 0
	outChannels                // partition: count little-endian i32 on port 0
	outState                   // snapshot: count msgpack values on port 0, bounded by the memory limit
)

// call is the state of the call in progress: its buffered output and
// what went wrong in host calls.
type call struct {
	export string
	mode   outMode
	out    []byte     // every emitted byte, in emit order
	emits  []emitSpan // where each emit lies in out
	ends   []byte     // the checked record ends of emits that gave them (abi.ImportEmitEnds's layout)
	bytes  int        // what max-output-bytes counts: out, the ends given, emitOverhead an emit
	count  int        // records (values, channels) emitted
	// errText is the guest's text from the error host call.
	errText []byte
	// violation breaks the ABI and poisons the instance; refusal fails
	// the call only. The first of each is kept.
	violation  error
	refusal    error
	failStatus abi.Status
}

// emitSpan is one emit: out[start:end] holds count records for port;
// when ends >= 0, ends[ends:ends+4*count] say where they end, checked.
type emitSpan struct{ port, start, end, count, ends int }

func (c *call) reset(export string, mode outMode) {
	c.export, c.mode = export, mode
	c.out, c.emits, c.ends = c.out[:0], c.emits[:0], c.ends[:0]
	c.bytes, c.count = 0, 0
	c.errText = c.errText[:0]
	c.violation, c.refusal, c.failStatus = nil, nil, 0
}

// failed reports whether a host call already failed this call.
func (c *call) failed() bool { return c.violation != nil || c.refusal != nil }

// violate records an ABI violation and returns the status for the guest.
func (c *call) violate(format string, args ...any) abi.Status {
	if c.violation == nil {
		c.violation = fmt.Errorf("%w: %s", ErrABI, fmt.Sprintf(format, args...))
		c.failStatus = abi.StatusHost
	}
	return abi.StatusHost
}

// refuse records a refused host call and returns st for the guest.
func (c *call) refuse(st abi.Status, err error) abi.Status {
	if c.refusal == nil {
		c.refusal, c.failStatus = err, st
	}
	return st
}

// checkOutput checks that b holds count items of the call's kind.
func checkOutput(mode outMode, b []byte, count int) error {
	switch mode {
	case outChannels:
		if len(b) != 4*count {
			return fmt.Errorf("%d bytes for %d channel indices, want %d (4 per index)", len(b), count, 4*count)
		}
	case outValues, outState:
		off := 0
		for i := 0; i < count; i++ {
			end, err := abi.Skip(b, off)
			if err != nil {
				return fmt.Errorf("value %d of %d: %w", i+1, count, err)
			}
			off = end
		}
		if off != len(b) {
			return fmt.Errorf("%d bytes left after %d values", len(b)-off, count)
		}
	case outRecords:
		if err := abi.CheckBatch(b, count); err != nil {
			return err
		}
	}
	return nil
}
