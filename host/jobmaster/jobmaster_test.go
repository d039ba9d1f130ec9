package jobmaster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/restartstrategy"
	"github.com/sluicehq/sluice/host/runtime"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeEngine starts fakeExecs: tasks src[0], sum[0], sum[1]; each acks a
// checkpoint at once, from TriggerCheckpoint as the engine does for ended
// tasks, unless behave says otherwise.
type fakeEngine struct {
	mu       sync.Mutex
	execs    []*fakeExec
	restores []*checkpoint.Reader
	// behave says what the tasks do with checkpoint id of execution n:
	// "ack" (the default), "decline" or "silent".
	behave func(n int, id checkpoint.ID) string
}

func (f *fakeEngine) start(_ context.Context, acks Acks, restore *checkpoint.Reader) (Execution, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := &fakeExec{n: len(f.execs), acks: acks, engine: f, done: make(chan struct{}), stops: map[checkpoint.ID]bool{}}
	f.execs = append(f.execs, e)
	f.restores = append(f.restores, restore)
	return e, nil
}

func (f *fakeEngine) exec(n int) *fakeExec {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.execs[n]
}

type fakeExec struct {
	n      int
	acks   Acks
	engine *fakeEngine
	done   chan struct{}
	once   sync.Once
	err    error

	mu                 sync.Mutex
	triggered          []checkpoint.ID
	completed, aborted []checkpoint.ID
	stops              map[checkpoint.ID]bool
}

var fakeTasks = []checkpoint.Task{{Vertex: "src", Subtask: 0}, {Vertex: "sum", Subtask: 0}, {Vertex: "sum", Subtask: 1}}

func (e *fakeExec) Tasks() []checkpoint.Task { return slices.Clone(fakeTasks) }

func (e *fakeExec) TriggerCheckpoint(id checkpoint.ID, kind checkpoint.Kind, ts time.Time, stop bool) error {
	e.mu.Lock()
	e.triggered = append(e.triggered, id)
	e.stops[id] = stop
	e.mu.Unlock()
	what := ""
	if b := e.engine.behave; b != nil {
		what = b(e.n, id)
	}
	if what == "" {
		what = "ack"
	}
	for _, task := range fakeTasks {
		switch what {
		case "ack":
			par := 2
			if task.Vertex == "src" {
				par = 1
			}
			st := checkpoint.SubtaskState{Operator: task.Vertex, Subtask: task.Subtask, Parallelism: par, MaxParallelism: 128,
				Union: [][]byte{[]byte(fmt.Sprintf("%s@%d", kind, id))}}
			e.acks.Acknowledge(task, id, []checkpoint.SubtaskState{st}, checkpoint.TaskMetrics{})
		case "decline":
			e.acks.Decline(task, id, checkpoint.ReasonDeclined, errors.New("the plugin trapped in its snapshot"))
			return nil
		}
	}
	return nil
}

func (e *fakeExec) NotifyCheckpointComplete(id checkpoint.ID) {
	e.mu.Lock()
	e.completed = append(e.completed, id)
	stop := e.stops[id]
	e.mu.Unlock()
	if stop {
		e.finish(nil) // a stop-with-savepoint's tasks end once it completed
	}
}

func (e *fakeExec) NotifyCheckpointAborted(id checkpoint.ID) {
	e.mu.Lock()
	e.aborted = append(e.aborted, id)
	e.mu.Unlock()
}

func (e *fakeExec) finish(err error) {
	e.once.Do(func() { e.err = err; close(e.done) })
}

func (e *fakeExec) Wait() (*runtime.Result, error) { <-e.done; return &runtime.Result{}, e.err }
func (e *fakeExec) Done() <-chan struct{}          { return e.done }
func (e *fakeExec) Cancel()                        { e.finish(context.Canceled) }

func (e *fakeExec) ids() (completed, aborted []checkpoint.ID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.completed), slices.Clone(e.aborted)
}

// harness runs a Master against a fakeEngine on a clock the test moves.
type harness struct {
	t       *testing.T
	engine  *fakeEngine
	m       *Master
	storage string
	mu      sync.Mutex
	now     time.Time
	tick    chan time.Time
	events  chan Event
	delays  []time.Duration
	logs    *syncBuffer
	result  chan runResult
}

type runResult struct {
	res *Result
	err error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func newHarness(t *testing.T, edit func(*Config)) *harness {
	h := &harness{t: t, engine: &fakeEngine{}, storage: t.TempDir(), now: t0, tick: make(chan time.Time),
		events: make(chan Event, 100), logs: &syncBuffer{}, result: make(chan runResult, 1)}
	cfg := Config{
		Job:        "job",
		Checkpoint: checkpoint.Defaults(),
		Restart:    restartstrategy.Defaults(false),
		Log:        slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:        func() time.Time { h.mu.Lock(); defer h.mu.Unlock(); return h.now },
		Tick:       h.tick,
		After: func(d time.Duration) <-chan time.Time {
			h.mu.Lock()
			h.delays = append(h.delays, d)
			h.mu.Unlock()
			c := make(chan time.Time, 1)
			c <- t0
			return c
		},
		Observe: func(e Event) { h.events <- e },
	}
	cfg.Checkpoint.Interval, cfg.Checkpoint.Storage = time.Second, h.storage
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg, h.engine.start)
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	go func() {
		res, err := m.Run(context.Background())
		h.result <- runResult{res, err}
	}()
	h.expect(Started, 0) // the coordinator started on the clock at t0
	return h
}

// at moves the clock to t0+d and lets the job master see it.
func (h *harness) at(d time.Duration) {
	h.mu.Lock()
	h.now = t0.Add(d)
	h.mu.Unlock()
	h.tick <- t0.Add(d)
}

// expect waits for the next event and checks it.
func (h *harness) expect(kind EventKind, id checkpoint.ID) Event {
	h.t.Helper()
	var e Event
	select {
	case e = <-h.events:
	case <-time.After(10 * time.Second): // a hang, not a timing assertion
		h.t.Fatalf("no event in 10s, want kind %d id %d; logs:\n%s", kind, id, h.logs.String())
	}
	if e.Kind != kind || (id != 0 && e.ID != id) {
		h.t.Fatalf("event %+v, want kind %d id %d", e, kind, id)
	}
	return e
}

func (h *harness) end() runResult {
	return <-h.result
}

func (h *harness) chk(id checkpoint.ID) string {
	return checkpoint.CheckpointDir(h.storage, "job", id)
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// TestAcksBecomeCheckpointsOnDisk: each tick past the interval triggers a
// checkpoint; the acks' states are written, the _metadata published, the
// engine told, and retain keeps the newest two.
func TestAcksBecomeCheckpointsOnDisk(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Checkpoint.Retain = 2 })
	for i := 1; i <= 3; i++ {
		h.at(time.Duration(i) * time.Second)
		e := h.expect(Completed, checkpoint.ID(i))
		if e.Path != h.chk(checkpoint.ID(i)) {
			t.Fatalf("checkpoint %d at %s", i, e.Path)
		}
	}
	if exists(h.chk(1)) || !exists(filepath.Join(h.chk(2), checkpoint.MetadataFile)) || !exists(filepath.Join(h.chk(3), checkpoint.MetadataFile)) {
		t.Fatalf("retain 2: chk-1 %v, chk-2 %v, chk-3 %v", exists(h.chk(1)), exists(h.chk(2)), exists(h.chk(3)))
	}
	r, err := checkpoint.Open(h.chk(3))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Restore("sum", 1, 2, 128)
	if err != nil || len(got.Union) != 2 || string(got.Union[0]) != "checkpoint@3" {
		t.Fatalf("restored %+v, %v", got, err)
	}
	completed, _ := h.engine.exec(0).ids()
	if !slices.Equal(completed, []checkpoint.ID{1, 2, 3}) {
		t.Fatalf("the engine was told %v complete", completed)
	}
	h.engine.exec(0).finish(nil)
	rr := h.end()
	if rr.err != nil || rr.res.Stats.NumberOfCompletedCheckpoints != 3 || rr.res.Stats.LastCheckpointSize <= 0 || rr.res.Restarts != 0 {
		t.Fatalf("result %+v, %v", rr.res, rr.err)
	}
}

// TestDeclineAndTimeoutLetTheJobGoOn: an expired checkpoint and a declined
// one are aborted (their folders removed, the engine told) and the next
// one completes, in the same execution.
func TestDeclineAndTimeoutLetTheJobGoOn(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Checkpoint.Timeout, c.Checkpoint.TolerableFailures = 500*time.Millisecond, 2
	})
	h.engine.behave = func(_ int, id checkpoint.ID) string {
		return map[checkpoint.ID]string{1: "silent", 2: "decline"}[id]
	}
	h.at(time.Second)
	h.at(1500 * time.Millisecond)
	if e := h.expect(Aborted, 1); !strings.Contains(e.Err.Error(), "expired") {
		t.Fatalf("checkpoint 1: %v", e.Err)
	}
	h.at(2 * time.Second)
	if e := h.expect(Aborted, 2); !strings.Contains(e.Err.Error(), "the plugin trapped") {
		t.Fatalf("checkpoint 2: %v", e.Err)
	}
	h.at(3 * time.Second)
	h.expect(Completed, 3)
	if exists(h.chk(1)) || exists(h.chk(2)) {
		t.Error("an aborted checkpoint's folder is left")
	}
	completed, aborted := h.engine.exec(0).ids()
	if !slices.Equal(completed, []checkpoint.ID{3}) || !slices.Equal(aborted, []checkpoint.ID{1, 2}) {
		t.Fatalf("the engine was told: completed %v, aborted %v", completed, aborted)
	}
	h.engine.exec(0).finish(nil)
	if rr := h.end(); rr.err != nil || rr.res.Stats.NumberOfFailedCheckpoints != 2 || len(h.engine.execs) != 1 {
		t.Fatalf("result %+v, %v, %d executions", rr.res, rr.err, len(h.engine.execs))
	}
}

// TestFailureRestartsFromTheLatestCheckpoint: fixed-delay with 2 attempts:
// each failure restarts a new execution from the newest checkpoint after
// the delay, checkpoint IDs go on, and the third failure fails the job.
func TestFailureRestartsFromTheLatestCheckpoint(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Restart.Strategy, c.Restart.Attempts, c.Restart.Delay = restartstrategy.FixedDelay, 2, 5*time.Second
	})
	h.at(time.Second)
	h.expect(Completed, 1)
	h.at(2 * time.Second)
	h.expect(Completed, 2)
	h.engine.exec(0).finish(errors.New("boom"))
	h.expect(Failed, 0)
	if e := h.expect(Restarting, 0); e.Err == nil {
		t.Fatal("a restart without its failure")
	}
	if e := h.expect(Started, 0); e.Path != h.chk(2) {
		t.Fatalf("restarted from %q, want %s", e.Path, h.chk(2))
	}
	h.at(3 * time.Second)
	h.expect(Completed, 3)
	h.engine.exec(1).finish(errors.New("boom again"))
	h.expect(Failed, 0)
	if e := h.expect(Restarting, 0); e.Err == nil {
		t.Fatal("a restart without its failure")
	}
	if e := h.expect(Started, 0); e.Path != h.chk(3) {
		t.Fatalf("restarted from %q, want %s", e.Path, h.chk(3))
	}
	h.engine.exec(2).finish(errors.New("boom for good"))
	h.expect(Failed, 0)
	rr := h.end()
	if rr.err == nil || !strings.Contains(rr.err.Error(), "boom for good") || !strings.Contains(rr.err.Error(), "no restart left") {
		t.Fatalf("the job ended with %v", rr.err)
	}
	if rr.res.Restarts != 2 || !slices.Equal(h.delays, []time.Duration{5 * time.Second, 5 * time.Second}) {
		t.Fatalf("%d restarts after %v", rr.res.Restarts, h.delays)
	}
	if r := h.engine.restores; r[0] != nil || r[1].Meta.ID != 2 || r[2].Meta.ID != 3 {
		t.Fatalf("restores %v", r)
	}
}

// TestCorruptLatestFallsBack: a restart passes over a corrupted newest
// checkpoint, logging it, and restores the one before.
func TestCorruptLatestFallsBack(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Checkpoint.Retain = 2
		c.Restart.Strategy = restartstrategy.FixedDelay
	})
	h.at(time.Second)
	h.expect(Completed, 1)
	h.at(2 * time.Second)
	h.expect(Completed, 2)
	state := filepath.Join(h.chk(2), "sum-1.state")
	b, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(state, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h.engine.exec(0).finish(errors.New("boom"))
	h.expect(Failed, 0)
	if e := h.expect(Restarting, 0); e.Err == nil {
		t.Fatal("a restart without its failure")
	}
	if e := h.expect(Started, 0); e.Path != h.chk(1) {
		t.Fatalf("restarted from %q, want %s", e.Path, h.chk(1))
	}
	if logs := h.logs.String(); !strings.Contains(logs, "skipping a checkpoint") || !strings.Contains(logs, h.chk(2)) {
		t.Fatalf("the skip is not logged:\n%s", logs)
	}
	h.at(3 * time.Second)
	h.expect(Completed, 3) // above the broken one: it is never written into
	h.engine.exec(1).finish(nil)
	if rr := h.end(); rr.err != nil {
		t.Fatal(rr.err)
	}
}

// TestSavepoints: a savepoint goes to its own folder and the job goes on;
// a stop-with-savepoint finishes the job.
func TestSavepoints(t *testing.T) {
	h := newHarness(t, nil)
	dir := t.TempDir()
	got := make(chan runResult, 1)
	trigger := func(stop bool) {
		go func() {
			p, err := h.m.TriggerSavepoint(context.Background(), dir, stop)
			got <- runResult{&Result{Savepoint: p}, err}
		}()
	}
	trigger(false)
	e := h.expect(Completed, 1)
	sp := <-got
	if sp.err != nil || sp.res.Savepoint != e.Path || !strings.HasPrefix(filepath.Base(e.Path), "savepoint-1-") {
		t.Fatalf("savepoint %+v, %v", sp.res, sp.err)
	}
	r, err := checkpoint.Open(sp.res.Savepoint)
	if err != nil || r.Meta.Kind != checkpoint.KindSavepoint {
		t.Fatalf("savepoint metadata: %v", err)
	}
	h.at(time.Second)
	h.expect(Completed, 2) // periodic checkpoints go on
	trigger(true)
	e = h.expect(Completed, 3)
	if sp := <-got; sp.err != nil || sp.res.Savepoint != e.Path {
		t.Fatalf("stop-with-savepoint %+v, %v", sp.res, sp.err)
	}
	rr := h.end()
	if rr.err != nil || rr.res.Savepoint != e.Path {
		t.Fatalf("the job ended with %+v, %v", rr.res, rr.err)
	}
	if completed, _ := h.engine.exec(0).ids(); !slices.Equal(completed, []checkpoint.ID{2, 3}) {
		t.Fatalf("notified %v: a savepoint commits nothing, a stop-with-savepoint does", completed)
	}
}

// TestTolerableFailuresExceededFailsTheJob: with tolerable-failures 0 a
// declined checkpoint fails the job; with restart strategy none that is
// the end.
func TestTolerableFailuresExceededFailsTheJob(t *testing.T) {
	h := newHarness(t, nil)
	h.engine.behave = func(int, checkpoint.ID) string { return "decline" }
	h.at(time.Second)
	h.expect(Aborted, 1)
	h.expect(Failed, 0)
	rr := h.end()
	if !errors.Is(rr.err, checkpoint.ErrExceededTolerableFailures) {
		t.Fatalf("the job ended with %v", rr.err)
	}
}

func TestNeedsStorage(t *testing.T) {
	cfg := Config{Job: "j", Checkpoint: checkpoint.Defaults(), Restart: restartstrategy.Defaults(true)}
	cfg.Checkpoint.Interval = time.Second
	if _, err := New(cfg, nil); err == nil || !strings.Contains(err.Error(), "checkpoint-storage") {
		t.Fatalf("no storage: %v", err)
	}
}

// TestRequestSavepointAnswersOnTrigger: RequestSavepoint returns the
// savepoint's id while its tasks have not acknowledged; Stats shows it in
// progress, then failed once it times out, which Wait reports.
func TestRequestSavepointAnswersOnTrigger(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Checkpoint.Timeout = 500 * time.Millisecond })
	h.engine.behave = func(int, checkpoint.ID) string { return "silent" }
	sp, err := h.m.RequestSavepoint(context.Background(), t.TempDir(), false)
	if err != nil || sp.ID != 1 {
		t.Fatalf("savepoint %+v, %v", sp, err)
	}
	waitStats := func(what string, ok func(checkpoint.Stats) bool) checkpoint.Stats {
		t.Helper()
		giveUp := time.After(10 * time.Second) // a hang, not a timing assertion
		for {
			s := h.m.Stats()
			if ok(s) {
				return s
			}
			select {
			case <-giveUp:
				t.Fatalf("no %s in the statistics: %+v", what, s)
			case <-time.After(time.Millisecond):
			}
		}
	}
	s := waitStats("savepoint in progress", func(s checkpoint.Stats) bool { return s.NumberOfInProgressCheckpoints == 1 })
	if len(s.History) != 1 || s.History[0].Kind != checkpoint.KindSavepoint || s.History[0].Status != checkpoint.StatusInProgress {
		t.Fatalf("history %+v", s.History)
	}
	h.at(600 * time.Millisecond) // past the timeout, before the first periodic checkpoint
	h.expect(Aborted, 1)
	if _, err := sp.Wait(context.Background()); err == nil || !strings.Contains(err.Error(), "savepoint 1 aborted") {
		t.Fatalf("Wait: %v, want the abort", err)
	}
	waitStats("failed savepoint", func(s checkpoint.Stats) bool {
		return s.NumberOfFailedCheckpoints == 1 && s.NumberOfInProgressCheckpoints == 0
	})
	h.engine.exec(0).finish(nil)
	if rr := h.end(); rr.err != nil {
		t.Fatal(rr.err)
	}
}
