package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// Windows end to end from YAML: the real elements source and print sink.
// timedConnectors stamps each source record with the event time in its ts
// field, as a timestamp assigner would (watermarks: timestamp: {field: ts}
// does the same in the engine). The elements source emits its records in
// one batch, before its first periodic watermark, so these bounded jobs
// fire their windows at the end of input (STREAMING) or once after the
// sorted input (BATCH): every window once, with its final contents, as
// Flink's MAX_WATERMARK at the end of input fires it.

type timedConnectors struct{ runtime.Connectors }

func (c timedConnectors) Source(spec *pipeline.Operator, subtask, parallelism int) (runtime.Source, error) {
	s, err := c.Connectors.Source(spec, subtask, parallelism)
	if err != nil {
		return nil, err
	}
	return timedSource{s}, nil
}

type timedSource struct{ runtime.Source }

func (s timedSource) Run(ctx context.Context, out runtime.Collector) error {
	return s.Source.Run(ctx, &stamper{out: out})
}

type stamper struct {
	out runtime.Collector
	w   abi.Writer
}

func (s *stamper) Emit(port int, b []byte, count int) error {
	rd := abi.NewReader(b, count)
	for rd.Next() {
		r := rd.Current()
		raw, ok, err := abi.MapField(r.Value, "ts")
		if err != nil || !ok {
			s.w.Append(0, false, r.Key, r.Value)
			continue
		}
		ts, err := abi.ReadInt(raw)
		if err != nil {
			return err
		}
		s.w.Append(ts, true, r.Key, r.Value)
	}
	if err := rd.Err(); err != nil {
		return err
	}
	err := s.out.Emit(port, s.w.Buf, s.w.Count)
	s.w.Reset()
	return err
}

func runWindows(t *testing.T, src string) []string {
	t.Helper()
	out, _ := runWindowsWith(t, src, true)
	return out
}

// runWindowsWith runs src with the real elements source and print sink,
// its records stamped by timedConnectors when stamp, else only by the
// pipeline's own timestamp assigner; the printed lines and the result.
func runWindowsWith(t *testing.T, src string, stamp bool) ([]string, *runtime.Result) {
	t.Helper()
	p, err := pipeline.Parse("w.yaml", []byte(strings.TrimSpace(src)+"\n"), pipeline.ParseOptions{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var stdout syncBuffer
	wd, _ := os.Getwd()
	var conns runtime.Connectors = &connector.Builtin{Stdout: &stdout, Stdin: strings.NewReader(""), Root: wd}
	if stamp {
		conns = timedConnectors{conns}
	}
	res, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conns})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return multiset(parseLines(t, stdout.b.String())), res
}

// windowPipeline is a keyed window of the test vectors at parallelism p
// in mode.
func windowPipeline(mode, p, values, op string) string {
	return `
version: 1
name: windows
mode: ` + mode + `
parallelism: ` + p + `
operators:
  - id: src
    source: { type: elements, values: ` + values + `, watermarks: { strategy: bounded-out-of-orderness, max-out-of-orderness: 1s } }
` + op + `
  - id: out
    sink: { type: print, prefix: w }
`
}

// Each case: its windows (from Flink's test vectors: TimeWindowTest's
// size 7 offset 3, with times before 1970; sliding; merging sessions)
// and the lines it must print, the same at parallelism 1 and 4, in
// STREAMING and BATCH.
func TestWindowsEndToEndFromYAML(t *testing.T) {
	cases := []struct {
		name, values, op string
		want             []string
	}{{
		name: "tumbling size 7ms offset 3ms, negative times",
		values: `[{k: a, ts: -7, v: 1}, {k: b, ts: -8, v: 1}, {k: a, ts: -1, v: 2}, {k: a, ts: 0, v: 3}, {k: b, ts: 3, v: 4},
      {k: a, ts: 6, v: 5}, {k: a, ts: 7, v: 6}, {k: a, ts: 13, v: 7}, {k: b, ts: 14, v: 8}]`,
		op: `  - id: win
    key-by: k
    window: { type: tumbling, size: 7ms, offset: 3ms }
    sum: v`,
		want: []string{
			`w {"k":"a","ts":-1,"v":5,"window_start":-4,"window_end":3}`,
			`w {"k":"a","ts":-7,"v":1,"window_start":-11,"window_end":-4}`,
			`w {"k":"a","ts":13,"v":7,"window_start":10,"window_end":17}`,
			`w {"k":"a","ts":6,"v":11,"window_start":3,"window_end":10}`,
			`w {"k":"b","ts":-8,"v":1,"window_start":-11,"window_end":-4}`,
			`w {"k":"b","ts":14,"v":8,"window_start":10,"window_end":17}`,
			`w {"k":"b","ts":3,"v":4,"window_start":3,"window_end":10}`,
		},
	}, {
		name:   "sliding 10ms by 5ms, named bound fields",
		values: `[{k: a, ts: -3, v: 2}, {k: a, ts: 0, v: 9}, {k: a, ts: 7, v: 4}]`,
		op: `  - id: win
    key-by: k
    window: { type: sliding, size: 10ms, slide: 5ms, start-field: from, end-field: to }
    max: v`,
		want: []string{
			`w {"k":"a","ts":-3,"v":2,"from":-10,"to":0}`,
			`w {"k":"a","ts":-3,"v":9,"from":-5,"to":5}`,
			`w {"k":"a","ts":0,"v":9,"from":0,"to":10}`,
			`w {"k":"a","ts":7,"v":4,"from":5,"to":15}`,
		},
	}, {
		name:   "sessions gap 5ms merging",
		values: `[{k: c, ts: 0}, {k: c, ts: 3}, {k: d, ts: 1}, {k: c, ts: 11}, {k: c, ts: 16}, {k: c, ts: 20}, {k: d, ts: 6}]`,
		op: `  - id: win
    key-by: k
    window: { type: session, gap: 5ms }
    count: true`,
		want: []string{
			`w {"k":"c","count":2,"window_start":0,"window_end":8}`,
			`w {"k":"c","count":3,"window_start":11,"window_end":25}`,
			`w {"k":"d","count":2,"window_start":1,"window_end":11}`,
		},
	}, {
		name:   "window-all tumbling count",
		values: `[{k: a, ts: -7}, {k: b, ts: -8}, {k: a, ts: -1}, {k: a, ts: 0}, {k: b, ts: 3}]`,
		op: `  - id: win
    window-all: { type: tumbling, size: 7ms, offset: 3ms }
    count: true`,
		want: []string{
			`w {"count":2,"window_start":-11,"window_end":-4}`,
			`w {"count":2,"window_start":-4,"window_end":3}`,
			`w {"count":1,"window_start":3,"window_end":10}`,
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := slices.Clone(c.want)
			slices.Sort(want)
			for _, mode := range []string{"streaming", "batch"} {
				for _, p := range []string{"1", "4"} {
					got := runWindows(t, windowPipeline(mode, p, c.values, c.op))
					if !slices.Equal(got, want) {
						t.Errorf("%s at parallelism %s:\n  %s\nwant\n  %s", mode, p, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
					}
				}
			}
		})
	}
}

// The late side output is a port a sink can read (input: win.late): the
// job plans and runs; at the end of input nothing is late.
func TestWindowLateOutputWired(t *testing.T) {
	src := windowPipeline("streaming", "2", `[{k: a, ts: 1, v: 1}]`, `  - id: win
    key-by: k
    window: { type: tumbling, size: 10ms, allowed-lateness: 5ms }
    sum: v`) + `  - id: late
    input: win.late
    sink: { type: print, prefix: late }
`
	got := runWindows(t, src)
	if !slices.Equal(got, []string{`w {"k":"a","ts":1,"v":1,"window_start":0,"window_end":10}`}) {
		t.Errorf("got %v", got)
	}
}

const windowCheckpointJob = `
version: 1
name: window-checkpoint
parallelism: 1
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 20000, rate: 20000 }
  - id: pairs
    window-all: { type: global, count: 2 }
    max: n
  - id: out
    sink: { type: discard }
`

// TestWindowStateCheckpointed: a window's contents are keyed state that a
// checkpoint takes and a restore gives back. Count windows of two
// records over the sequence pair (0,1), (2,3), ...: the restored run
// goes on with the pair the checkpoint left half full, so what the sink
// committed with the checkpoint and what the restored run emitted hold
// every odd number once (a lost half pair would shift the pairs and
// bring even maxima).
func TestWindowStateCheckpointed(t *testing.T) {
	got := checkpointThenRestore(t, windowCheckpointJob, 200, 1)
	seen := map[int64]int{}
	for _, v := range got {
		raw, _, _ := abi.MapField(v, "n")
		n, _ := abi.ReadInt(raw)
		seen[n]++
	}
	if len(seen) != 10000 {
		t.Errorf("%d distinct maxima, want 10000", len(seen))
	}
	for n, k := range seen {
		if n%2 != 1 || k != 1 || n < 1 || n > 19999 {
			t.Fatalf("max %d seen %d times: %d windows in all", n, k, len(got))
		}
	}
}

// pluginWindowJob is a window whose function is a Wasm plugin, from
// YAML, run by runTimed (timestamps from the ts field).
func pluginWindowJob(mode, p, values, win, fn string) string {
	return `
version: 1
name: plugin-windows
mode: ` + mode + `
parallelism: ` + p + `
plugins:
  reduce-sum: { path: ../../plugins/reduce-sum/reduce-sum.wasm, config: { field: v } }
  top-bids: { path: ../../plugins/top-bids/top-bids.wasm, config: { field: v } }
  top-bids-c: { path: ../../plugins/top-bids/top-bids-c.wasm, config: { field: v } }
operators:
  - id: src
    source: { type: elements, values: ` + values + `, watermarks: { strategy: bounded-out-of-orderness, max-out-of-orderness: 1s } }
  - id: win
` + win + `
    ` + fn + `
  - id: out
    sink: { type: print, prefix: w }
`
}

// Wasm window functions end to end: the reduce-sum plugin in a window
// gives what the built-in sum gives (Flink's sum keeps the first
// record's other fields, as reduce-sum's accumulator does), and the
// top-bids process-window plugin (n 1) what the built-in max-by gives
// (the first record of the highest value): on Flink's vectors of the
// built-in cases above (tumbling size 7 offset 3 before 1970, sliding,
// merging sessions, window-all), at parallelism 1 and 4, STREAMING and
// BATCH.
func TestWindowPluginFunctionsEndToEndFromYAML(t *testing.T) {
	values := `[{k: a, ts: -7, v: 1}, {k: b, ts: -8, v: 1}, {k: a, ts: -1, v: 2}, {k: a, ts: 0, v: 3}, {k: b, ts: 3, v: 4},
      {k: a, ts: 6, v: 5}, {k: a, ts: 7, v: 6}, {k: a, ts: 13, v: 7}, {k: b, ts: 14, v: 8}, {k: b, ts: 15, v: 8}, {k: b, ts: 22, v: 1}]`
	wins := map[string]string{
		"tumbling":   "    key-by: k\n    window: { type: tumbling, size: 7ms, offset: 3ms }",
		"sliding":    "    key-by: k\n    window: { type: sliding, size: 10ms, slide: 5ms, start-field: from, end-field: to }",
		"session":    "    key-by: k\n    window: { type: session, gap: 5ms }",
		"window-all": "    window-all: { type: tumbling, size: 7ms, offset: 3ms }",
	}
	pairs := [][2]string{{"sum: v", "reduce: reduce-sum"}, {"max-by: v", "process: top-bids"}, {"max-by: v", "process: top-bids-c"}}
	for name, win := range wins {
		for _, pair := range pairs {
			t.Run(name+"/"+pair[1], func(t *testing.T) {
				for _, mode := range []string{"streaming", "batch"} {
					for _, p := range []string{"1", "4"} {
						w := runTimed(t, pluginWindowJob(mode, p, values, win, pair[0]))
						g := runTimed(t, pluginWindowJob(mode, p, values, win, pair[1]))
						if len(w) < 3 || !slices.Equal(g, w) {
							t.Errorf("%s at parallelism %s:\n  %s\nbuilt-in %s:\n  %s", mode, p, strings.Join(g, "\n  "), pair[0], strings.Join(w, "\n  "))
						}
					}
				}
			})
		}
	}
}

// runTimed runs src (a file in this folder: plugin paths are relative to
// it) with its plugins and timedConnectors; the printed lines as multiset.
func runTimed(t *testing.T, src string) []string {
	t.Helper()
	wd, _ := os.Getwd()
	file := filepath.Join(wd, "inline.yaml")
	p, err := pipeline.Parse(file, []byte(strings.TrimSpace(src)+"\n"), pipeline.ParseOptions{PluginRoots: []string{filepath.Join(wd, "../..")}})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var stdout syncBuffer
	conns := timedConnectors{&connector.Builtin{Stdout: &stdout, Stdin: strings.NewReader(""), Root: wd}}
	if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: conns, Plugins: loadPlugins(t, file, p)}); err != nil {
		t.Fatalf("run: %v", err)
	}
	return multiset(parseLines(t, stdout.b.String()))
}

// The source's own timestamp assigner (watermarks: timestamp: {field:
// ts}) stamps records in BATCH as in STREAMING: BATCH runs no watermarks,
// but Flink's BATCH execution still assigns timestamps, so a window there
// sees the field's times (it failed with "record has no event time"). The
// windows equal those of the test connectors' stamping, at parallelism 1
// and 2, in both modes; a record without the field goes to on-error.
func TestWindowTimestampFieldInBothModes(t *testing.T) {
	values := `[{k: a, ts: -7, v: 1}, {k: b, ts: -8, v: 1}, {k: a, ts: -1, v: 2}, {k: a, ts: 0, v: 3}, {k: b, ts: 3, v: 4},
      {k: a, ts: 6, v: 5}, {k: a, ts: 7, v: 6}, {k: a, ts: 13, v: 7}, {k: b, ts: 14, v: 8}, {k: c, v: 9}]`
	job := func(mode, p string) string {
		return `
version: 1
name: stamped
mode: ` + mode + `
parallelism: ` + p + `
operators:
  - id: src
    on-error: skip
    source: { type: elements, values: ` + values + `, watermarks: { strategy: bounded-out-of-orderness, max-out-of-orderness: 1s, timestamp: { field: ts } } }
  - id: win
    key-by: k
    window: { type: tumbling, size: 7ms, offset: 3ms }
    sum: v
  - id: out
    sink: { type: print, prefix: w }
`
	}
	run := func(src string) []string {
		t.Helper()
		out, res := runWindowsWith(t, src, false)
		if n := res.Operator("src").Skipped; n != 1 {
			t.Errorf("the record without ts: %d skipped, want 1", n)
		}
		return out
	}
	want := []string{
		`w {"k":"a","ts":-1,"v":5,"window_start":-4,"window_end":3}`,
		`w {"k":"a","ts":-7,"v":1,"window_start":-11,"window_end":-4}`,
		`w {"k":"a","ts":13,"v":7,"window_start":10,"window_end":17}`,
		`w {"k":"a","ts":6,"v":11,"window_start":3,"window_end":10}`,
		`w {"k":"b","ts":-8,"v":1,"window_start":-11,"window_end":-4}`,
		`w {"k":"b","ts":14,"v":8,"window_start":10,"window_end":17}`,
		`w {"k":"b","ts":3,"v":4,"window_start":3,"window_end":10}`,
	}
	slices.Sort(want)
	for _, mode := range []string{"streaming", "batch"} {
		for _, p := range []string{"1", "2"} {
			if got := run(job(mode, p)); !slices.Equal(got, want) {
				t.Errorf("%s, parallelism %s:\n got %q\nwant %q", mode, p, got, want)
			}
		}
	}
}
