package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/host/state/pebblestate"
)

// Timers end to end (issue #27): plugins/timeout, Flink's
// CountWithTimeoutFunction, a keyed process plugin that registers an
// event-time timer at each record's time + timeout-ms and emits a key's
// count when its timer finds no later record.

const timeoutJob = `
version: 1
name: timeout
mode: %s
plugins:
  timeout: { path: plugins/timeout/%s }
operators:
  - id: src
    source:
      type: elements
      values: [{k: a, ts: 1000}, {k: b, ts: 2000}, {k: a, ts: 4000}, {k: c, ts: 20000}, {k: b, ts: 30000}, {k: d, ts: 30500}]
      watermarks: monotonous
  - id: timeout
    key-by: k
    process: timeout
    parallelism: %d
  - id: out
    sink: { type: print }
`

// TestTimeoutPluginFromYAML: the elements source emits its records in
// one batch before any watermark, so every timer fires at the end of
// input (MaxWatermark) and only each key's last one counts; at
// parallelism 1 and 3 alike, STREAMING and BATCH (the end of input
// fires every timer there too); the Go plugin and its Rust, C and
// AssemblyScript builds when built.
func TestTimeoutPluginFromYAML(t *testing.T) {
	want := []string{
		`{"key":"a","count":2,"last":4000,"message":"key a silent for 10 s"}`,
		`{"key":"b","count":2,"last":30000,"message":"key b silent for 10 s"}`,
		`{"key":"c","count":1,"last":20000,"message":"key c silent for 10 s"}`,
		`{"key":"d","count":1,"last":30500,"message":"key d silent for 10 s"}`,
	}
	builds := []string{"timeout.wasm"}
	for _, b := range []string{"timeout-rust.wasm", "timeout-c.wasm", "timeout-as.wasm"} {
		if _, err := os.Stat("../../plugins/timeout/" + b); err == nil || os.Getenv("SLUICE_REQUIRE_LANGS") != "" {
			builds = append(builds, b)
		}
	}
	for _, build := range builds {
		for _, mode := range []string{"streaming", "batch"} {
			for _, p := range []int{1, 3} {
				t.Run(fmt.Sprint(build, "/", mode, "/p=", p), func(t *testing.T) {
					got := runTimedPlugins(t, fmt.Sprintf(timeoutJob, mode, build, p))
					slices.Sort(got)
					if !slices.Equal(got, want) {
						t.Fatalf("got\n%q\nwant\n%q", got, want)
					}
				})
			}
		}
	}
}

// runTimedPlugins runs src with its plugins, each source record stamped
// with the event time of its ts field by timedConnectors (BATCH runs no
// watermark strategy, so its timestamp assigner does not run either), and
// returns the printed records, sorted.
func runTimedPlugins(t *testing.T, src string) []string {
	t.Helper()
	wd, _ := os.Getwd()
	file := filepath.Join(wd, "..", "..", "timeout.yaml")
	pl, err := pipeline.Parse(file, []byte(strings.TrimSpace(src)+"\n"), pipeline.ParseOptions{PluginRoots: []string{filepath.Join(wd, "../..")}})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	g, err := plan.Plan(pl, plan.Options{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var stdout syncBuffer
	conns := timedConnectors{&connector.Builtin{Stdout: &stdout, Stdin: strings.NewReader(""), Root: wd}}
	if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conns, Plugins: loadPlugins(t, file, pl)}); err != nil {
		t.Fatalf("run: %v", err)
	}
	var got []string
	for _, l := range parseLines(t, stdout.b.String()) {
		got = append(got, l.JSON)
	}
	slices.Sort(got)
	return got
}

// timeoutCheckpointJob: 6000 transactions 1 ms of event time apart over
// 40 accounts (6 s of event time; 3 s of processing time at the rate, so
// that the checkpoint comes long before the end), one source subtask, the default 10 s
// timeout: no timer fires before the end of input, when every account's
// last one does, so the checkpoint taken mid-run holds a pending timer
// for every account seen so far.
const timeoutCheckpointJob = `
version: 1
name: timeout-checkpoint
parallelism: 2
plugins:
  timeout: { path: ../plugins/timeout/timeout.wasm }
operators:
  - id: src
    source:
      type: generator
      preset: transactions
      count: 6000
      rate: 2000
      accounts: 40
      watermarks: { strategy: monotonous, interval: 20ms }
    parallelism: 1
  - id: timeout
    key-by: accountId
    process: timeout
  - id: out
    sink: { type: discard }
`

// TestCheckpointTimersRescale: plugins/timeout checkpointed at
// parallelism 2 with timers pending (the checkpoint holds one per account
// seen), the job killed, and restored at 3 (and at 1), on the heap and
// Pebble backends and from one to the other: the timers move with their key groups and fire in the new
// subtasks at the end of input, so the output is exactly an
// uninterrupted run's: every account once, with its count of records
// and its last record's time; none lost with the old subtasks, none twice.
func TestCheckpointTimersRescale(t *testing.T) {
	lines := func(vals [][]byte) []string {
		var out []string
		for _, v := range vals {
			k, _, _ := abi.MapField(v, "key")
			c, _, _ := abi.MapField(v, "count")
			l, _, _ := abi.MapField(v, "last")
			cnt, _ := abi.ReadInt(c)
			last, _ := abi.ReadInt(l)
			out = append(out, fmt.Sprintf("%s %d %d", k, cnt, last))
		}
		slices.Sort(out)
		return out
	}
	g, plugins := planCheckpointJob(t, timeoutCheckpointJob, 0)
	conn := newMarkConnectors()
	if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conn, Plugins: plugins}); err != nil {
		t.Fatal(err)
	}
	want := lines(conn.committed(0))
	if len(want) != 40 {
		t.Fatalf("%d silent accounts, want 40", len(want))
	}
	for _, c := range []struct {
		from, to string // backends
		p        int
	}{{"heap", "heap", 3}, {"heap", "heap", 1}, {"pebble", "pebble", 3}, {"pebble", "heap", 3}, {"heap", "pebble", 1}} {
		// the first run, checkpointed once the plugin had 1000 records,
		// then killed
		job := func(backend string) string {
			return strings.Replace(timeoutCheckpointJob, "parallelism: 2\n", "parallelism: 2\nstate: { backend: "+backend+" }\n", 1)
		}
		backends := pebblestate.Backends{Root: t.TempDir()}
		g, plugins := planCheckpointJob(t, job(c.from), 0)
		first := newMarkConnectors()
		acks := runtime.NewAckRecorder()
		e, err := runtime.Start(context.Background(), g, runtime.Deps{Connectors: first, Plugins: plugins, Checkpoints: acks, StateBackends: backends})
		if err != nil {
			t.Fatal(err)
		}
		for recordsIn(e.Snapshot(), "timeout") < 1000 {
			select {
			case <-e.Done():
				t.Fatal("the job ended before the checkpoint")
			case <-time.After(time.Millisecond):
			}
		}
		// Pebble checkpoints in its own format, which only Pebble restores:
		// across backends, a savepoint (canonical) is what a user takes
		kind := checkpoint.KindCheckpoint
		if c.from == "pebble" && c.to != "pebble" {
			kind = checkpoint.KindSavepoint
		}
		if err := e.TriggerCheckpoint(1, kind, time.Now(), false); err != nil {
			t.Fatal(err)
		}
		acks.WaitAcked(t, e, 1)
		rd := acks.Publish(t, t.TempDir(), 1)
		e.Cancel()
		if _, err := e.Wait(); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("first run: %v", err)
		}
		if n := len(first.committed(1)); n != 0 {
			t.Fatalf("%d timers fired before the checkpoint, want none", n)
		}
		// the checkpoint holds every record's timer (the plugin registers
		// one per record, as Flink's example does, and none is due yet), in
		// its account's key group next to the account's count
		all, err := rd.Restore("timeout", 0, 1, g.Operators[1].MaxParallelism)
		if err != nil {
			t.Fatal(err)
		}
		timers, accounts, records := 0, 0, int64(0)
		for _, b := range all.KeyGroups {
			if err := runtime.ScanKeyGroupEntries(b, func(_, slot int, _, val []byte) error {
				switch slot {
				case runtime.SlotEventTimers:
					timers += len(val) / 8
				case 1:
					n, _ := abi.ReadInt(val)
					accounts, records = accounts+1, records+n
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		// (a Pebble checkpoint in its own format has its entries in the
		// copied database, which the restore below checks)
		native := all.Native != nil && len(all.KeyGroups) == 0
		if !native && (accounts == 0 || int64(timers) != records) {
			t.Fatalf("the checkpoint holds %d event-time timers for %d records of %d accounts, want one a record", timers, records, accounts)
		}
		g, plugins = planCheckpointJob(t, job(c.to), c.p, "timeout", "out")
		second := newMarkConnectors()
		if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: second, Plugins: plugins, Restore: rd, StateBackends: backends}); err != nil {
			t.Fatal(err)
		}
		if got := lines(second.committed(0)); !slices.Equal(got, want) {
			t.Errorf("%s p=2 -> %s p=%d: after the restore\n%q\nuninterrupted\n%q", c.from, c.to, c.p, got, want)
		}
	}
}

func recordsIn(r *runtime.Result, op string) int64 {
	for _, o := range r.Operators {
		if o.ID == op {
			return o.RecordsIn
		}
	}
	return 0
}

// TestTimersStayInAStopWithSavepoint: a stop-with-savepoint ends the job
// without the end of event time (Flink's stop without --drain), so no
// pending timer fires then: the savepoint keeps them, and they fire once,
// after the job resumes from it, with the uninterrupted run's output. (A
// close that fired every pending timer emitted each account's "silent"
// alert at the stop, and again after the restore.)
func TestTimersStayInAStopWithSavepoint(t *testing.T) {
	g, plugins := planCheckpointJob(t, timeoutCheckpointJob, 0)
	whole := newMarkConnectors()
	if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: whole, Plugins: plugins}); err != nil {
		t.Fatal(err)
	}
	want := len(whole.committed(0))
	if want != 40 {
		t.Fatalf("%d alerts uninterrupted, want one per account, 40", want)
	}
	g, plugins = planCheckpointJob(t, timeoutCheckpointJob, 0)
	first := newMarkConnectors()
	acks := runtime.NewAckRecorder()
	e, err := runtime.Start(context.Background(), g, runtime.Deps{Connectors: first, Plugins: plugins, Checkpoints: acks})
	if err != nil {
		t.Fatal(err)
	}
	for recordsIn(e.Snapshot(), "timeout") < 1000 {
		select {
		case <-e.Done():
			t.Fatal("the job ended before the savepoint")
		case <-time.After(time.Millisecond):
		}
	}
	if err := e.TriggerCheckpoint(1, checkpoint.KindSavepoint, time.Now(), true); err != nil {
		t.Fatal(err)
	}
	acks.WaitAcked(t, e, 1)
	rd := acks.Publish(t, t.TempDir(), 1)
	e.NotifyCheckpointComplete(1)
	if _, err := e.Wait(); err != nil {
		t.Fatalf("stop-with-savepoint: %v", err)
	}
	if n := len(first.committed(0)); n != 0 {
		t.Fatalf("%d alerts at the stop-with-savepoint, want none: its timers belong to the savepoint", n)
	}
	g, plugins = planCheckpointJob(t, timeoutCheckpointJob, 0, "timeout", "out")
	second := newMarkConnectors()
	if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: second, Plugins: plugins, Restore: rd}); err != nil {
		t.Fatal(err)
	}
	if got := len(second.committed(0)); got != want {
		t.Errorf("%d alerts after resuming from the savepoint, want %d", got, want)
	}
}
