package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluicehq/sluice/host/pipeline"
)

// Each test here runs inside a synctest bubble: when the bubble's root
// returns, synctest.Test fails if any goroutine the job started is still
// blocked, so every test is also a goroutine-leak check. runWith checks
// that every source, sink and plugin instance was closed exactly once.

const failing = `
version: 1
name: failing
parallelism: 2
plugins:
  failing: { path: failing.wasm, config: { at: 500 } }
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 10000 }
  - id: m
    map: failing
    config: { at: 500 }
    %s
  - id: out
    sink: { type: discard }
    %s
`

func TestFailureNamesOperatorAndSubtaskAndKeepsEmitted(t *testing.T) {
	for _, c := range []struct{ name, m, out string }{
		{"chained", "", ""},
		{"sink shuffled", "", "partition: rebalance\n    parallelism: 1"},
		// m fails while src still sends to it: m drains its input
		{"map shuffled", "partition: rebalance", "partition: rebalance\n    parallelism: 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				conn, _, _, err := runYAML(t, fmt.Sprintf(failing, c.m, c.out), nil, Options{DrainTimeout: time.Hour, BatchSize: 10, QueueCapacity: 1})
				if time.Since(start) >= time.Hour {
					t.Fatal("the job hung after the failure until the drain timeout tore it down")
				}
				// chained, subtask 0 of m gets n = 500 (its source emits the
				// even n); behind a rebalance, the subtask the edge's random
				// start sends it to
				var oe *OpError
				if !errors.As(err, &oe) || oe.Operator != "m" || (c.m == "" && oe.Subtask != 0) {
					t.Fatalf("not an *OpError for m/0: %#v", err)
				}
				want := fmt.Sprintf(`operator "m" (subtask %d/2): refusing n=500`, oe.Subtask+1)
				if err.Error() != want {
					t.Fatalf("error %v, want %q", err, want)
				}
				if c.m != "" {
					return // which records m's subtask 0 got depends on the rebalance
				}
				// subtask 0 emits n = 0, 2, 4, ...; the failing batch (the fake
				// source's third, n in [400, 600)) is dropped whole; every
				// record before it reached the sink.
				got := map[int64]bool{}
				for _, r := range conn.records("out") {
					got[intField(r.Value, "n")] = true
				}
				for n := int64(0); n < 400; n += 2 {
					if !got[n] {
						t.Fatalf("n=%d was emitted before the failure and is lost", n)
					}
				}
			})
		})
	}
}

func TestMissingKeyFieldNamesRecordAndKeepsEarlier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fmt.Sprintf(aggPipeline, "streaming", `[{k: a, v: 1}, {v: 2}, {k: b, v: 3}]`, "sum: v")
		conn, _, _, err := runYAML(t, src, nil, Options{})
		want := `operator "src" (subtask 1/1): key-by "k" of "agg": record 2: no key field "k": {"v":2}`
		if err == nil || err.Error() != want {
			t.Fatalf("error %v\nwant  %s", err, want)
		}
		if got := conn.jsons("out"); len(got) != 1 || got[0] != `{"k":"a","v":1}` {
			t.Fatalf("sink got %v, want the record before the bad one", got)
		}
	})
}

// TestKeyOfTheWrongShape: a record that is not a map, and a key that is
// a map, are refused in words (not the decoder's "unexpected msgpack
// type").
func TestKeyOfTheWrongShape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for values, want := range map[string]string{
			`[[1, 2]]`:            `record 1: no key field "k": the record is an array, not a map: [1,2]`,
			`[{k: {x: 1}, v: 1}]`: `record 1: key {"x":1}: a key must be a string, a number, a boolean or an array of them, not a map`,
		} {
			_, _, _, err := runYAML(t, fmt.Sprintf(aggPipeline, "streaming", values, "sum: v"), nil, Options{})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %v\nwant  …%s", values, err, want)
			}
		}
	})
}

func TestCustomPartitionerOutOfRange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := fmt.Sprintf(seq, 100, 1, 4, "partition: { custom: off-by-one, key: n }")
		src += "plugins:\n  off-by-one: { path: p.wasm }\n"
		conn, _, _, err := runYAML(t, src, nil, Options{})
		want := `operator "src" (subtask 1/1): custom partitioner plugin "off-by-one" of "out" returned channel 4 for record 8 (key 7), want [0, 4): {"n":7}`
		if err == nil || err.Error() != want {
			t.Fatalf("error %v\nwant  %s", err, want)
		}
		_ = conn
	})
}

func TestSinkOpenFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := newFakeConnectors()
		conn.fail["out"] = errors.New("open /proc/nope/out.jsonl: no such file or directory")
		_, _, _, err := runWith(t, context.Background(), conn, fmt.Sprintf(seq, 100000, 2, 2, "partition: rebalance"), nil, Options{})
		want := `operator "out" (subtask `
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "/2): open /proc/nope/out.jsonl: no such file or directory") {
			t.Fatalf("error %v", err)
		}
	})
}

func TestCancelStopsUnboundedJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		conn := newFakeConnectors()
		batches := 0
		conn.before["out"] = func(int) {
			if batches++; batches == 5 {
				cancel()
			}
		}
		src := `
version: 1
name: forever
parallelism: 2
plugins:
  double: { path: double.wasm }
operators:
  - id: src
    source: { type: generator, preset: sequence }
  - id: m
    map: double
  - id: out
    sink: { type: discard }
    parallelism: 1
`
		_, _, res, err := runWith(t, ctx, conn, src, nil, Options{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		if res == nil || res.Operator("src").RecordsOut == 0 || res.Total != -1 {
			t.Fatalf("result %+v", res)
		}
	})
}

// A slow sink: the source is back-pressured (the metrics say so) and the
// records in flight never exceed what the queues hold.
func TestSlowSinkBackPressuresAndBoundsMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const batch, capacity = 100, 2
		conn := newFakeConnectors()
		received, worst := int64(0), int64(0)
		conn.before["out"] = func(count int) {
			time.Sleep(time.Millisecond)
			worst = max(worst, conn.emitted.Load()-received)
			received += int64(count)
		}
		src := `
version: 1
name: slow
plugins:
  double: { path: double.wasm }
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 20000 }
  - id: m
    map: double
  - id: out
    partition: rebalance
    sink: { type: discard }
`
		_, _, res, err := runWith(t, context.Background(), conn, src, nil, Options{BatchSize: batch, QueueCapacity: capacity})
		if err != nil {
			t.Fatal(err)
		}
		// in flight: the queue's buffers, the batch being filled and the
		// source's own batch of 100
		if bound := int64((capacity+1)*batch + 100); worst > bound || worst == 0 {
			t.Fatalf("up to %d records in flight, bound %d", worst, bound)
		}
		if received != 20000 {
			t.Fatalf("sink got %d records", received)
		}
		src0 := res.Operator("src").Subtasks[0]
		if src0.BackPressuredMs == 0 || res.Operator("m").BackPressuredMs == 0 {
			t.Fatalf("source not back-pressured: %+v", src0)
		}
		if sink := res.Operator("out").Subtasks[0]; sink.BusyMs == 0 {
			t.Fatalf("sink not busy: %+v", sink)
		}
	})
}

// The same runs outside a bubble, counting goroutines with the real
// scheduler: after success, failure and cancel the count returns to where
// it was.
func TestNoGoroutineLeftBehind(t *testing.T) {
	base := runtime.NumGoroutine()
	check := func(what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > base {
			buf := make([]byte, 1<<16)
			t.Fatalf("after %s: %d goroutines, %d before\n%s", what, n, base, buf[:runtime.Stack(buf, true)])
		}
	}
	if _, _, _, err := runYAML(t, fmt.Sprintf(seq, 20000, 2, 3, "key-by: n"), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	check("success")
	if _, _, _, err := runYAML(t, fmt.Sprintf(failing, "partition: rebalance", "partition: rebalance"), nil, Options{}); err == nil {
		t.Fatal("no error")
	}
	check("failure")
	ctx, cancel := context.WithCancel(context.Background())
	conn := newFakeConnectors()
	conn.before["out"] = func(int) { cancel() }
	unbounded := strings.Replace(fmt.Sprintf(seq, 1, 2, 2, "partition: rebalance"), ", count: 1", "", 1)
	if _, _, _, err := runWith(t, ctx, conn, unbounded, func(p *pipeline.Pipeline) {}, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	check("cancel")
}

// Snapshot may be called while the job runs (progress display, host
// serve): under -race this checks the metrics are read safely, and the
// figures only grow.
func TestSnapshotWhileRunning(t *testing.T) {
	g := planYAML(t, fmt.Sprintf(seq, 200000, 2, 3, "key-by: n"), nil)
	conn := newFakeConnectors()
	e, err := Start(context.Background(), g, Deps{Connectors: conn, Plugins: newFakePlugins()})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for done := false; !done; {
		select {
		case <-e.Done():
			done = true
		default:
		}
		r := e.Snapshot()
		if r.Done < last || (r.Total != -1 && r.Total != 200000) {
			t.Fatalf("done %d after %d, total %d", r.Done, last, r.Total)
		}
		last = r.Done
	}
	res, err := e.Wait()
	if err != nil || res.Done != 200000 || res.Total != 200000 || res.Operator("out").RecordsIn != 200000 {
		t.Fatalf("%v %+v", err, res)
	}
}

// TestTooManyChannelsRefusedUpFront: an all-to-all edge between two wide
// operators needs upstream × downstream channels, each with its room in
// the downstream gate (4096 × 4096 took 8.8 GB before anything ran); past
// maxChannels the job is refused at once, naming the edge.
func TestTooManyChannelsRefusedUpFront(t *testing.T) {
	src := `version: 1
name: wide
parallelism: 2048
max-parallelism: 4096
operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 } }
  - { id: total, key-by: n, sum: n }
  - { id: out, sink: { type: discard } }
`
	_, _, _, err := runYAML(t, src, nil, Options{})
	if err == nil || !strings.Contains(err.Error(), "the job needs 4194304 channels between its tasks, more than the 1048576 one host runs") ||
		!strings.Contains(err.Error(), "edge src -> total (HASH) alone needs 2048 × 2048; lower the parallelism") {
		t.Fatalf("err = %v", err)
	}
	// within the bound it runs
	if _, _, _, err := runYAML(t, strings.Replace(src, "parallelism: 2048", "parallelism: 64", 1), nil, Options{}); err != nil {
		t.Fatal(err)
	}
}

// TestCancelledJobIsLoggedAsCancelled: a cancelled job's last line says
// cancelled, not failed, and names the job as job_name, so a caller's
// logger that carries job (the server's job id) keeps one value per key.
func TestCancelledJobIsLoggedAsCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, nil)).With("job", "id-1")
		conn := newFakeConnectors()
		// the sink's goroutine says when it has had 3 batches, and the
		// test cancels: the sink may run before Start returns e
		third := make(chan struct{})
		batches := 0
		conn.before["out"] = func(int) {
			if batches++; batches == 3 {
				close(third)
			}
		}
		src := `
version: 1
name: forever
operators:
  - id: src
    source: { type: generator, preset: sequence }
  - id: out
    sink: { type: discard }
`
		e, err := Start(context.Background(), planYAML(t, src, nil), Deps{Plugins: newFakePlugins(), Connectors: conn, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		<-third
		e.Cancel()
		if _, err := e.Wait(); !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		out := buf.String()
		if !strings.Contains(out, `msg="job cancelled"`) || strings.Contains(out, "job failed") {
			t.Errorf("a cancelled job's log:\n%s", out)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.Count(line, " job=") != 1 || !strings.Contains(line, " job=id-1") {
				t.Errorf("want job= once, the caller's: %s", line)
			}
		}
		if !strings.Contains(out, "job_name=forever") {
			t.Errorf("no job_name=forever:\n%s", out)
		}
	})
}
