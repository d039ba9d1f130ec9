package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/pipeline"
)

// quietConnectors: the elements source emits its records, then waits
// (quiet, its input open) until the test says it may end.
type quietConnectors struct {
	*fakeConnectors
	end chan struct{}
}

func (c *quietConnectors) Source(spec *pipeline.Operator, subtask, parallelism int) (Source, error) {
	s, err := c.fakeConnectors.Source(spec, subtask, parallelism)
	if err != nil {
		return nil, err
	}
	return &quietSource{Source: s, end: c.end}, nil
}

type quietSource struct {
	Source
	end chan struct{}
}

func (s *quietSource) Total() int64 { return -1 }

func (s *quietSource) Run(ctx context.Context, out Collector) error {
	if err := s.Source.Run(ctx, out); err != nil {
		return err
	}
	select {
	case <-s.end:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wallTimerOp has one wall-clock processing-time timer, 30 ms after its
// first record; when it fires it emits {"fired": 1} and lets the source end.
type wallTimerOp struct {
	due     int64
	pending bool
	fired   func()
	once    sync.Once
}

func (o *wallTimerOp) Open(*OpenContext) error { return nil }
func (o *wallTimerOp) Close(Collector) error   { return nil }
func (o *wallTimerOp) Process(_ int, _ []byte, count int, _ Collector) error {
	if count > 0 && o.due == 0 {
		o.due, o.pending = time.Now().UnixMilli()+30, true
	}
	return nil
}
func (o *wallTimerOp) NextProcessingTime() (int64, bool) { return o.due, o.pending }
func (o *wallTimerOp) OnProcessingTime(out Collector) error {
	if !o.pending || time.Now().UnixMilli() < o.due {
		return nil
	}
	o.pending = false
	o.once.Do(o.fired)
	return out.Emit(0, appendRecord(enc("fired", 1)), 1)
}

type wallTimerPlugins struct {
	fakePlugins
	op *wallTimerOp
}

func (p *wallTimerPlugins) Operator(opID, plugin string, subtask int) (Operator, error) {
	return p.op, nil
}

func appendRecord(value []byte) []byte {
	return append([]byte{0x93, 0xc0, 0xc0}, value...)
}

// TestWallClockTimerFiresWhileInputIsQuiet: a processing-time timer on
// the wall clock fires from the task's loop while no input arrives (the
// source waits for it), as Flink's mailbox runs a timer between records;
// the source ends only once the timer fired, so without the wake-up the
// job would wait until the test's context gives up.
func TestWallClockTimerFiresWhileInputIsQuiet(t *testing.T) {
	const src = `
version: 1
name: wall-timer
plugins:
  wall: { path: wall.wasm }
operators:
  - id: src
    source: { type: elements, values: [{k: a}] }
  - id: op
    key-by: k
    process: wall
  - id: out
    sink: { type: print }
`
	for _, checkpointed := range []bool{false, true} {
		conn := &quietConnectors{fakeConnectors: newFakeConnectors(), end: make(chan struct{})}
		plug := &wallTimerPlugins{op: &wallTimerOp{}}
		plug.op.fired = func() { close(conn.end) }
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		deps := Deps{Plugins: plug, Connectors: conn}
		if checkpointed {
			deps.Checkpoints = NewAckRecorder()
		}
		_, err := Run(ctx, planYAML(t, src, nil), deps)
		gaveUp := ctx.Err() != nil
		cancel()
		if errors.Is(err, context.DeadlineExceeded) || gaveUp {
			t.Fatalf("checkpointed=%v: the timer never fired while the input was quiet: %v", checkpointed, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := conn.jsons("out"); len(got) != 1 || got[0] != `{"fired":1}` {
			t.Fatalf("checkpointed=%v: out %q", checkpointed, got)
		}
	}
}
