package checkpoint

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var testTasks = []Task{{"src", 0}, {"src", 1}, {"sink", 0}}

var reasonCode = map[FailureReason]string{
	ReasonDeclined:                 "declined",
	ReasonAsyncFailure:             "async",
	ReasonExpired:                  "expired",
	ReasonSubsumed:                 "subsumed",
	ReasonDeclinedTaskNotReady:     "not-ready",
	ReasonDeclinedSubsumed:         "declined-subsumed",
	ReasonDeclinedInputEndOfStream: "end-of-stream",
	ReasonTaskFailure:              "task-failure",
	ReasonJobFailure:               "job-failure",
	ReasonFinalizeFailure:          "finalize",
	ReasonCoordinatorShutdown:      "shutdown",
}

func showActions(as []Action) []string {
	var s []string
	for _, a := range as {
		switch a := a.(type) {
		case Inject:
			x := fmt.Sprintf("inject %d %s", a.ID, a.Kind)
			if a.Stop {
				x += " stop"
			}
			s = append(s, x)
		case WriteMetadata:
			s = append(s, fmt.Sprintf("write %d", a.ID))
		case NotifyComplete:
			s = append(s, fmt.Sprintf("complete %d", a.ID))
		case NotifyAbort:
			s = append(s, fmt.Sprintf("abort %d %s", a.ID, reasonCode[a.Reason]))
		case FailJob:
			s = append(s, "fail-job")
		}
	}
	return s
}

// step is one input at a time (ms since t0) and the actions it must give.
// Inputs: start, tick, savepoint, stop-savepoint, ack TASK ID, ackall ID,
// decline TASK ID [REASON], written ID, mdfail ID, taskfailed, finished,
// shutdown. A TASK is an index into testTasks.
type step struct {
	ms   int
	in   string
	want []string
}

func runSteps(t *testing.T, cfg Config, steps []step) *Coordinator {
	t.Helper()
	c, err := NewCoordinator(cfg, testTasks, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		now := t0.Add(time.Duration(st.ms) * time.Millisecond)
		f := strings.Fields(st.in)
		arg := func(k int) int {
			n, err := strconv.Atoi(f[k])
			if err != nil {
				t.Fatalf("step %d %q: %v", i, st.in, err)
			}
			return n
		}
		var got []Action
		switch f[0] {
		case "start":
			c.Start(now)
		case "tick":
			got = c.Tick(now)
		case "savepoint", "stop-savepoint":
			_, got, err = c.TriggerSavepoint(now, f[0] == "stop-savepoint")
			if err != nil {
				got = nil
				if st.want == nil || st.want[0] != "error" {
					t.Fatalf("step %d %q at %dms: %v", i, st.in, st.ms, err)
				}
				continue
			}
		case "ack":
			got = c.Ack(now, Ack{Task: testTasks[arg(1)], ID: ID(arg(2)), Files: []SubtaskFile{{Operator: "op", SubtaskMeta: SubtaskMeta{Subtask: arg(1), Size: 100}}}})
		case "ackall":
			for k := range testTasks {
				got = append(got, c.Ack(now, Ack{Task: testTasks[k], ID: ID(arg(1))})...)
			}
		case "decline":
			r := ReasonDeclined
			if len(f) > 3 {
				for k, v := range reasonCode {
					if v == f[3] {
						r = k
					}
				}
			}
			got = c.Decline(now, Decline{Task: testTasks[arg(1)], ID: ID(arg(2)), Reason: r, Cause: errors.New("boom")})
		case "written":
			got = c.MetadataWritten(now, ID(arg(1)))
		case "mdfail":
			got = c.MetadataFailed(now, ID(arg(1)), errors.New("disk full"))
		case "taskfailed":
			got = c.TaskFailed(now, testTasks[0], errors.New("trap"))
		case "finished":
			got = c.Finished(now)
		case "shutdown":
			got = c.Shutdown(now)
		default:
			t.Fatalf("step %d: unknown input %q", i, st.in)
		}
		if s := showActions(got); !slices.Equal(s, st.want) {
			t.Fatalf("step %d %q at %dms: got %q, want %q", i, st.in, st.ms, s, st.want)
		}
	}
	return c
}

func cfgWith(f func(*Config)) Config {
	c := Defaults()
	c.Interval = time.Second
	if f != nil {
		f(&c)
	}
	return c
}

func TestCoordinatorRules(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"interval: due one interval after start, then every interval", cfgWith(nil), []step{
			{0, "start", nil},
			{999, "tick", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1100, "ackall 1", []string{"write 1"}},
			{1200, "written 1", []string{"complete 1"}},
			{1999, "tick", nil},
			{2000, "tick", []string{"inject 2 checkpoint"}},
		}},
		{"nothing before start", cfgWith(nil), []step{
			{5000, "tick", nil},
			{5000, "savepoint", []string{"error"}},
		}},
		{"interval 0: no periodic checkpoints, savepoints work", cfgWith(func(c *Config) { c.Interval = 0 }), []step{
			{0, "start", nil},
			{60000, "tick", nil},
			{60000, "savepoint", []string{"inject 1 savepoint"}},
		}},
		{"max-concurrent 1: a due checkpoint waits and starts when the pending one completes", cfgWith(nil), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{2000, "tick", nil},
			{2400, "ackall 1", []string{"write 1"}},
			{2500, "written 1", []string{"complete 1", "inject 2 checkpoint"}},
			{3000, "tick", nil}, // 2 is pending
			{3100, "ackall 2", []string{"write 2"}},
			{3200, "written 2", []string{"complete 2", "inject 3 checkpoint"}}, // 3 was due at 3000
		}},
		{"missed due times are dropped, not made up", cfgWith(nil), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{4500, "ackall 1", []string{"write 1"}},
			{4600, "written 1", []string{"complete 1", "inject 2 checkpoint"}},
			{4700, "ackall 2", []string{"write 2"}},
			{4800, "written 2", []string{"complete 2"}},
			{5599, "tick", nil},
			{5600, "tick", []string{"inject 3 checkpoint"}},
		}},
		{"max-concurrent 2: a second checkpoint starts while one is pending", cfgWith(func(c *Config) { c.MaxConcurrent = 2 }), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{2000, "tick", []string{"inject 2 checkpoint"}},
			{3000, "tick", nil},
		}},
		{"a pending savepoint counts against max-concurrent", cfgWith(nil), []step{
			{0, "start", nil},
			{500, "savepoint", []string{"inject 1 savepoint"}},
			{1000, "tick", nil},
			{1100, "ackall 1", []string{"write 1"}},
			{1200, "written 1", []string{"inject 2 checkpoint"}},
		}},
		{"min-pause from the last completion holds a due checkpoint back", cfgWith(func(c *Config) { c.MinPause = 800 * time.Millisecond }), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1400, "ackall 1", []string{"write 1"}},
			{1500, "written 1", []string{"complete 1"}},
			{2000, "tick", nil},
			{2299, "tick", nil},
			{2300, "tick", []string{"inject 2 checkpoint"}},
			{2400, "ackall 2", []string{"write 2"}},
			{2500, "written 2", []string{"complete 2"}},
			{3299, "tick", nil},
			{3300, "tick", []string{"inject 3 checkpoint"}},
		}},
		{"min-pause counts from a completion, not from an abort", cfgWith(func(c *Config) {
			c.MinPause = 800 * time.Millisecond
			c.Timeout = 300 * time.Millisecond
			c.TolerableFailures = 5
		}), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1300, "tick", []string{"abort 1 expired"}},
			{2000, "tick", []string{"inject 2 checkpoint"}},
		}},
		{"min-pause does not hold a savepoint back", cfgWith(func(c *Config) { c.MinPause = 5 * time.Second }), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1100, "ackall 1", []string{"write 1"}},
			{1200, "written 1", []string{"complete 1"}},
			{1300, "savepoint", []string{"inject 2 savepoint"}},
		}},
		{"timeout: expired, declined, the job goes on", cfgWith(func(c *Config) {
			c.Timeout = 500 * time.Millisecond
			c.TolerableFailures = 1
		}), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1200, "ack 0 1", nil},
			{1499, "tick", nil},
			{1500, "tick", []string{"abort 1 expired"}},
			{1600, "ack 1 1", nil}, // late ack of an expired checkpoint: ignored
			{2000, "tick", []string{"inject 2 checkpoint"}},
			{2100, "ackall 2", []string{"write 2"}},
			{2200, "written 2", []string{"complete 2"}},
		}},
		{"tolerable-failures 0: the first counted failure fails the job", cfgWith(func(c *Config) { c.Timeout = 500 * time.Millisecond }), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1500, "tick", []string{"abort 1 expired", "fail-job"}},
			{3000, "tick", nil},
			{3000, "savepoint", []string{"error"}},
			{4000, "start", nil},
			{5000, "tick", []string{"inject 2 checkpoint"}},
		}},
		{"tolerable-failures 2: the third failure in a row fails the job", cfgWith(func(c *Config) {
			c.Timeout = 500 * time.Millisecond
			c.TolerableFailures = 2
		}), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1500, "tick", []string{"abort 1 expired"}},
			{2000, "tick", []string{"inject 2 checkpoint"}},
			{2100, "decline 1 2", []string{"abort 2 declined"}},
			{3000, "tick", []string{"inject 3 checkpoint"}},
			{3100, "decline 2 3 async", []string{"abort 3 async", "fail-job"}},
		}},
		{"a completed checkpoint resets the failure counter", cfgWith(func(c *Config) {
			c.Timeout = 500 * time.Millisecond
			c.TolerableFailures = 1
		}), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1500, "tick", []string{"abort 1 expired"}},
			{2000, "tick", []string{"inject 2 checkpoint"}},
			{2100, "ackall 2", []string{"write 2"}},
			{2200, "written 2", []string{"complete 2"}},
			{3000, "tick", []string{"inject 3 checkpoint"}},
			{3500, "tick", []string{"abort 3 expired"}},
			{4000, "tick", []string{"inject 4 checkpoint"}},
			{4500, "tick", []string{"abort 4 expired", "fail-job"}},
		}},
		{"reasons Flink does not count never fail the job", cfgWith(nil), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1100, "decline 0 1 not-ready", []string{"abort 1 not-ready"}},
			{2000, "tick", []string{"inject 2 checkpoint"}},
			{2100, "decline 1 2 declined-subsumed", []string{"abort 2 declined-subsumed"}},
			{3000, "tick", []string{"inject 3 checkpoint"}},
			{3100, "decline 2 3 end-of-stream", []string{"abort 3 end-of-stream"}},
			{4000, "tick", []string{"inject 4 checkpoint"}},
			{4100, "ackall 4", []string{"write 4"}},
			{4200, "mdfail 4", []string{"abort 4 finalize"}},
			{5000, "tick", []string{"inject 5 checkpoint"}},
		}},
		{"a decline counts (tolerable-failures 0)", cfgWith(nil), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1100, "decline 2 1", []string{"abort 1 declined", "fail-job"}},
		}},
		{"fail-job aborts the other pending checkpoints", cfgWith(func(c *Config) { c.MaxConcurrent = 3 }), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1500, "savepoint", []string{"inject 2 savepoint"}},
			{2000, "tick", []string{"inject 3 checkpoint"}},
			{2100, "decline 0 3", []string{"abort 3 declined", "fail-job", "abort 1 job-failure", "abort 2 job-failure"}},
		}},
		{"a savepoint during a checkpoint starts at once; its completion notifies and subsumes nothing", cfgWith(nil), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1100, "savepoint", []string{"inject 2 savepoint"}},
			{1200, "ackall 2", []string{"write 2"}},
			{1300, "written 2", nil},
			{1400, "ackall 1", []string{"write 1"}},
			{1500, "written 1", []string{"complete 1"}},
		}},
		{"a completed checkpoint subsumes older pending checkpoints, not savepoints", cfgWith(func(c *Config) { c.MaxConcurrent = 3 }), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1100, "savepoint", []string{"inject 2 savepoint"}},
			{2000, "tick", []string{"inject 3 checkpoint"}},
			{2100, "ackall 3", []string{"write 3"}},
			{2200, "written 3", []string{"abort 1 subsumed", "complete 3"}}, // not counted: no fail-job
			{2300, "ackall 2", []string{"write 2"}},
			{2400, "written 2", nil},
		}},
		{"a checkpoint completing after a newer one is not notified", cfgWith(func(c *Config) { c.MaxConcurrent = 2 }), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1100, "ackall 1", []string{"write 1"}},
			{2000, "tick", []string{"inject 2 checkpoint"}},
			{2100, "ackall 2", []string{"write 2"}},
			{2200, "written 2", []string{"complete 2"}}, // 1 is writing its metadata: not subsumed
			{2300, "written 1", nil},
		}},
		{"a savepoint's expiry is not counted", cfgWith(func(c *Config) {
			c.Interval = 0
			c.Timeout = 500 * time.Millisecond
		}), []step{
			{0, "start", nil},
			{100, "savepoint", []string{"inject 1 savepoint"}},
			{600, "tick", []string{"abort 1 expired"}},
			{700, "savepoint", []string{"inject 2 savepoint"}},
			{800, "ackall 2", []string{"write 2"}},
			{900, "mdfail 2", []string{"abort 2 finalize"}},
		}},
		{"a task's decline of a savepoint is counted", cfgWith(func(c *Config) { c.Interval = 0 }), []step{
			{0, "start", nil},
			{100, "savepoint", []string{"inject 1 savepoint"}},
			{200, "decline 0 1", []string{"abort 1 declined", "fail-job"}},
		}},
		{"a failure older than the last success is not counted", cfgWith(func(c *Config) { c.MaxConcurrent = 2 }), []step{
			{0, "start", nil},
			{500, "savepoint", []string{"inject 1 savepoint"}},
			{1000, "tick", []string{"inject 2 checkpoint"}},
			{1100, "ackall 2", []string{"write 2"}},
			{1200, "written 2", []string{"complete 2"}},
			{1300, "decline 0 1", []string{"abort 1 declined"}},
		}},
		{"stop-with-savepoint: no checkpoint meanwhile, it subsumes and notifies, then the job is finished", cfgWith(func(c *Config) { c.MaxConcurrent = 2 }), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1100, "stop-savepoint", []string{"inject 2 savepoint stop"}},
			{1200, "savepoint", []string{"error"}},
			{2000, "tick", nil},
			{2100, "ackall 2", []string{"write 2"}},
			{2200, "written 2", []string{"abort 1 subsumed", "complete 2"}},
			{3000, "tick", nil},
			{3100, "savepoint", []string{"error"}},
		}},
		{"stop-with-savepoint declined by a task fails the job whatever tolerable-failures says", cfgWith(func(c *Config) { c.TolerableFailures = 100 }), []step{
			{0, "start", nil},
			{100, "stop-savepoint", []string{"inject 1 savepoint stop"}},
			{200, "decline 1 1 not-ready", []string{"abort 1 not-ready", "fail-job"}},
		}},
		{"stop-with-savepoint that expires: the job goes on checkpointing", cfgWith(func(c *Config) { c.Timeout = 500 * time.Millisecond }), []step{
			{0, "start", nil},
			{800, "stop-savepoint", []string{"inject 1 savepoint stop"}},
			{1000, "tick", nil},
			{1300, "tick", []string{"abort 1 expired", "inject 2 checkpoint"}},
		}},
		{"unknown, stale and duplicate acks are ignored", cfgWith(nil), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1010, "ack 0 7", nil}, // never triggered
			{1020, "ack 0 1", nil},
			{1030, "ack 0 1", nil}, // duplicate: must not count as task 1
			{1040, "ack 1 1", nil},
			{1050, "ack 1 1", nil},
			{1060, "ack 2 1", []string{"write 1"}},
			{1070, "ack 2 1", nil}, // already complete
			{1080, "written 1", []string{"complete 1"}},
			{1090, "written 1", nil},
			{1100, "ack 0 1", nil},     // finished checkpoint
			{1100, "decline 0 1", nil}, // finished checkpoint
		}},
		{"a checkpoint writing its metadata neither expires nor takes declines", cfgWith(func(c *Config) { c.Timeout = 500 * time.Millisecond }), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1100, "ackall 1", []string{"write 1"}},
			{1200, "decline 0 1", nil},
			{5000, "tick", nil},
			{5100, "written 1", []string{"complete 1", "inject 2 checkpoint"}},
		}},
		{"a task failure aborts every pending checkpoint, uncounted, until start", cfgWith(func(c *Config) { c.MaxConcurrent = 2 }), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1500, "savepoint", []string{"inject 2 savepoint"}},
			{1600, "taskfailed", []string{"abort 1 task-failure", "abort 2 task-failure"}},
			{1700, "ackall 1", nil},
			{5000, "tick", nil},
			{6000, "start", nil},
			{6999, "tick", nil},
			{7000, "tick", []string{"inject 3 checkpoint"}},
		}},
		{"finished sources: nothing new starts, a pending checkpoint still completes", cfgWith(nil), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1100, "finished", nil},
			{1200, "savepoint", []string{"error"}},
			{1300, "ackall 1", []string{"write 1"}},
			{1400, "written 1", []string{"complete 1"}},
			{5000, "tick", nil},
			{5000, "start", nil},
			{9000, "tick", nil},
		}},
		{"shutdown aborts pending checkpoints and ignores everything after", cfgWith(nil), []step{
			{0, "start", nil},
			{1000, "tick", []string{"inject 1 checkpoint"}},
			{1100, "shutdown", []string{"abort 1 shutdown"}},
			{1200, "ackall 1", nil},
			{5000, "tick", nil},
			{5000, "savepoint", []string{"error"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { runSteps(t, tt.cfg, tt.steps) })
	}
}

func TestCoordinatorStats(t *testing.T) {
	cfg := cfgWith(func(c *Config) {
		c.Timeout = 500 * time.Millisecond
		c.TolerableFailures = 5
	})
	c := runSteps(t, cfg, []step{
		{0, "start", nil},
		{1000, "tick", []string{"inject 1 checkpoint"}},
		{1100, "ack 0 1", nil},
		{1200, "ack 1 1", nil},
		{1300, "ack 2 1", []string{"write 1"}},
		{1450, "written 1", []string{"complete 1"}},
		{2000, "tick", []string{"inject 2 checkpoint"}},
		{2100, "ack 0 2", nil},
		{2500, "tick", []string{"abort 2 expired"}},
		{3000, "tick", []string{"inject 3 checkpoint"}},
		{3050, "ack 2 3", nil},
	})
	s := c.Stats()
	if s.NumberOfCompletedCheckpoints != 1 || s.NumberOfFailedCheckpoints != 1 || s.NumberOfInProgressCheckpoints != 1 {
		t.Errorf("counts: completed %d failed %d in progress %d, want 1 1 1",
			s.NumberOfCompletedCheckpoints, s.NumberOfFailedCheckpoints, s.NumberOfInProgressCheckpoints)
	}
	if s.LastCheckpointDuration != 450*time.Millisecond || s.LastCheckpointSize != 300 || s.LastCompletedID != 1 {
		t.Errorf("last: duration %v size %d id %d, want 450ms 300 1", s.LastCheckpointDuration, s.LastCheckpointSize, s.LastCompletedID)
	}
	if s.ConsecutiveFailures != 1 {
		t.Errorf("consecutive failures %d, want 1", s.ConsecutiveFailures)
	}
	if len(s.History) != 3 {
		t.Fatalf("history has %d entries, want 3", len(s.History))
	}
	h3, h2, h1 := s.History[0], s.History[1], s.History[2]
	if h3.ID != 3 || h3.Status != StatusInProgress || h3.Acknowledged != 1 || h3.Tasks != 3 || h3.Duration != 50*time.Millisecond {
		t.Errorf("checkpoint 3: %+v", h3)
	}
	if h2.ID != 2 || h2.Status != StatusFailed || h2.FailureReason != ReasonExpired || !strings.Contains(h2.FailureCause, "src[1], sink[0]") ||
		h2.Duration != 500*time.Millisecond || !h2.Triggered.Equal(t0.Add(2*time.Second)) {
		t.Errorf("checkpoint 2: %+v", h2)
	}
	if h1.ID != 1 || h1.Status != StatusCompleted || h1.Size != 300 || len(h1.Subtasks) != 3 ||
		h1.Subtasks[1].Task != testTasks[1] || !h1.Subtasks[1].Acknowledged.Equal(t0.Add(1200*time.Millisecond)) {
		t.Errorf("checkpoint 1: %+v", h1)
	}
	// Stats is a copy.
	s.History[0].Subtasks[0].Size = -1
	if c.Stats().History[0].Subtasks[0].Size == -1 {
		t.Error("Stats shares its history with the coordinator")
	}
}

func TestCoordinatorHistoryIsBounded(t *testing.T) {
	c, err := NewCoordinator(cfgWith(func(c *Config) { c.Interval = 0 }), testTasks, Options{History: 2, NextID: 41, Restored: 40})
	if err != nil {
		t.Fatal(err)
	}
	c.Start(t0)
	for i := range 5 {
		id, _, err := c.TriggerSavepoint(t0.Add(time.Duration(i)*time.Second), false)
		if err != nil || id != ID(41+i) {
			t.Fatalf("savepoint %d: id %d, %v", i, id, err)
		}
	}
	s := c.Stats()
	if len(s.History) != 2 || s.History[0].ID != 45 || s.History[1].ID != 44 || s.Restored != 40 || s.NumberOfInProgressCheckpoints != 5 {
		t.Errorf("stats: %+v", s)
	}
	if got := c.Pending(); !slices.Equal(got, []ID{41, 42, 43, 44, 45}) {
		t.Errorf("pending %v", got)
	}
	if c.NextID() != 46 {
		t.Errorf("next id %d", c.NextID())
	}
}

func TestCoordinatorWriteMetadataCarriesSortedFiles(t *testing.T) {
	c, err := NewCoordinator(cfgWith(nil), testTasks, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Start(t0)
	c.Tick(t0.Add(time.Second))
	file := func(op string, sub int) SubtaskFile {
		return SubtaskFile{Operator: op, SubtaskMeta: SubtaskMeta{Subtask: sub, Size: 10}}
	}
	c.Ack(t0, Ack{Task: testTasks[2], ID: 1, Files: []SubtaskFile{file("sink", 0)}})
	c.Ack(t0, Ack{Task: testTasks[1], ID: 1, Files: []SubtaskFile{file("src", 1), file("map", 1)}})
	out := c.Ack(t0, Ack{Task: testTasks[0], ID: 1, Files: []SubtaskFile{file("src", 0), file("map", 0)}})
	if len(out) != 1 {
		t.Fatalf("actions %v", showActions(out))
	}
	w := out[0].(WriteMetadata)
	var got []string
	for _, f := range w.Files {
		got = append(got, fmt.Sprintf("%s/%d", f.Operator, f.Subtask))
	}
	want := []string{"map/0", "map/1", "sink/0", "src/0", "src/1"}
	if !slices.Equal(got, want) || !w.Timestamp.Equal(t0.Add(time.Second)) || w.Kind != KindCheckpoint {
		t.Errorf("write metadata %v at %v, want %v at %v", got, w.Timestamp, want, t0.Add(time.Second))
	}
}

func TestCoordinatorFailJobError(t *testing.T) {
	c, err := NewCoordinator(cfgWith(nil), testTasks, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Start(t0)
	c.Tick(t0.Add(time.Second))
	out := c.Decline(t0.Add(time.Second), Decline{Task: testTasks[1], ID: 1, Cause: errors.New("plugin trapped in sluice_snapshot")})
	var fail *FailJob
	for _, a := range out {
		if f, ok := a.(FailJob); ok {
			fail = &f
		}
	}
	if fail == nil {
		t.Fatalf("no FailJob in %v", showActions(out))
	}
	if !errors.Is(fail.Err, ErrExceededTolerableFailures) || !strings.Contains(fail.Err.Error(), "src[1]: plugin trapped in sluice_snapshot") {
		t.Errorf("FailJob error %q", fail.Err)
	}
}

func TestNewCoordinatorRefuses(t *testing.T) {
	if _, err := NewCoordinator(Config{}, testTasks, Options{}); err == nil {
		t.Error("zero config accepted")
	}
	if _, err := NewCoordinator(Defaults(), nil, Options{}); err == nil {
		t.Error("no tasks accepted")
	}
	if _, err := NewCoordinator(Defaults(), []Task{{"a", 0}, {"a", 0}}, Options{}); err == nil || !strings.Contains(err.Error(), "a[0] is listed twice") {
		t.Errorf("duplicate task: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	bad := map[string]func(*Config){
		"interval -1ns":        func(c *Config) { c.Interval = -1 },
		"interval 1ms":         func(c *Config) { c.Interval = time.Millisecond },
		"unknown mode":         func(c *Config) { c.Mode = 7 },
		"timeout 0s":           func(c *Config) { c.Timeout = 0 },
		"min-pause -1ns":       func(c *Config) { c.MinPause = -1 },
		"max-concurrent 0":     func(c *Config) { c.MaxConcurrent = 0 },
		"tolerable-failures -": func(c *Config) { c.TolerableFailures = -1 },
		"retain 0":             func(c *Config) { c.Retain = 0 },
		// Flink: unaligned checkpoints only in exactly-once, not concurrent
		"unaligned at-least-once":    func(c *Config) { c.Unaligned, c.Mode = true, AtLeastOnce },
		"unaligned max-concurrent 2": func(c *Config) { c.Unaligned, c.MaxConcurrent = true, 2 },
	}
	for name, f := range bad {
		c := Defaults()
		f(&c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if key := strings.Fields(name)[0]; key != "unknown" && !strings.Contains(err.Error(), key) {
			t.Errorf("%s: error %q does not name the setting", name, err)
		}
	}
	for s, want := range map[string]Mode{"exactly-once": ExactlyOnce, "at-least-once": AtLeastOnce} {
		if m, err := ParseMode(s); err != nil || m != want {
			t.Errorf("ParseMode(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseMode("twice"); err == nil {
		t.Error(`ParseMode("twice") accepted`)
	}
}
