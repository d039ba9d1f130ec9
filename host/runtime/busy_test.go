package runtime_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// TestPacedSourceIsIdle: a generator held to its rate spends its time
// waiting for the next record, which Flink counts as idle, not busy
// (idleTimeMsPerSecond); busy, idle and back-pressured time add up to the
// subtask's wall time. Before, every paced source showed busy 1000 ms/s.
func TestPacedSourceIsIdle(t *testing.T) {
	res := runPipeline(t, "paced.yaml", `
version: 1
name: paced
parallelism: 2
operators:
  - { id: gen, source: { type: generator, preset: sequence, count: 200, rate: 500 } }
  - { id: out, sink: { type: discard } }
`, nil, runtime.Options{})
	if res.err != nil {
		t.Fatal(res.err)
	}
	for _, st := range res.res.Operator("gen").Subtasks {
		if st.IdleMs <= st.BusyMs {
			t.Errorf("paced source subtask %d: idle %d ms, busy %d ms: waiting for the rate limit must count as idle", st.Subtask, st.IdleMs, st.BusyMs)
		}
	}
}

// TestStdinWaitIsIdle: a stdin source blocked on a read that has no input
// yet is idle. The test keeps stdin silent for 300 ms after the first
// line; the source must count at least that as idle.
func TestStdinWaitIsIdle(t *testing.T) {
	p, err := pipeline.Parse("stdin.yaml", []byte(`version: 1
name: stdin
operators:
  - { id: in, source: { type: stdin } }
  - { id: out, sink: { type: discard } }
`), pipeline.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		io.WriteString(pw, `{"n": 1}`+"\n")
		time.Sleep(300 * time.Millisecond) // silence on stdin: the source waits
		io.WriteString(pw, `{"n": 2}`+"\n")
		pw.Close()
	}()
	res, err := runtime.Run(context.Background(), g, runtime.Deps{
		Connectors: &connector.Builtin{Stdin: pr, Stdout: io.Discard},
	})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Operator("in").Subtasks[0]
	// The silence starts when the first line was written, a moment before
	// the source reads it and blocks: most of it, not all, is the
	// source's wait (297 ms was seen under the race detector). A read
	// counted as busy would give idle near 0 and busy near 300.
	if st.IdleMs < 200 || st.BusyMs >= st.IdleMs {
		t.Errorf("stdin source idle %d ms (busy %d ms) over 300 ms of silence on stdin: a blocked read is idle", st.IdleMs, st.BusyMs)
	}
}
