package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/pipeline"
)

// ackRecorder is the job master's side of CheckpointAcks in these tests:
// it keeps every acknowledgement and decline.
type ackRecorder struct {
	mu       sync.Mutex
	acks     map[checkpoint.ID]map[checkpoint.Task]int
	states   map[checkpoint.ID][]checkpoint.SubtaskState
	metrics  map[checkpoint.ID]map[checkpoint.Task]checkpoint.TaskMetrics
	declines map[checkpoint.ID][]declined
	changed  chan struct{}
	// onAck, when set, is called (unlocked) after each acknowledgement
	onAck func(id checkpoint.ID, acked int)
}

type declined struct {
	task   checkpoint.Task
	reason checkpoint.FailureReason
	cause  error
}

func newAckRecorder() *ackRecorder {
	return &ackRecorder{
		acks:     map[checkpoint.ID]map[checkpoint.Task]int{},
		states:   map[checkpoint.ID][]checkpoint.SubtaskState{},
		metrics:  map[checkpoint.ID]map[checkpoint.Task]checkpoint.TaskMetrics{},
		declines: map[checkpoint.ID][]declined{},
		changed:  make(chan struct{}, 1),
	}
}

func (r *ackRecorder) Acknowledge(task checkpoint.Task, id checkpoint.ID, states []checkpoint.SubtaskState, m checkpoint.TaskMetrics) {
	r.mu.Lock()
	if r.acks[id] == nil {
		r.acks[id] = map[checkpoint.Task]int{}
		r.metrics[id] = map[checkpoint.Task]checkpoint.TaskMetrics{}
	}
	r.acks[id][task]++
	r.metrics[id][task] = m
	r.states[id] = append(r.states[id], states...)
	n := len(r.acks[id])
	r.mu.Unlock()
	if r.onAck != nil {
		r.onAck(id, n)
	}
	r.poke()
}

func (r *ackRecorder) Decline(task checkpoint.Task, id checkpoint.ID, reason checkpoint.FailureReason, cause error) {
	r.mu.Lock()
	r.declines[id] = append(r.declines[id], declined{task, reason, cause})
	r.mu.Unlock()
	r.poke()
}

func (r *ackRecorder) poke() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// waitFor waits until cond (called under the lock) holds, checking at
// each acknowledgement and decline and every few milliseconds (for what
// the sinks got). It gives up after a minute: a hang, not a measurement.
func (r *ackRecorder) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-tick.C:
		case <-deadline:
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// waitAcked waits until every task of e acknowledged id, and checks that
// none did twice.
func (r *ackRecorder) waitAcked(t *testing.T, e *Execution, id checkpoint.ID) {
	t.Helper()
	tasks := e.Tasks()
	r.waitFor(t, fmt.Sprintf("every task to acknowledge checkpoint %d", id), func() bool { return len(r.acks[id]) >= len(tasks) })
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, task := range tasks {
		if n := r.acks[id][task]; n != 1 {
			t.Errorf("task %s acknowledged checkpoint %d %d times, want once", task, id, n)
		}
	}
	if len(r.acks[id]) != len(tasks) {
		t.Errorf("checkpoint %d: %d tasks acknowledged, the job has %d", id, len(r.acks[id]), len(tasks))
	}
	if d := r.declines[id]; len(d) > 0 {
		t.Errorf("checkpoint %d declined: %v", id, d)
	}
}

// publish writes what the tasks acknowledged checkpoint id with as a
// checkpoint under dir and opens it, as the job master does.
func (r *ackRecorder) publish(t *testing.T, dir string, id checkpoint.ID) *checkpoint.Reader {
	t.Helper()
	w, err := checkpoint.CreateCheckpoint(dir, "job", id)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	states := slices.Clone(r.states[id])
	r.mu.Unlock()
	var files []checkpoint.SubtaskFile
	for _, s := range states {
		f, err := w.Write(s)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := w.Publish(time.Now(), files); err != nil {
		t.Fatal(err)
	}
	rd, err := checkpoint.Open(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// ckConnectors are the fakes plus sources and sinks for checkpoint tests:
//
//   - with keys, a generator source is a CheckpointedSource: subtask i of p emits
//     {"k": n % keys, "v": n} for the n < count with n % p == i, in
//     batches of 10; with hold, after hold records it says so on held and
//     waits for its mailbox, yields to it and then emits nothing more
//     (a crash right after the checkpoint, as far as the output goes);
//   - a source whose operator id has a script runs the script;
//   - a sink whose id is in snapErr is a Snapshotter failing with it.
type ckConnectors struct {
	*fakeConnectors
	keys    int
	hold    int
	held    chan int
	scripts map[string]func(ctx context.Context, out Collector) error
	snapErr map[string]error
	// listen: sinks are CheckpointListeners, telling here what they heard
	listen chan string
}

func newCkConnectors() *ckConnectors {
	return &ckConnectors{fakeConnectors: newFakeConnectors(), held: make(chan int, 64),
		scripts: map[string]func(context.Context, Collector) error{}, snapErr: map[string]error{}}
}

func (c *ckConnectors) Source(spec *pipeline.Operator, subtask, p int) (Source, error) {
	if run := c.scripts[spec.ID]; run != nil {
		c.open.Add(1)
		return &scriptSource{f: c.fakeConnectors, run: run}, nil
	}
	if c.keys == 0 {
		return c.fakeConnectors.Source(spec, subtask, p)
	}
	c.open.Add(1)
	return &ckGen{c: c, subtask: subtask, p: p, count: spec.Source.Options["count"].(int), keys: c.keys}, nil
}

func (c *ckConnectors) Sink(spec *pipeline.Operator, subtask, p int) (Operator, error) {
	op, err := c.fakeConnectors.Sink(spec, subtask, p)
	if e := c.snapErr[spec.ID]; e != nil {
		return &failingSnapshotSink{Operator: op, err: e}, err
	}
	if c.listen != nil {
		return &listeningSink{Operator: op, heard: c.listen}, err
	}
	return op, err
}

type listeningSink struct {
	Operator
	heard chan string
}

func (s *listeningSink) NotifyCheckpointComplete(id checkpoint.ID) error {
	s.heard <- fmt.Sprint("complete ", id)
	return nil
}

func (s *listeningSink) NotifyCheckpointAborted(id checkpoint.ID) {
	s.heard <- fmt.Sprint("aborted ", id)
}

type failingSnapshotSink struct {
	Operator
	err error
}

func (s *failingSnapshotSink) SnapshotState(checkpoint.ID) (checkpoint.SubtaskState, error) {
	return checkpoint.SubtaskState{}, s.err
}
func (s *failingSnapshotSink) RestoreState(checkpoint.Restore) error { return nil }

type scriptSource struct {
	f   *fakeConnectors
	run func(ctx context.Context, out Collector) error
}

func (s *scriptSource) Open(*OpenContext) error                      { return nil }
func (s *scriptSource) Total() int64                                 { return -1 }
func (s *scriptSource) Close() error                                 { s.f.open.Add(-1); return nil }
func (s *scriptSource) Run(ctx context.Context, out Collector) error { return s.run(ctx, out) }

type ckGen struct {
	c                 *ckConnectors
	subtask, p        int
	count, keys, next int // next: records of this subtask emitted
}

func (g *ckGen) Open(*OpenContext) error { return nil }
func (g *ckGen) Total() int64            { return -1 }
func (g *ckGen) Close() error            { g.c.open.Add(-1); return nil }

func (g *ckGen) SnapshotState(checkpoint.ID) (split, union [][]byte, err error) {
	return [][]byte{binary.AppendUvarint(nil, uint64(g.next))}, nil, nil
}

func (g *ckGen) RestoreState(r checkpoint.Restore) error {
	if len(r.Split) != 1 {
		return fmt.Errorf("ckgen subtask %d: %d positions", g.subtask, len(r.Split))
	}
	n, _ := binary.Uvarint(r.Split[0])
	g.next = int(n)
	return nil
}

func (g *ckGen) Run(ctx context.Context, out Collector) error {
	var w abi.Writer
	for {
		w.Reset()
		for ; w.Count < 10; g.next++ {
			n := g.subtask + g.next*g.p
			if n >= g.count || g.c.hold > 0 && g.next == g.c.hold {
				break
			}
			w.Append(0, false, nil, enc("k", n%g.keys, "v", n))
		}
		if w.Count == 0 {
			break
		}
		g.c.emitted.Add(int64(w.Count))
		if err := out.Emit(0, w.Buf, w.Count); err != nil {
			return err
		}
	}
	if g.c.hold == 0 {
		return nil
	}
	g.c.held <- g.subtask
	if err := yieldOnce(ctx, out); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

const keyedCheckpointJob = `
version: 1
name: keyed
operators:
  - id: src
    parallelism: 2
    source: { type: generator, preset: sequence, count: %d }
  - id: total
    parallelism: 3
    key-by: k
    sum: v
  - id: out
    parallelism: 3
    sink: { type: discard }
`

// lastPerKey is the last value of field v the sink got for each key k.
func lastPerKey(conn *fakeConnectors) map[int64]int64 {
	last := map[int64]int64{}
	for _, r := range conn.records("out") {
		last[intField(r.Value, "k")] = intField(r.Value, "v")
	}
	return last
}

// TestCheckpointKeyedRestoreRescaled: barriers flow through a keyed job
// (source p=2 -> key-by -> sum p=3 -> sink), every task acknowledges
// checkpoint 1 exactly once, and a new execution restored from what they
// acknowledged — its sum at parallelism 2 and at 4, so keyed state moves
// by key group — ends with the per-key totals of an uninterrupted run.
func TestCheckpointKeyedRestoreRescaled(t *testing.T) {
	const count, hold = 2000, 300 // per source subtask: 300 before the checkpoint, 700 after
	want := map[int64]int64{}
	for n := int64(0); n < count; n++ {
		want[n%10] += n
	}
	for _, p := range []int{2, 4} {
		t.Run(fmt.Sprintf("sum at %d", p), func(t *testing.T) {
			job := fmt.Sprintf(keyedCheckpointJob, count)
			acks := newAckRecorder()
			conn := newCkConnectors()
			conn.keys, conn.hold = 10, hold
			e, err := Start(context.Background(), planYAML(t, job, nil), Deps{Connectors: conn, Checkpoints: acks})
			if err != nil {
				t.Fatal(err)
			}
			<-conn.held
			<-conn.held
			if err := e.TriggerCheckpoint(1, checkpoint.KindCheckpoint, time.Now(), false); err != nil {
				t.Fatal(err)
			}
			acks.waitAcked(t, e, 1)
			rd := acks.publish(t, t.TempDir(), 1)
			e.Cancel()
			if _, err := e.Wait(); !errors.Is(err, context.Canceled) {
				t.Fatalf("first run: %v", err)
			}
			// the first run's sink got the totals up to the checkpoint
			before := lastPerKey(conn.fakeConnectors)
			if len(before) != 10 {
				t.Fatalf("before the checkpoint the sink saw %d keys", len(before))
			}

			conn2 := newCkConnectors()
			conn2.keys = 10
			edit := func(pl *pipeline.Pipeline) { pl.Operators[1].Parallelism = p; pl.Operators[2].Parallelism = p }
			_, err = Run(context.Background(), planYAML(t, job, edit), Deps{Connectors: conn2, Restore: rd})
			if err != nil {
				t.Fatal(err)
			}
			if n := conn2.emitted.Load(); n != count-2*hold {
				t.Fatalf("restored sources emitted %d records, want the %d after the checkpoint", n, count-2*hold)
			}
			got := lastPerKey(conn2.fakeConnectors)
			for k, v := range want {
				if got[k] != v {
					t.Errorf("key %d: total %d after the restore, want %d (uninterrupted)", k, got[k], v)
				}
			}
			if n := conn2.open.Load(); n != 0 {
				t.Errorf("%d instances left open", n)
			}
		})
	}
}

// alignmentJob: two sources of one record batch at a time into one sink.
const alignmentJob = `
version: 1
name: align
operators:
  - id: a
    source: { type: elements, values: [x] }
  - id: b
    source: { type: elements, values: [x] }
  - id: out
    input: [a, b]
    sink: { type: discard }
`

func emitValues(out Collector, vals ...string) error {
	var w abi.Writer
	for _, v := range vals {
		w.Append(0, false, nil, abi.AppendStr(nil, v))
	}
	return out.Emit(0, w.Buf, w.Count)
}

// yieldOnce waits for the source's mailbox and does its mail (injects
// the barrier).
func yieldOnce(ctx context.Context, out Collector) error {
	mb := out.(SourceMailbox)
	select {
	case <-mb.Pending():
		return mb.Yield()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// scriptA is source a of alignmentJob: it emits a1..a3, closes ready,
// injects its barrier, emits each of after (a batch each), closes post and
// waits for the end.
func scriptA(ready, post chan struct{}, after ...[]string) func(context.Context, Collector) error {
	return func(ctx context.Context, out Collector) error {
		if err := emitValues(out, "a1", "a2", "a3"); err != nil {
			return err
		}
		close(ready)
		if err := yieldOnce(ctx, out); err != nil {
			return err
		}
		for _, vals := range after {
			if err := emitValues(out, vals...); err != nil {
				return err
			}
		}
		close(post)
		<-ctx.Done()
		return ctx.Err()
	}
}

// checkpointAlignmentJob starts alignmentJob in mode with batches of
// one record, triggers checkpoint 1 once ready closed and waits until
// every task acknowledged it.
func checkpointAlignmentJob(t *testing.T, conn *ckConnectors, mode checkpoint.Mode, ready chan struct{}) (*Execution, *ackRecorder) {
	t.Helper()
	acks := newAckRecorder()
	e, err := Start(context.Background(), planYAML(t, alignmentJob, nil), Deps{Connectors: conn, Checkpoints: acks,
		Options: Options{BatchSize: 1, CheckpointMode: mode}})
	if err != nil {
		t.Fatal(err)
	}
	<-ready
	if err := e.TriggerCheckpoint(1, checkpoint.KindCheckpoint, time.Now(), false); err != nil {
		t.Fatal(err)
	}
	acks.waitAcked(t, e, 1)
	return e, acks
}

func sinkOrder(conn *fakeConnectors) []string {
	var got []string
	for _, r := range conn.records("out") {
		got = append(got, strings.Trim(r.JSON, `"`))
	}
	return got
}

// TestCheckpointAlignmentBlocksFastChannel: with exactly-once, what source
// a emits after its barrier is held back at the sink until b's barrier
// came, even though it reached the sink's gate before b's records: the
// sink sees b1..b3 (before b's barrier) before a4..a6 (after a's).
func TestCheckpointAlignmentBlocksFastChannel(t *testing.T) {
	conn := newCkConnectors()
	aReady, aPost := make(chan struct{}), make(chan struct{})
	// batch size 1: each record is in the sink's gate when Emit returns
	conn.scripts["a"] = scriptA(aReady, aPost, []string{"a4", "a5", "a6"})
	conn.scripts["b"] = func(ctx context.Context, out Collector) error {
		select {
		case <-aPost:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := emitValues(out, "b1", "b2", "b3"); err != nil { // the barrier goes after this batch
			return err
		}
		if err := emitValues(out, "b4"); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	}
	e, acks := checkpointAlignmentJob(t, conn, checkpoint.ExactlyOnce, aReady)
	acks.waitFor(t, "the sink to get every record", func() bool { return len(conn.records("out")) == 10 })
	e.Cancel()
	e.Wait()
	got := sinkOrder(conn.fakeConnectors)
	pos := func(v string) int { return slices.Index(got, v) }
	for _, b := range []string{"b1", "b2", "b3"} {
		if pos(b) > pos("a4") {
			t.Fatalf("the sink saw %s after a4, which came after a's barrier: %v", b, got)
		}
	}
	if m := acks.metrics[1][checkpoint.Task{Vertex: "out", Subtask: 0}]; m.Alignment <= 0 {
		t.Errorf("the sink's alignment was %v", m.Alignment)
	}
}

// TestCheckpointAtLeastOnceDoesNotBlock: with at-least-once nothing is
// held back: source b sends its records and barrier only once the sink
// has seen what a emitted after its barrier, which exactly-once would
// never let through, and the checkpoint still completes.
func TestCheckpointAtLeastOnceDoesNotBlock(t *testing.T) {
	conn := newCkConnectors()
	aReady := make(chan struct{})
	sawA6 := make(chan struct{})
	var once sync.Once
	conn.before["out"] = func(int) {
		if slices.Contains(sinkOrder(conn.fakeConnectors), "a6") {
			once.Do(func() { close(sawA6) })
		}
	}
	// a7: the sink sees a6 before it processes a7
	conn.scripts["a"] = scriptA(aReady, make(chan struct{}), []string{"a4", "a5", "a6"}, []string{"a7"})
	conn.scripts["b"] = func(ctx context.Context, out Collector) error {
		select {
		case <-sawA6:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := emitValues(out, "b1"); err != nil { // the barrier goes after it
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	}
	e, _ := checkpointAlignmentJob(t, conn, checkpoint.AtLeastOnce, aReady)
	e.Cancel()
	e.Wait()
	got := sinkOrder(conn.fakeConnectors)
	if slices.Index(got, "a4") > slices.Index(got, "b1") {
		t.Fatalf("a4 after b1: %v", got)
	}
}

const stopJob = `
version: 1
name: stop
parallelism: 2
operators:
  - id: src
    source: { type: generator, preset: sequence }
  - id: total
    key-by: n
    count: true
  - id: out
    sink: { type: discard }
`

// TestCheckpointStopWithSavepoint: the sources of an unbounded job end
// after the barrier of a stop-with-savepoint; the tasks wait for its
// outcome; once it completed the job finishes, every record emitted having
// reached the sink. If it is aborted instead, the job fails.
func TestCheckpointStopWithSavepoint(t *testing.T) {
	for _, complete := range []bool{true, false} {
		t.Run(fmt.Sprint("complete ", complete), func(t *testing.T) {
			conn := newCkConnectors()
			acks := newAckRecorder()
			e, err := Start(context.Background(), planYAML(t, stopJob, nil), Deps{Connectors: conn, Checkpoints: acks})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.TriggerCheckpoint(1, checkpoint.KindSavepoint, time.Now(), true); err != nil {
				t.Fatal(err)
			}
			acks.waitAcked(t, e, 1)
			select {
			case <-e.Done():
				t.Fatal("the job ended before the savepoint's outcome")
			default:
			}
			if complete {
				e.NotifyCheckpointComplete(1)
			} else {
				e.NotifyCheckpointAborted(1)
			}
			_, err = e.Wait()
			if !complete {
				if err == nil || !strings.Contains(err.Error(), "stop-with-savepoint 1 was aborted") {
					t.Fatalf("after the abort: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, emitted := int64(len(conn.records("out"))), conn.emitted.Load(); got != emitted || got == 0 {
				t.Fatalf("the sink got %d records, the sources emitted %d", got, emitted)
			}
			if n := conn.open.Load(); n != 0 {
				t.Errorf("%d instances left open", n)
			}
		})
	}
}

// TestCheckpointAndSavepointInFlight: a savepoint triggered while a
// checkpoint is in flight (the coordinator starts savepoints at once)
// sends a second barrier behind the first; each task with two input
// channels aligns them one after the other and both complete.
func TestCheckpointAndSavepointInFlight(t *testing.T) {
	for _, mode := range []checkpoint.Mode{checkpoint.ExactlyOnce, checkpoint.AtLeastOnce} {
		t.Run(mode.String(), func(t *testing.T) {
			conn := newCkConnectors()
			acks := newAckRecorder()
			e, err := Start(context.Background(), planYAML(t, stopJob, nil), Deps{Connectors: conn, Checkpoints: acks, Options: Options{CheckpointMode: mode}})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.TriggerCheckpoint(1, checkpoint.KindCheckpoint, time.Now(), false); err != nil {
				t.Fatal(err)
			}
			if err := e.TriggerCheckpoint(2, checkpoint.KindSavepoint, time.Now(), false); err != nil {
				t.Fatal(err)
			}
			if err := e.TriggerCheckpoint(2, checkpoint.KindCheckpoint, time.Now(), false); err == nil {
				t.Fatal("an id triggered twice")
			}
			acks.waitAcked(t, e, 1)
			acks.waitAcked(t, e, 2)
			e.Cancel()
			e.Wait()
		})
	}
}

// TestCheckpointSnapshotErrorDeclines: a Snapshotter whose snapshot fails
// declines the checkpoint, naming operator and subtask, while the other
// tasks acknowledge; the job goes on.
func TestCheckpointSnapshotErrorDeclines(t *testing.T) {
	conn := newCkConnectors()
	conn.snapErr["out"] = errors.New("disk full")
	acks := newAckRecorder()
	e, err := Start(context.Background(), planYAML(t, stopJob, nil), Deps{Connectors: conn, Checkpoints: acks})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.TriggerCheckpoint(1, checkpoint.KindCheckpoint, time.Now(), false); err != nil {
		t.Fatal(err)
	}
	// the sink is chained to total: total's two subtasks decline, the sources acknowledge
	acks.waitFor(t, "two declines and two acks", func() bool { return len(acks.declines[1]) == 2 && len(acks.acks[1]) == 2 })
	for _, d := range acks.declines[1] {
		if d.reason != checkpoint.ReasonDeclined || d.task.Vertex != "total" || !strings.Contains(d.cause.Error(), `operator "out" (subtask `) || !strings.Contains(d.cause.Error(), "disk full") {
			t.Errorf("decline %+v", d)
		}
	}
	select {
	case <-e.Done():
		t.Fatal("a declined checkpoint ended the job")
	default:
	}
	e.Cancel()
	e.Wait()
}

// TestCheckpointFinishedTaskAcknowledges: a source that ended
// acknowledges a later checkpoint at once with the position it ended at;
// the job master may complete the checkpoint from inside Acknowledge,
// and a sink that listens hears it on its own goroutine.
func TestCheckpointFinishedTaskAcknowledges(t *testing.T) {
	conn := newCkConnectors()
	conn.keys = 2 // a: a checkpointed generator of 20 records, which ends
	conn.listen = make(chan string, 4)
	conn.scripts["b"] = func(ctx context.Context, out Collector) error {
		for { // does its mail until cancelled
			if err := yieldOnce(ctx, out); err != nil {
				return err
			}
		}
	}
	job := strings.Replace(alignmentJob, "source: { type: elements, values: [x] }", "source: { type: generator, preset: sequence, count: 20 }", 1)
	acks := newAckRecorder()
	e, err := Start(context.Background(), planYAML(t, job, nil), Deps{Connectors: conn, Checkpoints: acks})
	if err != nil {
		t.Fatal(err)
	}
	acks.onAck = func(id checkpoint.ID, n int) {
		if n == len(e.Tasks()) {
			e.NotifyCheckpointComplete(id) // from inside Acknowledge
		}
	}
	a := e.subtasks[e.job.Operators[0].Task][0]
	acks.waitFor(t, "source a to end", func() bool {
		e.ckpt.mu.Lock()
		defer e.ckpt.mu.Unlock()
		return a.ck.finished
	})
	if err := e.TriggerCheckpoint(1, checkpoint.KindCheckpoint, time.Now(), false); err != nil {
		t.Fatal(err)
	}
	acks.waitAcked(t, e, 1)
	if heard := <-conn.listen; heard != "complete 1" {
		t.Fatalf("the sink heard %q", heard)
	}
	var pos []checkpoint.SubtaskState
	for _, st := range acks.states[1] {
		if st.Operator == "a" {
			pos = append(pos, st)
		}
	}
	if len(pos) != 1 || len(pos[0].Split) != 1 || pos[0].Split[0][0] != 20 {
		t.Fatalf("source a acknowledged with %+v, want its position at the end (20)", pos)
	}
	e.Cancel()
	e.Wait()
}

// For the tests of package runtime_test (checkpoint_e2e_test.go).

// AckRecorder records acknowledgements and declines.
type AckRecorder = ackRecorder

func NewAckRecorder() *AckRecorder { return newAckRecorder() }

// WaitAcked waits until every task of e acknowledged id once.
func (r *ackRecorder) WaitAcked(t *testing.T, e *Execution, id checkpoint.ID) { r.waitAcked(t, e, id) }

// Publish writes checkpoint id under dir and opens it.
func (r *ackRecorder) Publish(t *testing.T, dir string, id checkpoint.ID) *checkpoint.Reader {
	return r.publish(t, dir, id)
}

// TestCheckpointRefusals: checkpoints off, a BATCH job, state for an
// operator that cannot take it.
func TestCheckpointRefusals(t *testing.T) {
	conn := newCkConnectors()
	e, err := Start(context.Background(), planYAML(t, stopJob, nil), Deps{Connectors: conn})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.TriggerCheckpoint(1, checkpoint.KindCheckpoint, time.Now(), false); err == nil || !strings.Contains(err.Error(), "checkpointing is off") {
		t.Errorf("checkpointing off: %v", err)
	}
	e.Cancel()
	e.Wait()

	batch := strings.Replace(fmt.Sprintf(keyedCheckpointJob, 100), "name: keyed", "name: keyed\nmode: batch", 1)
	if _, err := Start(context.Background(), planYAML(t, batch, nil), Deps{Connectors: newCkConnectors(), Restore: stateFor{}}); err == nil || !strings.Contains(err.Error(), "BATCH job cannot start from a checkpoint") {
		t.Errorf("BATCH restore: %v", err)
	}
	e, err = Start(context.Background(), planYAML(t, batch, nil), Deps{Connectors: newCkConnectors(), Checkpoints: newAckRecorder()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.TriggerCheckpoint(1, checkpoint.KindCheckpoint, time.Now(), false); err == nil || !strings.Contains(err.Error(), "BATCH job takes no checkpoints") {
		t.Errorf("BATCH checkpoint: %v", err)
	}
	e.Wait()

	// keyed state for the sink, operator state for the sum
	for op, want := range map[string]string{"out": `keyed state for "out", which is not keyed now`, "total": `operator state for "total" (1 split`} {
		conn := newCkConnectors()
		conn.keys = 10
		_, err := Run(context.Background(), planYAML(t, fmt.Sprintf(keyedCheckpointJob, 100), nil), Deps{Connectors: conn, Restore: stateFor{op: op}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "restoring from a checkpoint") {
			t.Errorf("state for %s: %v, want %q", op, err, want)
		}
	}
}

// stateFor restores state of the wrong kind for operator op: keyed state
// for the sink, a split element for anything else.
type stateFor struct{ op string }

func (s stateFor) Restore(op string, _, _, _ int) (checkpoint.Restore, error) {
	switch {
	case op != s.op:
		return checkpoint.Restore{}, nil
	case op == "out":
		return checkpoint.Restore{KeyGroups: map[int][]byte{0: nil}}, nil
	}
	return checkpoint.Restore{Split: [][]byte{{1}}}, nil
}
