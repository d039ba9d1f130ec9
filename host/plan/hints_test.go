package plan

import (
	"reflect"
	"testing"
)

// TestHints: the advice a senior Flink engineer gives, and only when it
// applies.
func TestHints(t *testing.T) {
	const head = `plugins: { f: { path: f.wasm }, m: { path: m.wasm } }
operators:
  - { id: src, source: { type: generator, preset: sequence, count: 1 }, parallelism: 2 }
`
	for _, tc := range []struct {
		name, ops string
		want      []Hint
	}{
		{"filter after HASH", "  - { id: keep, key-by: n, filter: f, parallelism: 2 }\n", []Hint{{"keep",
			"operator 'keep' is a stateless filter right after a HASH edge: place it before the key-by; records it drops then never cross the network"}}},
		{"map after HASH", "  - { id: m1, key-by: n, map: m, parallelism: 2 }\n", []Hint{{"m1",
			"operator 'm1' is a stateless map right after a HASH edge: place it before the key-by; it then chains with its upstream and the shuffle moves to the operator that needs the key"}}},
		{"filter before key-by", "  - { id: keep, filter: f, parallelism: 2 }\n  - { id: k, key-by: n, sum: n, parallelism: 2 }\n", nil},
		{"uneven key groups", "  - { id: k, key-by: n, sum: n, parallelism: 3 }\n", []Hint{{"k",
			"operator 'k': parallelism 3 does not divide max parallelism 128, so its subtasks own 42 or 43 key groups: uneven load even for uniform keys (parallelism 2 or 4 divides it)"}}},
		{"uneven key groups, small max", "  - { id: k, key-by: n, sum: n, parallelism: 3, max-parallelism: 10 }\n", []Hint{{"k",
			"operator 'k': parallelism 3 does not divide max parallelism 10, so its subtasks own 3 or 4 key groups: uneven load even for uniform keys (parallelism 2 or 5 divides it)"}}},
		{"even key groups", "  - { id: k, key-by: n, sum: n, parallelism: 4 }\n", nil},
		{"parallelism change", "  - { id: out, sink: { type: discard }, parallelism: 4 }\n", []Hint{{"out",
			"edge src -> out is REBALANCE only because parallelism changes (2 to 4): the two cannot chain and every record crosses between tasks; give both the same parallelism to keep the edge FORWARD, or write partition: rescale for a local, pointwise exchange"}}},
		{"explicit rebalance", "  - { id: out, partition: rebalance, sink: { type: discard }, parallelism: 4 }\n", nil},
		{"global into 3", "  - { id: out, partition: global, sink: { type: discard }, parallelism: 3 }\n", []Hint{{"out",
			"edge src -> out is GLOBAL: every record goes to subtask 0 of 'out' and its other 2 subtasks stay idle; give it parallelism 1"}}},
		{"global into 1", "  - { id: out, partition: global, sink: { type: discard }, parallelism: 1 }\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := mustPlan(t, head+tc.ops)
			if !reflect.DeepEqual(g.Hints, tc.want) {
				t.Errorf("hints\n%q\nwant\n%q", g.Hints, tc.want)
			}
		})
	}
}
