package runtime

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/partition"
)

// chainings runs f with chaining on and off.
func chainings(t *testing.T, f func(t *testing.T, edit func(*pipeline.Pipeline))) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("chaining=%v", on), func(t *testing.T) {
			f(t, func(p *pipeline.Pipeline) { p.Chaining = on })
		})
	}
}

func TestUnionWithItselfDoubles(t *testing.T) {
	src := `
version: 1
name: union
parallelism: 2
plugins:
  double: { path: double.wasm }
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 500 }
  - id: both
    input: [src, src]
    map: double
  - id: out
    sink: { type: discard }
`
	chainings(t, func(t *testing.T, edit func(*pipeline.Pipeline)) {
		conn, _, res, err := runYAML(t, src, edit, Options{})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]int{}
		for _, r := range conn.records("out") {
			seen[intField(r.Value, "n")]++
		}
		for n := int64(0); n < 500; n++ {
			if seen[2*n] != 2 {
				t.Fatalf("n=%d doubled arrived %d times, want 2", n, seen[2*n])
			}
		}
		if got := res.Operator("both").RecordsIn; got != 1000 {
			t.Fatalf("union records in %d, want 1000", got)
		}
	})
}

func TestSideOutputsReachTheirConsumers(t *testing.T) {
	src := `
version: 1
name: side
parallelism: 2
plugins:
  route: { path: route.wasm }
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 300 }
  - id: proc
    process: route
  - id: main
    sink: { type: discard }
  - id: fizz
    input: proc.fizz
    sink: { type: discard }
    parallelism: 1
  - id: buzz
    input: proc.buzz
    sink: { type: discard }
`
	chainings(t, func(t *testing.T, edit func(*pipeline.Pipeline)) {
		conn, _, _, err := runYAML(t, src, edit, Options{})
		if err != nil {
			t.Fatal(err)
		}
		check := func(id string, want func(n int64) bool, count int) {
			got := conn.records(id)
			if len(got) != count {
				t.Fatalf("%s got %d records, want %d", id, len(got), count)
			}
			for _, r := range got {
				if !want(intField(r.Value, "n")) {
					t.Fatalf("%s got %s", id, r.JSON)
				}
			}
		}
		check("fizz", func(n int64) bool { return n%3 == 0 }, 100)
		check("buzz", func(n int64) bool { return n%3 != 0 && n%5 == 0 }, 40)
		check("main", func(n int64) bool { return n%3 != 0 && n%5 != 0 }, 160)
	})
}

func TestUnconsumedSideOutputIsDropped(t *testing.T) {
	src := `
version: 1
name: side
plugins:
  route: { path: route.wasm }
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 300 }
  - id: proc
    process: route
  - id: main
    sink: { type: discard }
  - id: fizz
    input: proc.fizz
    sink: { type: discard }
`
	conn, _, res, err := runYAML(t, src, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(conn.records("main")) != 160 || len(conn.records("fizz")) != 100 {
		t.Fatalf("main %d fizz %d", len(conn.records("main")), len(conn.records("fizz")))
	}
	if out := res.Operator("proc").RecordsOut; out != 260 {
		t.Fatalf("proc records out %d, want 260 (the 40 buzz records are dropped)", out)
	}
}

func TestConnectFeedsBothSides(t *testing.T) {
	src := `
version: 1
name: connect
plugins:
  side: { path: side.wasm }
operators:
  - id: nums
    source: { type: generator, preset: sequence, count: 250 }
    parallelism: 2
  - id: rules
    source: { type: elements, values: [{n: 1000}, {n: 1001}, {n: 1002}] }
  - id: both
    connect: [nums, rules]
    co-map: side
    parallelism: 3
  - id: out
    sink: { type: discard }
    parallelism: 3
`
	conn, _, _, err := runYAML(t, src, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := conn.records("out")
	if len(got) != 253 {
		t.Fatalf("got %d records, want 253", len(got))
	}
	for _, r := range got {
		n, input := intField(r.Value, "n"), intField(r.Value, "input")
		if (n >= 1000) != (input == 1) {
			t.Fatalf("%s arrived on the wrong input", r.JSON)
		}
	}
}

func TestKeyedPluginGetsHostState(t *testing.T) {
	src := `
version: 1
name: keyed
plugins:
  reducesum: { path: reducesum.wasm }
  mod3: { path: mod3.wasm }
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 999 }
    parallelism: 2
  - id: red
    key-by: { plugin: mod3 }
    reduce: reducesum
    parallelism: 3
  - id: out
    sink: { type: discard }
    parallelism: 3
`
	conn, _, _, err := runYAML(t, src, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := conn.records("out")
	if len(got) != 999 {
		t.Fatalf("got %d records", len(got))
	}
	last := map[string]int64{}
	for _, r := range got {
		k, _ := strconv.Atoi(r.Key)
		h, _ := abi.KeyHash(abi.AppendInt(nil, int64(k)))
		if want := partition.OperatorIndexForKeyGroup(128, 3, partition.KeyGroup(h, 128)); r.Subtask != want {
			t.Fatalf("key %s on subtask %d, want %d", r.Key, r.Subtask, want)
		}
		last[r.Key] = max(last[r.Key], intField(r.Value, "n"))
	}
	// sums of n over 0..998 by n mod 3: each key's running total ends there
	want := map[string]int64{"0": 165834, "1": 166167, "2": 166500}
	if fmt.Sprint(last) != fmt.Sprint(want) {
		t.Fatalf("final totals %v, want %v", last, want)
	}
}
