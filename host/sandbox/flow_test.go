package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// slowConnectors replaces the discard sink with a slow one that, after
// each batch, collects garbage and samples the heap in use: the peak then
// is what the job holds live.
type slowConnectors struct {
	*connector.Builtin
	delay   time.Duration
	records atomic.Int64
	peak    atomic.Uint64
}

func (c *slowConnectors) Sink(spec *pipeline.Operator, subtask, parallelism int) (runtime.Operator, error) {
	if spec.Sink.Type == "discard" {
		return &slowSink{c: c}, nil
	}
	return c.Builtin.Sink(spec, subtask, parallelism)
}

type slowSink struct{ c *slowConnectors }

func (s *slowSink) Open(*runtime.OpenContext) error { return nil }
func (s *slowSink) Close(runtime.Collector) error   { return nil }

func (s *slowSink) Process(_ int, batch []byte, count int, _ runtime.Collector) error {
	rd := abi.NewReader(batch, count)
	for rd.Next() {
	}
	if err := rd.Err(); err != nil {
		return err
	}
	s.c.records.Add(int64(count))
	time.Sleep(s.c.delay)
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	for {
		p := s.c.peak.Load()
		if ms.HeapInuse <= p || s.c.peak.CompareAndSwap(p, ms.HeapInuse) {
			return nil
		}
	}
}

// Row 17: a slow sink back-pressures the job through bounded queues: the
// upstream blocks (visible in the metrics as back-pressured time), every
// record arrives, and the memory held stays flat: 20 MB flow through while
// the heap in use grows by a few MiB at most.
func TestSandbox17_SlowSink(t *testing.T) {
	h := tenant(t, nil)
	dir := t.TempDir()
	pad := strings.Repeat("y", 10_000)
	f, err := os.Create(filepath.Join(dir, "in.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(f, "{\"n\":%d,\"pad\":%q}\n", i, pad)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	goruntime.GC()
	var base goruntime.MemStats
	goruntime.ReadMemStats(&base)
	var slow *slowConnectors
	j := runYAML(t, h, dir, `version: 1
name: slow
plugins:
  poison: { path: {wasm:poison} }
operators:
  - { id: src, source: { type: file, path: in.jsonl } }
  - { id: m, map: poison }
  - { id: out, sink: { type: discard }, partition: rebalance }
`, runtime.Options{QueueCapacity: 2, BatchBytes: 64 << 10}, func(b *connector.Builtin) runtime.Connectors {
		slow = &slowConnectors{Builtin: b, delay: time.Millisecond}
		return slow
	})
	if j.err != nil {
		t.Fatal(j.err)
	}
	if n := slow.records.Load(); n != 2000 || j.res.Operator("out").RecordsIn != 2000 {
		t.Errorf("the sink got %d records (metrics: %d), want 2000", n, j.res.Operator("out").RecordsIn)
	}
	if bp := j.res.Operator("m").BackPressuredMs; bp <= 0 {
		t.Errorf("the upstream task shows no back-pressured time (%d ms) behind a slow sink", bp)
	}
	grown := int64(slow.peak.Load()) - int64(base.HeapInuse)
	t.Logf("heap in use: %d KiB before, peak %d KiB grown while the job ran", base.HeapInuse>>10, grown>>10)
	if grown > 8<<20 {
		t.Errorf("the heap in use grew by %d MiB while 20 MB flowed through bounded queues", grown>>20)
	}
}

// Row 18: a guest's log flood is capped per plugin: each instance keeps
// the last StderrCap bytes of its stderr, nothing reaches the host's own
// logs, and the lines dropped are counted in the operator's metrics and
// the summary. A failure shows only the kept tail.
func TestSandbox18_LogFlood(t *testing.T) {
	h := tenant(t, func(c *plugin.Config) { c.StderrCap = 4096 })
	// 5 records write 2,000 lines of 16 bytes each: 10,000 lines, of which
	// the last 4,096 bytes (256 lines) are kept
	j := runYAML(t, h, t.TempDir(), poisonJob(`[{c: logs}, {c: logs}, {c: logs}, {c: logs}, {c: logs}, {n: 6}]`, "fail"), runtime.Options{}, nil)
	if j.err != nil {
		t.Fatal(j.err)
	}
	if m := j.res.Operator("m"); m.LogLinesDropped != 10_000-256 || j.out != strings.Repeat("{\"c\":\"logs\"}\n", 5)+"{\"n\":6}\n" {
		t.Errorf("dropped %d lines, want 9744; printed %q", m.LogLinesDropped, j.out)
	}
	var summary strings.Builder
	if err := j.res.WriteSummary(&summary); err != nil || !strings.Contains(summary.String(), `operator "m": 9,744 guest log lines dropped`) {
		t.Errorf("summary: %v\n%s", err, summary.String())
	}

	j = runYAML(t, h, t.TempDir(), poisonJob(`[{c: logs}, {c: logs}, {n: 3, c: fail}]`, "fail"), runtime.Options{}, nil)
	failed(t, h, j)
	var pe *plugin.PluginError
	if !errors.As(j.err, &pe) {
		t.Fatalf("not a plugin error: %v", j.err)
	}
	if len(pe.Stderr) != 4096 || !strings.HasSuffix(pe.Stderr, "guest log line.\n") || !strings.Contains(j.err.Error(), `stderr tail: "guest log line.\n`) {
		t.Errorf("stderr tail of %d bytes in the error, want the last 4096", len(pe.Stderr))
	}
	healthy(t, h)
}
