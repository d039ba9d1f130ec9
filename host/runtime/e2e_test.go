package runtime_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/partition"
)

// Record-by-record checks of the shipped configs and of inline pipelines,
// through the real connectors and plugins. The subtask of each record is
// read from the print prefix.

func cfg(name string) string { return filepath.Join(configsDir, name) }

func TestE2EHashRoutingFollowsKeyGroups(t *testing.T) {
	r := runPipeline(t, cfg("keyby-running-total.yaml"), "", nil, runtime.Options{})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.lines) != 1000 {
		t.Fatalf("%d lines", len(r.lines))
	}
	for _, l := range r.lines {
		acct := l.Fields["accountId"].(string)
		h := abi.StringHash([]byte(acct))
		want := partition.OperatorIndexForKeyGroup(128, 4, partition.KeyGroup(h, 128))
		if l.Subtask != want {
			t.Fatalf("%s printed by subtask %d, key group rule says %d", l.JSON, l.Subtask, want)
		}
	}
}

func TestE2ERescalePairsPointwiseRoundRobin(t *testing.T) {
	r := runPipeline(t, cfg("rescale.yaml"), "", nil, runtime.Options{})
	if r.err != nil {
		t.Fatal(r.err)
	}
	// numbers (parallelism 2) feed out (4): 0 -> {0, 1}, 1 -> {2, 3};
	// upstream i sends its records (n = i, i+2, ...) round robin from the
	// first channel of its subset
	got := map[int64]int{}
	for _, l := range r.lines {
		got[intOf(t, l, "n")] = l.Subtask
	}
	sent := [2]int{}
	for n := int64(0); n < 20; n++ {
		up := int(n % 2)
		first, end := partition.PointwiseTargets(up, 2, 4)
		want := first + sent[up]%(end-first)
		sent[up]++
		if got[n] != want {
			t.Fatalf("n=%d on subtask %d, want %d", n, got[n], want)
		}
	}
}

func TestE2ERebalanceGlobalBroadcastShuffle(t *testing.T) {
	count := func(r run) map[int]int {
		c := map[int]int{}
		for _, l := range r.lines {
			c[l.Subtask]++
		}
		return c
	}
	r := runPipeline(t, cfg("rebalance.yaml"), "", nil, runtime.Options{})
	if c := count(r); r.err != nil || len(c) != 4 || c[0] != 5 || c[1] != 5 || c[2] != 5 || c[3] != 5 {
		t.Fatalf("rebalance: %v %v", c, r.err)
	}
	r = runPipeline(t, cfg("global.yaml"), "", nil, runtime.Options{})
	if c := count(r); r.err != nil || len(c) != 1 || c[0] != 12 {
		t.Fatalf("global: %v %v", c, r.err)
	}
	r = runPipeline(t, cfg("broadcast.yaml"), "", nil, runtime.Options{})
	seen := map[string]bool{}
	for _, l := range r.lines {
		seen[fmt.Sprintf("%d@%d", intOf(t, l, "n"), l.Subtask)] = true
	}
	if r.err != nil || len(r.lines) != 15 || len(seen) != 15 {
		t.Fatalf("broadcast: %d lines, %d distinct (record, subtask), %v", len(r.lines), len(seen), r.err)
	}
	r = runPipeline(t, cfg("shuffle.yaml"), "", nil, runtime.Options{})
	if r.err != nil || len(multiset(r.lines)) != 30 {
		t.Fatalf("shuffle: %d lines %v", len(r.lines), r.err)
	}
}

const minVsMinBy = `
version: 1
name: min
mode: %s
operators:
  - id: src
    source: { type: elements, values: [{k: a, v: 5, tag: first}, {k: a, v: 3, tag: second}, {k: a, v: 3, tag: third}, {k: a, v: 9, tag: fourth}] }
  - id: agg
    key-by: k
    %s: v
  - id: out
    sink: { type: print }
`

func TestE2EMinAgainstMinBy(t *testing.T) {
	for _, c := range []struct{ mode, agg, want string }{
		{"streaming", "min", `{"k":"a","v":5,"tag":"first"} {"k":"a","v":3,"tag":"first"} {"k":"a","v":3,"tag":"first"} {"k":"a","v":3,"tag":"first"}`},
		{"streaming", "min-by", `{"k":"a","v":5,"tag":"first"} {"k":"a","v":3,"tag":"second"} {"k":"a","v":3,"tag":"second"} {"k":"a","v":3,"tag":"second"}`},
		{"streaming", "max-by", `{"k":"a","v":5,"tag":"first"} {"k":"a","v":5,"tag":"first"} {"k":"a","v":5,"tag":"first"} {"k":"a","v":9,"tag":"fourth"}`},
		{"batch", "min", `{"k":"a","v":3,"tag":"first"}`},
		{"batch", "min-by", `{"k":"a","v":3,"tag":"second"}`},
	} {
		t.Run(c.mode+"/"+c.agg, func(t *testing.T) {
			r := runPipeline(t, "inline.yaml", fmt.Sprintf(minVsMinBy, c.mode, c.agg), nil, runtime.Options{})
			if r.err != nil {
				t.Fatal(r.err)
			}
			if got := strings.Join(strings.Fields(r.out), " "); got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestE2EBatchGivesOnlyFinals(t *testing.T) {
	batch := runPipeline(t, cfg("batch.yaml"), "", nil, runtime.Options{})
	if batch.err != nil {
		t.Fatal(batch.err)
	}
	stream := runPipeline(t, cfg("batch.yaml"), "", setMode("streaming"), runtime.Options{})
	if stream.err != nil {
		t.Fatal(stream.err)
	}
	// streaming prints a running total per record; its last per currency
	// (one sink subtask per currency, lines in order) is the batch final
	last := map[string]int64{}
	for _, l := range stream.lines {
		last[l.Fields["currency"].(string)] = intOf(t, l, "amount")
	}
	if len(batch.lines) != 3 || len(stream.lines) != 1000 {
		t.Fatalf("batch printed %d lines, streaming %d", len(batch.lines), len(stream.lines))
	}
	for _, l := range batch.lines {
		if cur := l.Fields["currency"].(string); intOf(t, l, "amount") != last[cur] {
			t.Fatalf("batch final %s, streaming ended at %d", l.JSON, last[cur])
		}
	}
}

func TestE2EUnionWithItselfDoubles(t *testing.T) {
	src := `
version: 1
name: self-union
parallelism: 2
operators:
  - id: nums
    source: { type: generator, preset: sequence, count: 100 }
  - id: out
    input: [nums, nums]
    sink: { type: print, prefix: u }
`
	r := runPipeline(t, "inline.yaml", src, nil, runtime.Options{})
	seen := map[int64]int{}
	for _, l := range r.lines {
		seen[intOf(t, l, "n")]++
	}
	for n := int64(0); n < 100; n++ {
		if seen[n] != 2 {
			t.Fatalf("n=%d printed %d times, want 2 (%v)", n, seen[n], r.err)
		}
	}
}

func TestE2ESideOutputReachesItsConsumer(t *testing.T) {
	r := runPipeline(t, cfg("side-output.yaml"), "", nil, runtime.Options{})
	if r.err != nil {
		t.Fatal(r.err)
	}
	// every reading above the threshold (25), and only those, is an alert
	all := runPipeline(t, "inline.yaml", `
version: 1
name: readings
parallelism: 2
operators:
  - id: readings
    source: { type: generator, preset: sensors, count: 300, seed: 11 }
  - id: out
    sink: { type: print }
`, nil, runtime.Options{})
	want := 0
	for _, l := range all.lines {
		if v, _ := field(t, l, "value").Float64(); v > 25 {
			want++
		}
	}
	if want == 0 || len(r.lines) != want {
		t.Fatalf("%d alerts, %d readings above 25", len(r.lines), want)
	}
	for _, l := range r.lines {
		if v, _ := field(t, l, "value").Float64(); l.Prefix != "ALERT" || v <= 25 {
			t.Fatalf("alert %q %s", l.Prefix, l.JSON)
		}
	}
	if m := r.res.Operator("all"); m.RecordsIn != 300 {
		t.Fatalf("main output got %d records", m.RecordsIn)
	}
}

func TestE2EConnectFeedsBothSides(t *testing.T) {
	r := runPipeline(t, cfg("connect.yaml"), "", nil, runtime.Options{})
	if r.err != nil {
		t.Fatal(r.err)
	}
	sides := map[string]int{}
	for _, l := range r.lines {
		s, _ := l.Fields["source"].(string)
		_, hasLimit := l.Fields["limit"]
		if (s == "second") != hasLimit {
			t.Fatalf("%s came in on the wrong side", l.JSON)
		}
		sides[s]++
	}
	if sides["first"] != 100 || sides["second"] != 2 {
		t.Fatalf("sides %v", sides)
	}
}

func TestE2EBadInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte("{\"k\":\"a\",\"v\":1}\n{\"k\":\"b\",\"v\":2}\n{\"k\":\"c\", oops}\n{\"k\":\"d\",\"v\":4}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fileSrc := `
version: 1
name: bad
operators:
  - id: src
    source: { type: file, path: %q }
  - id: out
    sink: { type: print }
`
	r := runPipeline(t, filepath.Join(dir, "p.yaml"), fmt.Sprintf(fileSrc, in), nil, runtime.Options{})
	if r.err == nil || !strings.HasPrefix(r.err.Error(), `operator "src" (subtask 1/1): `) || !strings.Contains(r.err.Error(), ":3") {
		t.Fatalf("malformed line: error %v", r.err)
	}
	if strings.Join(multiset(r.lines), "|") != ` {"k":"a","v":1}| {"k":"b","v":2}` {
		t.Fatalf("the lines before the bad one were lost: %q", r.out)
	}

	noKey := `
version: 1
name: nokey
operators:
  - id: src
    source: { type: elements, values: [{k: a, v: 1}, {v: 2}] }
  - id: sums
    key-by: k
    sum: v
  - id: out
    sink: { type: print }
`
	r = runPipeline(t, "inline.yaml", noKey, nil, runtime.Options{})
	want := `operator "src" (subtask 1/1): key-by "k" of "sums": record 2: no key field "k": {"v":2}`
	if r.err == nil || r.err.Error() != want || strings.TrimSpace(r.out) != `{"k":"a","v":1}` {
		t.Fatalf("missing key: error %v, output %q", r.err, r.out)
	}

	unwritable := `
version: 1
name: unwritable
parallelism: 2
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 10 }
  - id: out
    sink: { type: file, path: %q }
`
	// the sink's folder would be a regular file: it cannot be created
	r = runPipeline(t, "inline.yaml", fmt.Sprintf(unwritable, filepath.Join(in, "out.jsonl")), nil, runtime.Options{})
	if r.err == nil || !strings.HasPrefix(r.err.Error(), `operator "out" (subtask `) || !strings.Contains(r.err.Error(), "in.jsonl is a file, not a folder") {
		t.Fatalf("unwritable sink: error %v", r.err)
	}
}

// TestE2EBatchKeepsEachKeysEarliestRecord: in BATCH mode a sum keeps the
// fields of each key's earliest record (Flink sorts a key's records by
// timestamp), even when two source subtasks deliver them interleaved in
// whatever order their goroutines ran: the finals equal the last running
// totals of a streaming run at parallelism 1, where records arrive in time
// order, on every run.
func TestE2EBatchKeepsEachKeysEarliestRecord(t *testing.T) {
	const src = `
version: 1
name: earliest
mode: %s
parallelism: %d
operators:
  - id: txns
    source: { type: generator, preset: transactions, count: 3000, seed: 2, accounts: 50 }
  - id: totals
    key-by: accountId
    sum: amount
  - id: out
    sink: { type: print }
`
	stream := runPipeline(t, "inline.yaml", fmt.Sprintf(src, "streaming", 1), nil, runtime.Options{})
	if stream.err != nil {
		t.Fatal(stream.err)
	}
	want := map[string]string{}
	for _, l := range stream.lines {
		want[l.Fields["accountId"].(string)] = l.JSON
	}
	if len(want) != 50 {
		t.Fatalf("streaming run saw %d accounts, want 50", len(want))
	}
	for run := 0; run < 3; run++ {
		batch := runPipeline(t, "inline.yaml", fmt.Sprintf(src, "batch", 2), nil, runtime.Options{BatchSize: 64})
		if batch.err != nil {
			t.Fatal(batch.err)
		}
		if len(batch.lines) != len(want) {
			t.Fatalf("run %d: batch printed %d finals, want %d", run, len(batch.lines), len(want))
		}
		for _, l := range batch.lines {
			if acct := l.Fields["accountId"].(string); l.JSON != want[acct] {
				t.Fatalf("run %d: batch final %s, want %s (the earliest record's fields)", run, l.JSON, want[acct])
			}
		}
	}
}
