package plan

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
)

// TestDefaultEdges: no partitioning gives FORWARD between equal
// parallelisms and REBALANCE otherwise; key-by is HASH and a partition is
// used as written (flink-semantics.md §2).
func TestDefaultEdges(t *testing.T) {
	for _, tc := range []struct {
		upP, downP int
		extra      string
		want       string
	}{
		{1, 1, "", Forward},
		{4, 4, "", Forward},
		{2, 4, "", Rebalance},
		{4, 2, "", Rebalance},
		{4, 4, "key-by: n, ", Hash},
		{2, 8, "key-by: [a, b], ", Hash},
		{2, 2, "partition: forward, ", Forward},
		{2, 2, "partition: rebalance, ", Rebalance},
		{2, 4, "partition: rescale, ", Rescale},
		{2, 4, "partition: shuffle, ", Shuffle},
		{2, 4, "partition: global, ", Global},
		{2, 4, "partition: broadcast, ", Broadcast},
		{2, 4, "partition: { custom: c, key: k }, ", Custom},
	} {
		body := fmt.Sprintf(`plugins: { c: { path: c.wasm } }
operators:
  - { id: up, source: { type: generator, preset: sequence, count: 1 }, parallelism: %d }
  - { id: down, %ssink: { type: discard }, parallelism: %d }
`, tc.upP, tc.extra, tc.downP)
		e := edge(t, mustPlan(t, body), "up", "down")
		if e.ShipStrategy != tc.want {
			t.Errorf("%d -> %d %s: %s, want %s", tc.upP, tc.downP, tc.extra, e.ShipStrategy, tc.want)
		}
	}
}

// TestEdgeDetails: HASH and CUSTOM edges carry what the engine needs.
func TestEdgeDetails(t *testing.T) {
	g := mustPlan(t, `plugins: { ks: { path: ks.wasm }, c: { path: c.wasm }, co: { path: co.wasm }, p: { path: p.wasm } }
operators:
  - { id: a, source: { type: generator, preset: sequence, count: 1 } }
  - { id: proc, process: p }
  - { id: k1, input: a, key-by: [x, y], sum: v }
  - { id: k2, input: a, key-by: { plugin: ks }, count: true }
  - { id: cu, input: proc.alerts, partition: { custom: c, key: country }, sink: { type: discard } }
  - { id: co, connect: [a, proc], co-map: co }
`)
	if e := edge(t, g, "a", "k1"); !reflect.DeepEqual(e.KeyFields, []string{"x", "y"}) || e.KeyPlugin != "" {
		t.Errorf("a -> k1: %+v", e)
	}
	if e := edge(t, g, "a", "k2"); e.KeyPlugin != "ks" || e.ShipStrategy != Hash {
		t.Errorf("a -> k2: %+v", e)
	}
	if e := edge(t, g, "proc", "cu"); e.CustomPlugin != "c" || !slices.Equal(e.CustomKeys, []string{"country"}) || e.SideOutput != "alerts" {
		t.Errorf("proc -> cu: %+v", e)
	}
	if a, p := edge(t, g, "a", "co"), edge(t, g, "proc", "co"); a.InputIndex != 0 || p.InputIndex != 1 {
		t.Errorf("co-operator sides: %d and %d, want 0 and 1", a.InputIndex, p.InputIndex)
	}
	co := operator(t, g, "co")
	if len(co.Inputs) != 2 || co.Inputs[0].From != "a" || co.Inputs[1].From != "proc" {
		t.Errorf("co inputs: %+v", co.Inputs)
	}
	if !operator(t, g, "k1").Keyed || operator(t, g, "cu").Keyed {
		t.Error("only key-by makes an operator keyed")
	}
	if n := len(operator(t, g, "a").Outputs); n != 4 {
		t.Errorf("a has %d outputs, want 4", n)
	}
}

// TestForwardParallelismError: Flink's exact words, at the partition.
func TestForwardParallelismError(t *testing.T) {
	got := planErr(t, `operators:
  - { id: txns, source: { type: generator, preset: sequence, count: 1 }, parallelism: 2 }
  - { id: out, partition: forward, sink: { type: discard }, parallelism: 3 }
`, Options{})
	want := "t.yaml:5:27: Forward partitioning does not allow change of parallelism. Upstream operation: txns parallelism: 2, " +
		"downstream operation: out parallelism: 3 You must use another partitioning strategy, such as broadcast, rebalance, shuffle or global."
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestSlots: a group needs its highest parallelism, the job the sum over
// groups, and more than offered is refused with both numbers (§4).
func TestSlots(t *testing.T) {
	body := `parallelism: 2
operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 } }
  - { id: wide, key-by: n, sum: n, parallelism: 6 }
  - { id: iso, input: src, key-by: n, count: true, slot-sharing-group: iso, parallelism: 3 }
  - { id: inherit, input: iso, sink: { type: discard } }
`
	g := mustPlan(t, body)
	if g.RequiredSlots != 9 {
		t.Errorf("required slots %d, want 6 (default) + 3 (iso)", g.RequiredSlots)
	}
	var groups []string
	for _, gr := range g.Groups {
		groups = append(groups, fmt.Sprintf("%s:%d@%d", gr.Name, gr.Slots, gr.FirstSlot))
	}
	if want := "default:6@0 iso:3@6"; strings.Join(groups, " ") != want {
		t.Errorf("groups %v, want %s", groups, want)
	}
	if op := operator(t, g, "inherit"); op.SlotSharingGroup != "iso" {
		t.Errorf("inherit is in group %q, want iso (its input's group)", op.SlotSharingGroup)
	}
	layout := map[string][]int{}
	for _, task := range g.Tasks {
		layout[task.Name] = task.Slots
	}
	want := map[string][]int{"Source: src": {0, 1}, "wide": {0, 1, 2, 3, 4, 5}, "iso": {6, 7, 8}, "Sink: inherit": {6, 7}}
	if !reflect.DeepEqual(layout, want) {
		t.Errorf("layout %v, want %v", layout, want)
	}

	if _, err := Plan(job(t, body), Options{Slots: 9}); err != nil {
		t.Errorf("9 slots offered, 9 needed: %v", err)
	}
	got := planErr(t, body, Options{Slots: 8})
	if want := "t.yaml: the job needs 9 slots but the host offers 8; the highest parallelism of each slot sharing group counts: " +
		"group default needs 6, group iso needs 3"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got = planErr(t, "slots: 4\n"+body, Options{})
	if !strings.HasPrefix(got, "t.yaml:3:1: the job needs 9 slots but the pipeline offers 4 (slots: 4)") {
		t.Errorf("pipeline slots: %s", got)
	}
	g, err := Plan(job(t, "slots: 12\n"+body), Options{Slots: 10})
	if err != nil || g.OfferedSlots != 10 {
		t.Errorf("offered slots: %v %v, want the smaller offer, 10", g, err)
	}
}

// TestSlotSharingGroupInheritance: Flink's determineSlotSharingGroup.
func TestSlotSharingGroupInheritance(t *testing.T) {
	g := mustPlan(t, `operators:
  - { id: a, source: { type: generator, preset: sequence, count: 1 }, slot-sharing-group: x }
  - { id: b, source: { type: generator, preset: sequence, count: 1 }, slot-sharing-group: y }
  - { id: c, source: { type: generator, preset: sequence, count: 1 }, slot-sharing-group: x }
  - { id: from-a, input: a, sink: { type: discard } }
  - { id: a-and-c, input: [a, c], sink: { type: discard } }
  - { id: a-and-b, input: [a, b], sink: { type: discard } }
  - { id: named, input: a, sink: { type: discard }, slot-sharing-group: z }
`)
	for id, want := range map[string]string{"from-a": "x", "a-and-c": "x", "a-and-b": "default", "named": "z"} {
		if got := operator(t, g, id).SlotSharingGroup; got != want {
			t.Errorf("%s in group %q, want %q", id, got, want)
		}
	}
}

// TestKeyGroupRanges: subtask i owns [(i*maxP+p-1)/p, ((i+1)*maxP-1)/p]
// (flink-semantics.md §1), the max parallelism coming from the operator,
// else the job, else Flink's default.
func TestKeyGroupRanges(t *testing.T) {
	for _, tc := range []struct {
		job, op string
		p       int
		maxP    int
		ranges  string
	}{
		{"", "", 3, 128, "0-42 43-85 86-127"},
		{"", "", 4, 128, "0-31 32-63 64-95 96-127"},
		{"", "max-parallelism: 10, ", 4, 10, "0-2 3-4 5-7 8-9"},
		{"max-parallelism: 10\n", "", 4, 10, "0-2 3-4 5-7 8-9"},
		{"max-parallelism: 512\n", "max-parallelism: 8, ", 3, 8, "0-2 3-5 6-7"},
		{"max-parallelism: 512\n", "", 2, 512, "0-255 256-511"},
		{"", "", 100, 256, ""},
		{"", "", 1, 128, "0-127"},
		{"", "max-parallelism: 5, ", 5, 5, "0-0 1-1 2-2 3-3 4-4"},
	} {
		body := fmt.Sprintf("%soperators:\n  - { id: s, source: { type: generator, preset: sequence, count: 1 } }\n  - { id: k, key-by: n, sum: n, %sparallelism: %d }\n", tc.job, tc.op, tc.p)
		k := operator(t, mustPlan(t, body), "k")
		if k.MaxParallelism != tc.maxP {
			t.Errorf("%q %q p=%d: max parallelism %d, want %d", tc.job, tc.op, tc.p, k.MaxParallelism, tc.maxP)
		}
		var got []string
		for _, r := range k.KeyGroups {
			got = append(got, fmt.Sprintf("%d-%d", r.Start, r.End))
		}
		if len(got) != tc.p {
			t.Errorf("p=%d: %d ranges", tc.p, len(got))
		}
		if tc.ranges != "" && strings.Join(got, " ") != tc.ranges {
			t.Errorf("%q %q p=%d: ranges %v, want %s", tc.job, tc.op, tc.p, got, tc.ranges)
		}
	}
	g := mustPlan(t, "operators:\n  - { id: s, source: { type: generator, preset: sequence, count: 1 }, parallelism: 1000 }\n")
	if s := operator(t, g, "s"); s.MaxParallelism != 2048 || s.KeyGroups != nil {
		t.Errorf("unkeyed p=1000: max parallelism %d (want 2048), key groups %v (want none)", s.MaxParallelism, s.KeyGroups)
	}
}

// TestParallelismAboveMaxParallelism: a hand-built pipeline the parser
// would refuse is still checked by the planner.
func TestParallelismAboveMaxParallelism(t *testing.T) {
	p := &pipeline.Pipeline{Name: "h", Parallelism: 1, Chaining: true, Operators: []*pipeline.Operator{
		{ID: "s", Kind: pipeline.KindSource, Source: &pipeline.Connector{Type: "stdin"}, Parallelism: 200, MaxParallelism: 128, Pos: pipeline.Pos{Line: 3, Col: 5}},
	}}
	_, err := Plan(p, Options{})
	if err == nil || err.Error() != "3:5: operator 's': parallelism 200 is larger than max parallelism 128" {
		t.Errorf("got %v", err)
	}
}

// TestBrokenPipelines: dangling inputs and cycles are errors, not panics.
func TestBrokenPipelines(t *testing.T) {
	src := &pipeline.Operator{ID: "s", Kind: pipeline.KindSource, Source: &pipeline.Connector{Type: "stdin"}}
	for name, ops := range map[string][]*pipeline.Operator{
		"dangling": {src, {ID: "m", Kind: pipeline.KindSink, Inputs: []pipeline.Input{{Operator: "nope"}}}},
		"cycle": {src,
			{ID: "a", Kind: pipeline.KindMap, Inputs: []pipeline.Input{{Operator: "s"}, {Operator: "b"}}},
			{ID: "b", Kind: pipeline.KindMap, Inputs: []pipeline.Input{{Operator: "a"}}}},
		"no input": {src, {ID: "m", Kind: pipeline.KindSink}},
		"empty":    {},
	} {
		_, err := Plan(&pipeline.Pipeline{Name: name, Parallelism: 1, Operators: ops}, Options{})
		var list pipeline.Errors
		if !errors.As(err, &list) {
			t.Errorf("%s: got %v, want pipeline.Errors", name, err)
		}
	}
}

// TestMode: AUTOMATIC is BATCH when every source is bounded; BATCH with an
// unbounded source is refused (flink-semantics.md §6), but for stdin,
// which an explicit BATCH reads to the end of its input.
func TestMode(t *testing.T) {
	bounded := "  - { id: a, source: { type: generator, preset: sequence, count: 5 } }\n  - { id: b, source: { type: generator, preset: sequence, count: 1 } }\n  - { id: c, source: { type: file, path: in.json } }\n"
	stdin := "  - { id: v, source: { type: stdin } }\n"
	unbounded := "  - { id: u, source: { type: generator, preset: sequence } }\n" + stdin
	for _, tc := range []struct {
		mode, ops string
		want      pipeline.Mode
		reason    string
	}{
		{"", bounded, pipeline.Streaming, "the default"},
		{"mode: streaming\n", bounded, pipeline.Streaming, "set in the pipeline"},
		{"mode: batch\n", bounded, pipeline.Batch, "set in the pipeline"},
		{"mode: automatic\n", bounded, pipeline.Batch, "automatic: every source is bounded"},
		{"mode: automatic\n", bounded + unbounded, pipeline.Streaming, "automatic: source 'u' is unbounded"},
		// stdin: an explicit batch reads it to its end; automatic streams it
		{"mode: batch\n", bounded + stdin, pipeline.Batch, "set in the pipeline"},
		{"mode: automatic\n", bounded + stdin, pipeline.Streaming, "automatic: source 'v' is unbounded"},
	} {
		g := mustPlan(t, tc.mode+"operators:\n"+tc.ops)
		if g.Mode != tc.want || g.ModeReason != tc.reason {
			t.Errorf("%q: %s (%s), want %s (%s)", tc.mode, g.Mode, g.ModeReason, tc.want, tc.reason)
		}
	}
	// the caller's mode (host run --mode) wins over the pipeline's
	g := mustPlan(t, "mode: streaming\noperators:\n"+bounded)
	if g2, err := Plan(g.Pipeline, Options{Mode: pipeline.Batch, ModeFrom: "--mode"}); err != nil || g2.Mode != pipeline.Batch || g2.ModeReason != "set by --mode" {
		t.Errorf("Options.Mode batch: %v, %v", g2, err)
	}
	if g2, err := Plan(g.Pipeline, Options{Mode: pipeline.Streaming, ModeFrom: "--mode"}); err != nil || g2.Mode != pipeline.Streaming || g2.ModeReason != "set by --mode" {
		t.Errorf("Options.Mode streaming: %v, %v", g2, err)
	}
	g = mustPlan(t, "operators:\n"+bounded+unbounded)
	_, err := Plan(g.Pipeline, Options{Mode: pipeline.Batch, ModeFrom: "--mode"})
	if want := "t.yaml:7:22: mode is batch (set by --mode) but source 'u' is unbounded (a generator without count): batch needs bounded sources"; err == nil || err.Error() != want {
		t.Errorf("Options.Mode batch with an unbounded source: %v, want %s", err, want)
	}
	got := planErr(t, "mode: batch\noperators:\n"+bounded+unbounded, Options{})
	want := "t.yaml:8:22: mode is batch but source 'u' is unbounded (a generator without count): batch needs bounded sources"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestBlockingEdges: in batch mode every exchange but a chained one is
// blocking, FORWARD included.
func TestBlockingEdges(t *testing.T) {
	body := `operators:
  - { id: s, source: { type: generator, preset: sequence, count: 1 } }
  - { id: k, key-by: n, sum: n }
  - { id: o, sink: { type: discard } }
`
	for mode, want := range map[string]bool{"streaming": false, "batch": true} {
		g := mustPlan(t, "mode: "+mode+"\n"+body)
		if e := edge(t, g, "s", "k"); e.Blocking != want {
			t.Errorf("%s: HASH edge blocking = %v", mode, e.Blocking)
		}
		if e := edge(t, g, "k", "o"); e.Blocking || !e.Chained {
			t.Errorf("%s: FORWARD edge blocking %v chained %v, want pipelined and chained", mode, e.Blocking, e.Chained)
		}
	}
}

// TestPartitionTypesInBatchMode is Flink's
// StreamingJobGraphGeneratorTest.testPartitionTypesInBatchMode: BATCH,
// parallelism 4, chaining disabled; source -> map (parallelism 1, so a
// FORWARD edge) -> rescale -> map -> rebalance -> map -> keyBy -> map ->
// sink (FORWARD). Every exchange is BLOCKING, the two FORWARD ones
// included; in STREAMING mode none is.
func TestPartitionTypesInBatchMode(t *testing.T) {
	body := `parallelism: 4
chaining: false
plugins:
  m: { path: m.wasm }
operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 }, parallelism: 1 }
  - { id: m1, map: m, parallelism: 1 }
  - { id: m2, map: m, partition: rescale }
  - { id: m3, map: m, partition: rebalance }
  - { id: m4, map: m, key-by: n }
  - { id: out, sink: { type: discard } }
`
	edges := [][2]string{{"src", "m1"}, {"m1", "m2"}, {"m2", "m3"}, {"m3", "m4"}, {"m4", "out"}}
	strategies := []string{Forward, Rescale, Rebalance, Hash, Forward}
	for mode, want := range map[string]bool{"streaming": false, "batch": true} {
		g := mustPlan(t, "mode: "+mode+"\n"+body)
		for i, fromTo := range edges {
			e := edge(t, g, fromTo[0], fromTo[1])
			if e.ShipStrategy != strategies[i] || e.Chained {
				t.Fatalf("%s: %s -> %s is %s chained=%v, want %s unchained", mode, e.From, e.To, e.ShipStrategy, e.Chained, strategies[i])
			}
			if e.Blocking != want {
				t.Errorf("%s: %s -> %s (%s) blocking = %v, want %v", mode, e.From, e.To, e.ShipStrategy, e.Blocking, want)
			}
		}
	}
}

// TestTopologicalOrder: sources first, then file order among operators
// whose inputs are placed; a forward reference is fine.
func TestTopologicalOrder(t *testing.T) {
	g := mustPlan(t, `operators:
  - { id: late, input: b, sink: { type: discard } }
  - { id: a, source: { type: generator, preset: sequence, count: 1 } }
  - { id: m, input: a, sink: { type: discard } }
  - { id: b, source: { type: generator, preset: sequence, count: 1 } }
`)
	var ids []string
	for _, op := range g.Operators {
		ids = append(ids, op.ID)
	}
	if got := strings.Join(ids, " "); got != "a b late m" {
		t.Errorf("order %s, want a b late m", got)
	}
	for i, task := range g.Tasks {
		if task.Index != i {
			t.Errorf("task %d has index %d", i, task.Index)
		}
	}
}

// TestPlanLeavesPipelineAlone: planning does not change its input.
func TestPlanLeavesPipelineAlone(t *testing.T) {
	body := "parallelism: 3\noperators:\n  - { id: s, source: { type: generator, preset: sequence, count: 1 } }\n  - { id: k, key-by: n, sum: n, parallelism: 2 }\n"
	p, fresh := job(t, body), job(t, body)
	if _, err := Plan(p, Options{Slots: 5}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, fresh) {
		t.Error("Plan modified the pipeline")
	}
}

// TestNonParallelSourcesRunAsOne: as Flink's fromElements, the inline
// elements and standard input run as one subtask whatever the job's
// parallelism (an explicit parallelism above 1 is a lint error, see
// host/pipeline/testdata/bad/nonparallel.yaml); what reads them gets the
// job's parallelism, through a REBALANCE edge.
func TestNonParallelSourcesRunAsOne(t *testing.T) {
	g := mustPlan(t, `parallelism: 4
operators:
  - { id: inline, source: { type: elements, values: [1, 2, 3] } }
  - { id: typed, source: { type: stdin } }
  - { id: gen, source: { type: generator, preset: sequence, count: 3 } }
  - { id: out, input: [inline, typed, gen], sink: { type: discard } }
`)
	for id, want := range map[string]int{"inline": 1, "typed": 1, "gen": 4, "out": 4} {
		if p := operator(t, g, id).Parallelism; p != want {
			t.Errorf("%s: parallelism %d, want %d", id, p, want)
		}
	}
	if e := edge(t, g, "inline", "out"); e.ShipStrategy != Rebalance {
		t.Errorf("inline -> out: %s, want REBALANCE", e.ShipStrategy)
	}
}

// TestPartitionPerInput: a union whose inputs are partitioned each their
// own way, as Flink's a.broadcast().union(b.shuffle()) writes it; an input
// without one takes the default (FORWARD at equal parallelism). The hint
// that an edge is REBALANCE only by default does not fire for a written
// rebalance.
func TestPartitionPerInput(t *testing.T) {
	g := mustPlan(t, `parallelism: 2
operators:
  - { id: a, source: { type: generator, preset: sequence, count: 1 } }
  - { id: b, source: { type: generator, preset: sequence, count: 1 } }
  - { id: c, source: { type: generator, preset: sequence, count: 1 }, parallelism: 1 }
  - { id: u, input: [{from: a, partition: broadcast}, {from: b, partition: shuffle}, {from: c, partition: rebalance}], sink: { type: discard } }
  - { id: v, input: [a, {from: b, partition: rescale}], sink: { type: discard } }
`)
	for _, c := range []struct{ from, to, want string }{
		{"a", "u", Broadcast}, {"b", "u", Shuffle}, {"c", "u", Rebalance},
		{"a", "v", Forward}, {"b", "v", Rescale},
	} {
		if e := edge(t, g, c.from, c.to); e.ShipStrategy != c.want {
			t.Errorf("%s -> %s is %s, want %s", c.from, c.to, e.ShipStrategy, c.want)
		}
	}
	for _, h := range g.Hints {
		if strings.Contains(h.Text, "only because parallelism changes") {
			t.Errorf("hint for a written rebalance: %s", h.Text)
		}
	}
}
