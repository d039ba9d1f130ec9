package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/pipeline"
)

// clockSinks are ckConnectors whose sinks move the fake clock on by step
// in every Process: time spent processing, as a slow operator spends it.
type clockSinks struct {
	*ckConnectors
	clock *fakeClock
	step  time.Duration
}

func (c *clockSinks) Sink(spec *pipeline.Operator, subtask, p int) (Operator, error) {
	op, err := c.ckConnectors.Sink(spec, subtask, p)
	return &clockSink{Operator: op, c: c}, err
}

type clockSink struct {
	Operator
	c *clockSinks
}

func (s *clockSink) Process(input int, b []byte, count int, out Collector) error {
	s.c.clock.add(s.c.step * time.Duration(count))
	return s.Operator.Process(input, b, count, out)
}

const slowAlignmentJob = `
version: 1
name: slowalign
plugins:
  side: { path: side.wasm }
operators:
  - id: a
    source: { type: elements, values: [x] }
  - id: b
    source: { type: elements, values: [x] }
  - id: both
    connect: [a, b]
    co-map: side
  - id: out
    sink: { type: discard }
`

// TestSlowAlignmentCompletesAndIsReported: a two-input operator whose
// second input is back-pressured (six records into four buffers, each
// taking 50 ms to process) while the first input's barrier has come. The
// first input is blocked, the checkpoint waits for the second's barrier
// behind its data — and completes, with an alignment time of exactly the
// 300 ms the six records took, which the coordinator's checkpoint stats
// report for the task (SubtaskStats.Alignment, the REST API's
// alignment_duration_ms).
func TestSlowAlignmentCompletesAndIsReported(t *testing.T) {
	conn := &clockSinks{ckConnectors: newCkConnectors(), clock: newFakeClock(), step: 50 * time.Millisecond}
	aEmitted, aDone, bGo := make(chan struct{}), make(chan struct{}), make(chan struct{})
	conn.scripts["a"] = func(ctx context.Context, out Collector) error {
		if err := emitValues(out, "a1"); err != nil {
			return err
		}
		close(aEmitted)
		if err := yieldOnce(ctx, out); err != nil { // the barrier
			return err
		}
		close(aDone)
		<-ctx.Done()
		return nil
	}
	conn.scripts["b"] = func(ctx context.Context, out Collector) error {
		select {
		case <-bGo:
		case <-ctx.Done():
			return nil
		}
		// six records, one buffer each, into a channel of four: the emit
		// waits for the co-map (back-pressure); the barrier follows them
		if err := emitValues(out, "b1", "b2", "b3", "b4", "b5", "b6"); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	}
	acks := newAckRecorder()
	job := planYAML(t, slowAlignmentJob, nil)
	e, err := Start(context.Background(), job, conn.clock.deps(Deps{Plugins: newFakePlugins(), Connectors: conn, Checkpoints: acks,
		Options: Options{BatchSize: 1, Linger: time.Hour, QueueCapacity: 4}}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e.Cancel(); e.Wait() }()
	coord, err := checkpoint.NewCoordinator(checkpoint.Config{Interval: time.Second, Mode: checkpoint.ExactlyOnce, Timeout: time.Hour, MaxConcurrent: 1, Retain: 1}, e.Tasks(), checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(0, 0)
	coord.Start(t0)
	var inject checkpoint.Inject
	for _, a := range coord.Tick(t0.Add(time.Second)) {
		if in, ok := a.(checkpoint.Inject); ok {
			inject = in
		}
	}
	if inject.ID == 0 {
		t.Fatal("the coordinator triggered nothing")
	}
	<-aEmitted // before the trigger: a's barrier comes from its yield
	if err := e.TriggerCheckpoint(inject.ID, inject.Kind, inject.Timestamp, false); err != nil {
		t.Fatal(err)
	}
	<-aDone // a's barrier is in the gate, behind a1
	close(bGo)
	acks.waitAcked(t, e, inject.ID)

	both := checkpoint.Task{Vertex: "both", Subtask: 0}
	acks.mu.Lock()
	m := acks.metrics[inject.ID]
	acks.mu.Unlock()
	if got := m[both].Alignment; got != 300*time.Millisecond {
		t.Errorf("alignment at the co-map: %v, want the 300 ms its second input's six records took", got)
	}
	for task, tm := range m {
		if task != both && tm.Alignment != 0 {
			t.Errorf("%s aligned for %v, want 0 (one input channel or none)", task, tm.Alignment)
		}
	}
	var done []checkpoint.Action
	for task, tm := range m {
		done = append(done, coord.Ack(t0.Add(2*time.Second), checkpoint.Ack{Task: task, ID: inject.ID, Metrics: tm})...)
	}
	if len(done) != 1 {
		t.Fatalf("after every ack the coordinator did %v, want the metadata written", done)
	}
	coord.MetadataWritten(t0.Add(3*time.Second), inject.ID)
	st := coord.Stats()
	if st.NumberOfCompletedCheckpoints != 1 || len(st.History) == 0 {
		t.Fatalf("stats: %+v", st)
	}
	var cs checkpoint.CheckpointStats // the next one may have been triggered
	for _, h := range st.History {
		if h.ID == inject.ID {
			cs = h
		}
	}
	if cs.Status != checkpoint.StatusCompleted {
		t.Fatalf("checkpoint %d: %+v, want completed", inject.ID, cs)
	}
	found := false
	for _, s := range cs.Subtasks {
		if s.Task == both {
			found = true
			if s.Alignment != 300*time.Millisecond {
				t.Errorf("the stats report alignment %v for %s, want 300ms", s.Alignment, both)
			}
		}
	}
	if !found {
		t.Errorf("the stats have no line for %s: %+v", both, cs.Subtasks)
	}
}
