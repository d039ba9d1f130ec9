package plan

import (
	"strings"
	"testing"
)

// chainCases hold one small pipeline per chaining condition of
// flink-semantics.md §3 (and the chains they build); the golden test
// prints each plan to testdata/chaining/NAME.golden.
var chainCases = []struct {
	name  string
	body  string
	edges map[string]string // "from -> to": "" when chained, else the exact reason
	tasks []string
}{
	{
		name: "all-conditions-hold",
		body: `parallelism: 2
operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 } }
  - { id: out, sink: { type: discard } }
`,
		edges: map[string]string{"src -> out": ""},
		tasks: []string{"Source: src -> Sink: out"},
	},
	{
		name: "1-two-inputs",
		body: `operators:
  - { id: a, source: { type: generator, preset: sequence, count: 1 } }
  - { id: b, source: { type: generator, preset: sequence, count: 2 } }
  - { id: u, input: [a, b], sink: { type: discard } }
`,
		edges: map[string]string{"a -> u": "downstream has 2 inputs", "b -> u": "downstream has 2 inputs"},
		tasks: []string{"Source: a", "Source: b", "Sink: u"},
	},
	{
		name: "1-union-with-itself",
		body: `operators:
  - { id: a, source: { type: generator, preset: sequence, count: 1 } }
  - { id: u, input: [a, a], sink: { type: discard } }
`,
		edges: map[string]string{"a -> u": "downstream has 2 inputs"},
		tasks: []string{"Source: a", "Sink: u"},
	},
	{
		name: "2-chaining-disabled",
		body: `chaining: false
operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 } }
  - { id: out, sink: { type: discard } }
`,
		edges: map[string]string{"src -> out": "chaining disabled for the job"},
		tasks: []string{"Source: src", "Sink: out"},
	},
	{
		name: "3-slot-sharing-groups",
		body: `operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 } }
  - { id: out, sink: { type: discard }, slot-sharing-group: sinks }
`,
		edges: map[string]string{"src -> out": "slot sharing groups differ (default vs sinks)"},
		tasks: []string{"Source: src", "Sink: out"},
	},
	{
		name: "4-upstream-never-chains",
		body: `operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 }, chaining: false }
  - { id: out, sink: { type: discard } }
`,
		edges: map[string]string{"src -> out": "operator 'src' has chaining: false"},
		tasks: []string{"Source: src", "Sink: out"},
	},
	{
		name: "5-downstream-never-chains",
		body: `operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 } }
  - { id: out, sink: { type: discard }, chaining: false }
`,
		edges: map[string]string{"src -> out": "operator 'out' has chaining: false"},
		tasks: []string{"Source: src", "Sink: out"},
	},
	{
		name: "5-start-new-chain",
		body: `operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 } }
  - { id: sum, key-by: n, sum: n }
  - { id: out, sink: { type: discard } }
  - { id: other, input: sum, sink: { type: discard }, start-new-chain: true }
`,
		edges: map[string]string{
			"src -> sum":   "ship strategy is HASH, not FORWARD",
			"sum -> out":   "",
			"sum -> other": "operator 'other' starts a new chain",
		},
		tasks: []string{"Source: src", "sum -> Sink: out", "Sink: other"},
	},
	{
		name: "6-parallelism-differs",
		body: `operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 }, parallelism: 2 }
  - { id: out, sink: { type: discard }, parallelism: 3, partition: rescale }
`,
		edges: map[string]string{"src -> out": "parallelism differs (2 vs 3); ship strategy is RESCALE, not FORWARD"},
		tasks: []string{"Source: src", "Sink: out"},
	},
	{
		name: "7-not-forward",
		body: `parallelism: 2
operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 } }
  - { id: out, sink: { type: discard }, partition: rebalance }
`,
		edges: map[string]string{"src -> out": "ship strategy is REBALANCE, not FORWARD"},
		tasks: []string{"Source: src", "Sink: out"},
	},
	{
		name: "7-batch-blocking",
		body: `mode: batch
parallelism: 2
operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 } }
  - { id: sum, key-by: n, sum: n }
  - { id: out, sink: { type: discard } }
`,
		edges: map[string]string{
			"src -> sum": "ship strategy is HASH, not FORWARD",
			"sum -> out": "",
		},
		tasks: []string{"Source: src", "sum -> Sink: out"},
	},
	{
		name: "every-condition-broken",
		body: `chaining: false
plugins:
  m: { path: m.wasm }
operators:
  - { id: a, source: { type: generator, preset: sequence, count: 1 }, chaining: false }
  - { id: b, source: { type: generator, preset: sequence, count: 1 } }
  - { id: u, input: [a, b], map: m, start-new-chain: true, parallelism: 2, slot-sharing-group: x, partition: shuffle }
`,
		edges: map[string]string{
			"a -> u": "downstream has 2 inputs; chaining disabled for the job; slot sharing groups differ (default vs x); " +
				"operator 'a' has chaining: false; operator 'u' starts a new chain; parallelism differs (1 vs 2); ship strategy is SHUFFLE, not FORWARD",
			"b -> u": "downstream has 2 inputs; chaining disabled for the job; slot sharing groups differ (default vs x); " +
				"operator 'u' starts a new chain; parallelism differs (1 vs 2); ship strategy is SHUFFLE, not FORWARD",
		},
		tasks: []string{"Source: a", "Source: b", "u"},
	},
	{
		name: "fork-and-side-output",
		body: `plugins:
  p: { path: p.wasm }
operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 } }
  - { id: proc, process: p }
  - { id: main, sink: { type: discard } }
  - { id: late, input: proc.late, sink: { type: discard } }
  - { id: copy, input: src, sink: { type: discard } }
`,
		edges: map[string]string{"src -> proc": "", "proc -> main": "", "proc -> late": "", "src -> copy": ""},
		tasks: []string{"Source: src -> (proc -> (Sink: main, Sink: late), Sink: copy)"},
	},
}

func TestChainingConditions(t *testing.T) {
	for _, tc := range chainCases {
		t.Run(tc.name, func(t *testing.T) {
			g := mustPlan(t, tc.body)
			for name, want := range tc.edges {
				from, to, _ := strings.Cut(name, " -> ")
				e := edge(t, g, from, to)
				if e.Chained != (want == "") || e.Reason != want {
					t.Errorf("%s: chained=%v reason %q, want reason %q", name, e.Chained, e.Reason, want)
				}
			}
			var names []string
			for _, task := range g.Tasks {
				names = append(names, task.Name)
			}
			if strings.Join(names, " | ") != strings.Join(tc.tasks, " | ") {
				t.Errorf("tasks %q, want %q", names, tc.tasks)
			}
			for _, op := range g.Operators {
				if g.Tasks[op.Task].Parallelism != op.Parallelism {
					t.Errorf("operator %s (p=%d) in task %q (p=%d)", op.ID, op.Parallelism, g.Tasks[op.Task].Name, g.Tasks[op.Task].Parallelism)
				}
			}
		})
	}
}
