package runtime

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/partition"
)

// These tests check every ship strategy record by record against Flink's
// rules (flink-semantics.md §1, §2), with each record's subtask read from
// the sink that received it.

const seq = `
version: 1
name: routing
operators:
  - id: src
    source: { type: generator, preset: sequence, count: %d }
    parallelism: %d
  - id: out
    sink: { type: discard }
    parallelism: %d
    %s
`

func TestHashRoutesByKeyGroup(t *testing.T) {
	for _, p := range []int{1, 3, 4} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			conn, _, _, err := runYAML(t, fmt.Sprintf(seq, 2000, 2, p, "key-by: n"), nil, Options{BatchSize: 64})
			if err != nil {
				t.Fatal(err)
			}
			got := conn.records("out")
			if len(got) != 2000 {
				t.Fatalf("got %d records, want 2000", len(got))
			}
			maxP := partition.DefaultMaxParallelism(p)
			for _, r := range got {
				n := intField(r.Value, "n")
				h, _ := abi.KeyHash(abi.AppendInt(nil, n))
				want := partition.OperatorIndexForKeyGroup(maxP, p, partition.KeyGroup(h, maxP))
				if r.Subtask != want {
					t.Fatalf("n=%d on subtask %d, key-group rule says %d", n, r.Subtask, want)
				}
			}
		})
	}
}

func TestHashCompositeKeyHashesAsTuple(t *testing.T) {
	src := `
version: 1
name: composite
operators:
  - id: src
    source: { type: elements, values: [{a: x, b: 1}, {a: y, b: 2}, {a: x, b: 3}, {a: hello, b: 4}, {a: z, b: 5}, {a: y, b: 6}] }
  - id: out
    key-by: [a, b]
    sink: { type: discard }
    parallelism: 4
`
	conn, _, _, err := runYAML(t, src, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := conn.records("out")
	if len(got) != 6 {
		t.Fatalf("got %d records", len(got))
	}
	for _, r := range got {
		a, _, _ := abi.MapField(r.Value, "a")
		b, _, _ := abi.MapField(r.Value, "b")
		key := append(abi.AppendArrayHeader(nil, 2), append(append([]byte{}, a...), b...)...)
		h, err := abi.KeyHash(key)
		if err != nil {
			t.Fatal(err)
		}
		sa, _ := abi.ReadStr(a)
		nb, _ := abi.ReadInt(b)
		if want := 31*abi.StringHash(sa) + int32(nb); h != want {
			t.Fatalf("tuple hash %d, want 31*hash(a)+hash(b) = %d", h, want)
		}
		if want := partition.OperatorIndexForKeyGroup(128, 4, partition.KeyGroup(h, 128)); r.Subtask != want {
			t.Fatalf("%s on subtask %d, want %d", r.JSON, r.Subtask, want)
		}
	}
}

func TestRescaleFollowsPointwisePairing(t *testing.T) {
	for _, c := range []struct{ s, t int }{{2, 4}, {4, 2}, {2, 3}, {3, 2}} {
		t.Run(fmt.Sprintf("%d-%d", c.s, c.t), func(t *testing.T) {
			conn, _, _, err := runYAML(t, fmt.Sprintf(seq, 1200, c.s, c.t, "partition: rescale"), nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// per upstream subtask i (records n with n mod s == i, in order):
			// round robin over its targets starting at the first
			perUp := map[int]int{}
			counts := map[int]int{}
			for _, r := range sortByN(conn.records("out")) {
				n := int(intField(r.Value, "n"))
				up := n % c.s
				first, end := partition.PointwiseTargets(up, c.s, c.t)
				want := first + perUp[up]%(end-first)
				perUp[up]++
				if r.Subtask != want {
					t.Fatalf("n=%d from subtask %d went to %d, want %d", n, up, r.Subtask, want)
				}
				counts[r.Subtask]++
			}
			if len(perUp) != c.s || len(counts) != c.t {
				t.Fatalf("upstreams %v downstreams %v", perUp, counts)
			}
		})
	}
}

func TestRebalanceSpreadsEvenly(t *testing.T) {
	conn, _, _, err := runYAML(t, fmt.Sprintf(seq, 1000, 2, 3, "partition: rebalance"), nil, Options{Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	// each upstream subtask sends round robin from a random start: its 500
	// records differ by at most one across the 3 channels
	per := map[[2]int]int{}
	for _, r := range conn.records("out") {
		per[[2]int{int(intField(r.Value, "n")) % 2, r.Subtask}]++
	}
	for up := 0; up < 2; up++ {
		lo, hi := 1<<30, 0
		for d := 0; d < 3; d++ {
			lo, hi = min(lo, per[[2]int{up, d}]), max(hi, per[[2]int{up, d}])
		}
		if hi-lo > 1 || lo < 166 {
			t.Fatalf("upstream %d spread %v", up, per)
		}
	}
}

func TestGlobalLandsOnSubtaskZero(t *testing.T) {
	conn, _, _, err := runYAML(t, fmt.Sprintf(seq, 500, 2, 4, "partition: global"), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := conn.records("out")
	if len(got) != 500 {
		t.Fatalf("got %d records", len(got))
	}
	for _, r := range got {
		if r.Subtask != 0 {
			t.Fatalf("%s on subtask %d", r.JSON, r.Subtask)
		}
	}
}

func TestBroadcastReachesEverySubtask(t *testing.T) {
	conn, _, _, err := runYAML(t, fmt.Sprintf(seq, 300, 2, 3, "partition: broadcast"), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[2]int64]int{}
	for _, r := range conn.records("out") {
		seen[[2]int64{intField(r.Value, "n"), int64(r.Subtask)}]++
	}
	for n := int64(0); n < 300; n++ {
		for d := int64(0); d < 3; d++ {
			if seen[[2]int64{n, d}] != 1 {
				t.Fatalf("n=%d reached subtask %d %d times", n, d, seen[[2]int64{n, d}])
			}
		}
	}
}

func TestShuffleDeliversEverythingOnce(t *testing.T) {
	conn, _, _, err := runYAML(t, fmt.Sprintf(seq, 1000, 2, 3, "partition: shuffle"), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	assertSequence(t, conn.records("out"), 1000)
}

func TestForwardNotChainedKeepsSubtask(t *testing.T) {
	conn, _, res, err := runYAML(t, fmt.Sprintf(seq, 1000, 3, 3, "chaining: false"), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range conn.records("out") {
		if n := int(intField(r.Value, "n")); n%3 != r.Subtask {
			t.Fatalf("n=%d from subtask %d reached subtask %d", n, n%3, r.Subtask)
		}
	}
	if m := res.Operator("out"); m.RecordsIn != 1000 || res.Operator("src").RecordsOut != 1000 {
		t.Fatalf("metrics: src out %d, out in %d", res.Operator("src").RecordsOut, m.RecordsIn)
	}
}

func TestCustomPartitioner(t *testing.T) {
	src := fmt.Sprintf(seq, 100, 2, 4, "partition: { custom: mod, key: n }")
	src += "plugins:\n  mod: { path: mod.wasm }\n"
	conn, _, _, err := runYAML(t, src, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range conn.records("out") {
		if n := int(intField(r.Value, "n")); n%4 != r.Subtask {
			t.Fatalf("n=%d on subtask %d, partitioner said %d", n, r.Subtask, n%4)
		}
	}
	assertSequence(t, conn.records("out"), 100)
}

// TestCustomPartitionerCompositeKey: partition: {custom, key: [a, b]}
// hands the partitioner the tuple [a, b], as a key-by of two fields
// builds one (Flink's partitionCustom with a key selector returning a
// tuple); a single field is still the bare value.
func TestCustomPartitionerCompositeKey(t *testing.T) {
	src := `
version: 1
name: tuple
plugins:
  first: { path: first.wasm }
operators:
  - id: src
    source: { type: elements, values: [{a: 0, b: x}, {a: 1, b: x}, {a: 2, b: y}, {a: 3, b: x}, {a: 5, b: z}, {a: 6, b: x}] }
  - id: out
    partition: { custom: first, key: [a, b] }
    sink: { type: discard }
    parallelism: 4
`
	conn, _, _, err := runYAML(t, src, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs := conn.records("out")
	for _, r := range recs {
		if a := int(intField(r.Value, "a")); a%4 != r.Subtask {
			t.Fatalf("a=%d on subtask %d, want %d", a, r.Subtask, a%4)
		}
	}
	if len(recs) != 6 {
		t.Fatalf("%d records", len(recs))
	}
}

// TestCustomPartitionerKeyErrorKeepsEarlierRecords: a record without the
// partitioning field fails the edge after the records before it in its
// batch went downstream, as on a key-by edge; they were all lost.
func TestCustomPartitionerKeyErrorKeepsEarlierRecords(t *testing.T) {
	src := `
version: 1
name: tuple
plugins:
  mod: { path: mod.wasm }
operators:
  - id: src
    source: { type: elements, values: [{n: 0}, {n: 1}, {m: 2}, {n: 3}] }
  - id: out
    partition: { custom: mod, key: n }
    sink: { type: discard }
    parallelism: 4
`
	conn, _, _, err := runYAML(t, src, nil, Options{})
	if err == nil || !strings.Contains(err.Error(), `custom partition key "n" of "out": record 3: no key field "n": {"m":2}`) {
		t.Fatalf("err %v", err)
	}
	recs := conn.records("out")
	if len(recs) != 2 || intField(recs[0].Value, "n")+intField(recs[1].Value, "n") != 1 {
		t.Fatalf("%d records reached the sink, want the two before the bad one: %v", len(recs), recs)
	}
}

func TestKeySelectorPlugin(t *testing.T) {
	src := `
version: 1
name: selector
plugins:
  mod3: { path: mod3.wasm }
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 300 }
  - id: counts
    key-by: { plugin: mod3 }
    count: true
    parallelism: 2
  - id: out
    sink: { type: discard }
    parallelism: 2
`
	conn, _, _, err := runYAML(t, src, func(p *pipeline.Pipeline) { p.Mode = pipeline.Batch }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"key":0,"count":100}`, `{"key":1,"count":100}`, `{"key":2,"count":100}`}
	if got := conn.jsons("out"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func sortByN(rs []outRec) []outRec {
	out := make([]outRec, len(rs))
	for _, r := range rs {
		out[intField(r.Value, "n")] = r
	}
	return out
}

// assertSequence checks that records are {n: 0..count-1}, each once.
func assertSequence(t *testing.T, rs []outRec, count int) {
	t.Helper()
	seen := make([]int, count)
	for _, r := range rs {
		n := intField(r.Value, "n")
		if n < 0 || n >= int64(count) {
			t.Fatalf("unexpected %s", r.JSON)
		}
		seen[n]++
	}
	for n, c := range seen {
		if c != 1 {
			t.Fatalf("n=%d arrived %d times", n, c)
		}
	}
}

// TestHashableKeys: a key the one-subtask HASH edge lets through without
// hashing is one abi.KeyHash accepts.
func TestHashableKeys(t *testing.T) {
	keys := [][]byte{
		abi.AppendStr(nil, ""), abi.AppendStr(nil, "acct-000042"), abi.AppendStr(nil, strings.Repeat("x", 300)),
		abi.AppendInt(nil, 0), abi.AppendInt(nil, -1), abi.AppendInt(nil, 200), abi.AppendInt(nil, -200),
		abi.AppendInt(nil, 1<<40), abi.AppendInt(nil, -1<<40), {0xcf, 0, 0, 0, 0, 0, 0, 0, 1},
		{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, abi.AppendFloat(nil, 2.5), {0xca, 0, 0, 0, 0},
		abi.AppendBool(nil, true), abi.AppendNil(nil), abi.AppendMapHeader(nil, 0), abi.AppendBin(nil, []byte{1}),
		{0xd4, 1, 2}, abi.AppendArrayHeader(nil, 0), append(abi.AppendArrayHeader(nil, 1), 1),
	}
	for _, k := range keys {
		if _, err := abi.KeyHash(k); hashable(k) && err != nil {
			t.Errorf("key %x: hashable, but KeyHash says %v", k, err)
		}
	}
	if hashable(keys[10]) { // uint64 max: KeyHash refuses it
		t.Error("a uint64 key passes without its hash")
	}
}

// TestRandomEdgesDrawTheirOwnStreams: two SHUFFLE edges leaving the same
// subtask route the same records differently (each of Flink's partitioner
// instances has its own random source), and the same job routes the same
// way on every run (the streams come from the job's seed).
func TestRandomEdgesDrawTheirOwnStreams(t *testing.T) {
	const src = `
version: 1
name: two-shuffles
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 200 }
  - id: a
    input: src
    partition: shuffle
    sink: { type: discard }
    parallelism: 4
  - id: b
    input: src
    partition: shuffle
    sink: { type: discard }
    parallelism: 4
`
	route := func() (a, b map[string]int) {
		conn, _, _, err := runYAML(t, src, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, b = map[string]int{}, map[string]int{}
		for _, r := range conn.records("a") {
			a[r.JSON] = r.Subtask
		}
		for _, r := range conn.records("b") {
			b[r.JSON] = r.Subtask
		}
		if len(a) != 200 || len(b) != 200 {
			t.Fatalf("%d and %d records, want 200 each", len(a), len(b))
		}
		return a, b
	}
	a, b := route()
	same := 0
	for k, s := range a {
		if b[k] == s {
			same++
		}
	}
	if same > 100 { // about 50 of 200 by chance; 200 when the streams are one
		t.Errorf("%d of 200 records went to the same subtask on both edges: one random stream for two edges", same)
	}
	a2, b2 := route()
	for k := range a {
		if a[k] != a2[k] || b[k] != b2[k] {
			t.Fatalf("record %s routed differently on a second run", k)
		}
	}
}

// TestUnionPartitionPerInput: a.broadcast().union(b.shuffle()) — each of
// a's records reaches every subtask of the union, each of b's exactly one.
func TestUnionPartitionPerInput(t *testing.T) {
	conn, _, _, err := runYAML(t, `
version: 1
name: union
operators:
  - { id: a, source: { type: elements, values: [{n: 1}, {n: 2}] } }
  - { id: b, source: { type: elements, values: [{n: 3}, {n: 4}, {n: 5}] } }
  - { id: u, parallelism: 3, input: [{from: a, partition: broadcast}, {from: b, partition: shuffle}], sink: { type: discard } }
`, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]map[int]int{}
	for _, r := range conn.records("u") {
		n := intField(r.Value, "n")
		if seen[n] == nil {
			seen[n] = map[int]int{}
		}
		seen[n][r.Subtask]++
	}
	for n := int64(1); n <= 5; n++ {
		want := 1
		if n <= 2 {
			want = 3 // broadcast: once on each of the 3 subtasks
		}
		total := 0
		for sub, c := range seen[n] {
			if c != 1 {
				t.Errorf("n=%d reached subtask %d %d times", n, sub, c)
			}
			total += c
		}
		if total != want {
			t.Errorf("n=%d reached %d subtasks, want %d", n, total, want)
		}
	}
}
