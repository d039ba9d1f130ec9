package runtime

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/pipeline"
)

// aggPipeline runs one keyed aggregation over elements at parallelism 1,
// so the sink sees the outputs in input order.
const aggPipeline = `
version: 1
name: agg
mode: %s
plugins:
  reducesum: { path: reducesum.wasm }
operators:
  - id: src
    source: { type: elements, values: %s }
  - id: agg
    key-by: k
    %s
  - id: out
    sink: { type: discard }
`

func runAgg(t *testing.T, mode, values, agg string) []string {
	t.Helper()
	conn, _, _, err := runYAML(t, fmt.Sprintf(aggPipeline, mode, values, agg), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range conn.records("out") {
		out = append(out, r.JSON)
	}
	return out
}

// The values of Flink's documentation example for min vs minBy: min keeps
// the first record and updates the field, minBy returns the record holding
// the minimum (the earlier one on ties).
const ties = `[{k: a, v: 5, tag: first}, {k: a, v: 3, tag: second}, {k: b, v: 9, tag: other}, {k: a, v: 3, tag: third}, {k: a, v: 7, tag: fourth}]`

func TestRollingAggregationsFlinkSemantics(t *testing.T) {
	for _, c := range []struct {
		agg  string
		want []string
	}{
		{"sum: v", []string{`{"k":"a","v":5,"tag":"first"}`, `{"k":"a","v":8,"tag":"first"}`, `{"k":"b","v":9,"tag":"other"}`, `{"k":"a","v":11,"tag":"first"}`, `{"k":"a","v":18,"tag":"first"}`}},
		{"min: v", []string{`{"k":"a","v":5,"tag":"first"}`, `{"k":"a","v":3,"tag":"first"}`, `{"k":"b","v":9,"tag":"other"}`, `{"k":"a","v":3,"tag":"first"}`, `{"k":"a","v":3,"tag":"first"}`}},
		{"max: v", []string{`{"k":"a","v":5,"tag":"first"}`, `{"k":"a","v":5,"tag":"first"}`, `{"k":"b","v":9,"tag":"other"}`, `{"k":"a","v":5,"tag":"first"}`, `{"k":"a","v":7,"tag":"first"}`}},
		{"min-by: v", []string{`{"k":"a","v":5,"tag":"first"}`, `{"k":"a","v":3,"tag":"second"}`, `{"k":"b","v":9,"tag":"other"}`, `{"k":"a","v":3,"tag":"second"}`, `{"k":"a","v":3,"tag":"second"}`}},
		{"max-by: v", []string{`{"k":"a","v":5,"tag":"first"}`, `{"k":"a","v":5,"tag":"first"}`, `{"k":"b","v":9,"tag":"other"}`, `{"k":"a","v":5,"tag":"first"}`, `{"k":"a","v":7,"tag":"fourth"}`}},
		{"count: true", []string{`{"k":"a","count":1}`, `{"k":"a","count":2}`, `{"k":"b","count":1}`, `{"k":"a","count":3}`, `{"k":"a","count":4}`}},
	} {
		t.Run(c.agg, func(t *testing.T) {
			got := runAgg(t, "streaming", ties, c.agg)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// TestMinMaxOrderLikeJava: min, max, min-by and max-by order values as
// Flink's ComparableAggregator does, with Java's compareTo: NaN above every
// number, -0.0 below 0.0, strings by UTF-16 code unit (U+FFFF after
// U+10000, whose first unit is a surrogate).
func TestMinMaxOrderLikeJava(t *testing.T) {
	for _, c := range []struct {
		values, agg string
		want        []string
	}{
		{`[{k: a, v: 1.0}, {k: a, v: .nan}, {k: a, v: 2.0}]`, "max: v", []string{`1.0`, `"NaN"`, `"NaN"`}},
		{`[{k: a, v: .nan}, {k: a, v: 1.0}]`, "min: v", []string{`"NaN"`, `1.0`}},
		{`[{k: a, v: 3}, {k: a, v: .nan}]`, "min: v", []string{`3`, `3`}},
		{`[{k: a, v: 0.0}, {k: a, v: -0.0}]`, "min: v", []string{`0.0`, `-0.0`}},
		{`[{k: a, v: -0.0}, {k: a, v: 0.0}]`, "max: v", []string{`-0.0`, `0.0`}},
		{`[{k: a, v: 0.0}, {k: a, v: -0.0}]`, "max: v", []string{`0.0`, `0.0`}},
		{`[{k: a, v: "\uFFFF"}, {k: a, v: "\U00010000"}]`, "min: v", []string{"\"\uffff\"", "\"\U00010000\""}},
		{`[{k: a, v: "\U00010000"}, {k: a, v: "\uFFFF"}]`, "max-by: v", []string{"\"\U00010000\"", "\"\uffff\""}},
		{`[{k: a, v: "\uE000"}, {k: a, v: "\U0001F600"}]`, "min-by: v", []string{"\"\ue000\"", "\"\U0001F600\""}},
		{`[{k: a, v: "b"}, {k: a, v: "ab"}, {k: a, v: "abc"}]`, "min: v", []string{`"b"`, `"ab"`, `"ab"`}},
		// Boolean.compareTo: false < true
		{`[{k: a, v: true}, {k: a, v: false}, {k: a, v: true}]`, "min: v", []string{`true`, `false`, `false`}},
		{`[{k: a, v: false}, {k: a, v: true}, {k: a, v: false}]`, "max: v", []string{`false`, `true`, `true`}},
		{`[{k: a, v: true}, {k: a, v: false}]`, "min-by: v", []string{`true`, `false`}},
		{`[{k: a, v: false}, {k: a, v: true}]`, "max-by: v", []string{`false`, `true`}},
	} {
		got := runAgg(t, "streaming", c.values, c.agg)
		var vs []string
		for _, j := range got {
			vs = append(vs, strings.TrimSuffix(strings.TrimPrefix(j, `{"k":"a","v":`), "}"))
		}
		if strings.Join(vs, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s over %s: got %v, want %v", c.agg, c.values, vs, c.want)
		}
	}
}

func TestBatchModeEmitsOnlyFinals(t *testing.T) {
	for _, c := range []struct {
		agg  string
		want []string
	}{
		{"sum: v", []string{`{"k":"a","v":18,"tag":"first"}`, `{"k":"b","v":9,"tag":"other"}`}},
		{"min-by: v", []string{`{"k":"a","v":3,"tag":"second"}`, `{"k":"b","v":9,"tag":"other"}`}},
		{"max: v", []string{`{"k":"a","v":7,"tag":"first"}`, `{"k":"b","v":9,"tag":"other"}`}},
		{"count: true", []string{`{"k":"a","count":4}`, `{"k":"b","count":1}`}},
	} {
		t.Run(c.agg, func(t *testing.T) {
			got := runAgg(t, "batch", ties, c.agg)
			joined := strings.Join(got, "\n")
			// key "a" and "b" fall in key groups whose order decides the output order
			if len(got) != 2 || !strings.Contains(joined, c.want[0]) || !strings.Contains(joined, c.want[1]) {
				t.Fatalf("got\n%s\nwant (any order)\n%s", joined, strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestSumTypes(t *testing.T) {
	got := runAgg(t, "streaming", `[{k: a, v: 1}, {k: a, v: 2}, {k: a, v: 2.5}, {k: a, v: 1}]`, "sum: v")
	want := `{"k":"a","v":1} {"k":"a","v":3} {"k":"a","v":5.5} {"k":"a","v":6.5}`
	if strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s (int stays int, a float makes it float)", got, want)
	}
	got = runAgg(t, "streaming", `[{k: a, v: 0.5}, {k: a, v: 2}]`, "sum: v")
	if strings.Join(got, " ") != `{"k":"a","v":0.5} {"k":"a","v":2.5}` {
		t.Fatalf("float then int: %v", got)
	}
}

func TestMinMaxOfStrings(t *testing.T) {
	got := runAgg(t, "streaming", `[{k: a, v: pear, n: 1}, {k: a, v: apple, n: 2}, {k: a, v: zucchini, n: 3}]`, "min: v")
	want := `{"k":"a","v":"pear","n":1} {"k":"a","v":"apple","n":1} {"k":"a","v":"apple","n":1}`
	if strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	got = runAgg(t, "streaming", `[{k: a, v: pear, n: 1}, {k: a, v: apple, n: 2}, {k: a, v: zucchini, n: 3}]`, "max-by: v")
	if g := got[len(got)-1]; g != `{"k":"a","v":"zucchini","n":3}` {
		t.Fatalf("max-by of strings: %v", got)
	}
}

func TestAggregationErrorsNamePosition(t *testing.T) {
	for _, c := range []struct{ values, agg, want string }{
		{`[{k: a, v: 1}, {k: a, w: 2}]`, "sum: v", `operator "agg" (subtask 1/1): sum: input record 2: no field "v": {"k":"a","w":2}`},
		{`[{k: a, v: 1}, {k: a, v: x}]`, "sum: v", `input record 2: field "v" is str, want a number`},
		{`[{k: a, v: 1}, {k: a, v: x}]`, "min: v", `input record 2: field "v": cannot compare int with str`},
		{`[{k: a, v: true}, {k: a, v: 1}]`, "max-by: v", `input record 2: field "v": cannot compare bool with int`},
		{`[{k: a, v: {x: 1}}]`, "min: v", `input record 1: field "v": cannot compare map with map`},
	} {
		t.Run(c.agg, func(t *testing.T) {
			_, _, _, err := runYAML(t, fmt.Sprintf(aggPipeline, "streaming", c.values, c.agg), nil, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestAggregationFailureKeepsEarlierResults: a record the aggregation
// refuses fails the job after the results of the records before it in its
// batch have gone downstream (they were dropped with the batch), as
// Flink's StreamGroupedReduceOperator emits each result as it goes.
func TestAggregationFailureKeepsEarlierResults(t *testing.T) {
	conn, _, _, err := runYAML(t, fmt.Sprintf(aggPipeline, "streaming", `[{k: a, v: 3}, {k: b, v: 4}, {k: a, v: x}, {k: a, v: 5}]`, "sum: v"), nil, Options{})
	if err == nil || !strings.Contains(err.Error(), `input record 3: field "v" is str, want a number`) {
		t.Fatalf("error %v", err)
	}
	var got []string
	for _, r := range conn.records("out") {
		got = append(got, r.JSON)
	}
	if want := `{"k":"a","v":3} {"k":"b","v":4}`; strings.Join(got, " ") != want {
		t.Fatalf("sink got %v, want %s", got, want)
	}
}

func TestReducePluginStreamingAndBatch(t *testing.T) {
	values := `[{k: a, n: 1}, {k: b, n: 10}, {k: a, n: 2}, {k: a, n: 3}, {k: b, n: 20}]`
	got := runAgg(t, "streaming", values, "reduce: reducesum")
	want := `{"k":"a","n":1} {"k":"b","n":10} {"k":"a","n":3} {"k":"a","n":6} {"k":"b","n":30}`
	if strings.Join(got, " ") != want {
		t.Fatalf("streaming: got %v, want %s", got, want)
	}
	got = runAgg(t, "batch", values, "reduce: reducesum")
	joined := strings.Join(got, " ")
	if len(got) != 2 || !strings.Contains(joined, `{"k":"a","n":6}`) || !strings.Contains(joined, `{"k":"b","n":30}`) {
		t.Fatalf("batch: got %v, want only the finals a=6 b=30", got)
	}
}

// Batch mode at parallelism 4 over keys from a key selector: each key's
// final, once.
func TestBatchFinalsAtParallelism4(t *testing.T) {
	src := `
version: 1
name: finals
plugins:
  mod3: { path: mod3.wasm }
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 3000 }
    parallelism: 2
  - id: sums
    key-by: { plugin: mod3 }
    sum: n
    parallelism: 4
  - id: out
    sink: { type: discard }
    parallelism: 4
`
	conn, _, _, err := runYAML(t, src, func(p *pipeline.Pipeline) { p.Mode = pipeline.Batch }, Options{BatchSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	// sums of n over 0..2999 with n mod 3 = 0, 1, 2
	want := []string{`{"n":1498500}`, `{"n":1499500}`, `{"n":1500500}`}
	if got := conn.jsons("out"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("batch finals %v, want %v", got, want)
	}
}

func TestCountOfCompositeKey(t *testing.T) {
	src := `
version: 1
name: count
operators:
  - id: src
    source: { type: elements, values: [{k: a, g: 1, x: 0}, {k: a, g: 2, x: 0}, {k: a, g: 1, x: 0}] }
  - id: agg
    key-by: [k, g]
    count: true
  - id: out
    sink: { type: discard }
`
	conn, _, _, err := runYAML(t, src, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range conn.records("out") {
		got = append(got, r.JSON)
	}
	want := `{"k":"a","g":1,"count":1} {"k":"a","g":2,"count":1} {"k":"a","g":1,"count":2}`
	if strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

// TestKeyedStateKeysByValue: a key is one state cell however its record
// writes it. sum writes its field as an int64 (9 bytes), a source writes 5
// as a fixint (1 byte); both are the Integer 5, so the count keyed by v
// counts them together, in both modes and at both parallelisms.
func TestKeyedStateKeysByValue(t *testing.T) {
	const src = `
version: 1
name: keyenc
parallelism: %d
operators:
  - id: a
    source: { type: elements, values: [{k: x, v: 2}, {k: x, v: 3}] }
  - id: s
    key-by: k
    sum: v
  - id: b
    source: { type: elements, values: [{k: y, v: 5}] }
  - id: c
    input: [s, b]
    key-by: v
    count: true
  - id: out
    sink: { type: discard }
`
	for _, mode := range []pipeline.Mode{pipeline.Streaming, pipeline.Batch} {
		for _, par := range []int{1, 2} {
			conn, _, _, err := runYAML(t, fmt.Sprintf(src, par), func(p *pipeline.Pipeline) { p.Mode = mode }, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := conn.jsons("out")
			sort.Strings(got)
			want := `{"v":2,"count":1} {"v":5,"count":1} {"v":5,"count":2}`
			if mode == pipeline.Batch {
				want = `{"v":5,"count":2}` // sum's final of x, 5, and y's 5
			}
			if strings.Join(got, " ") != want {
				t.Fatalf("%s, parallelism %d: got %v, want %s", mode, par, got, want)
			}
		}
	}
}

// captureOut is a Collector keeping what is emitted on port 0.
type captureOut struct{ buf []byte }

func (c *captureOut) Emit(_ int, b []byte, _ int) error {
	c.buf = append(c.buf, b...)
	return nil
}

// TestSplitBatchMatchesParsed: an aggregation given a batch its HASH edge
// split (batch.spans) emits exactly what it emits parsing the same batch.
func TestSplitBatchMatchesParsed(t *testing.T) {
	b := &batch{}
	for i := 0; i < 300; i++ {
		key := abi.AppendStr(nil, fmt.Sprintf("k%d", i%7))
		if i%5 == 0 {
			key = abi.AppendInt(nil, int64(i%3))
		}
		value := enc("k", string(key), "v", int64(i*37%101-50), "w", float64(i)/4)
		times := []int64{0, 5, 200, -7, 70000, 1700000000000 + int64(i)}
		b.data = abi.AppendEnvelope(b.data, times[i%len(times)], i%4 != 0, key, value)
		b.count++
		b.addSpan(len(key), len(value))
	}
	if b.split() == nil {
		t.Fatal("the batch has no spans")
	}
	for _, kind := range []pipeline.Kind{pipeline.KindSum, pipeline.KindMin, pipeline.KindMaxBy, pipeline.KindCount} {
		var outs [2]captureOut
		for i := range outs {
			a := newAggregate(kind, "v", []string{"k"}, 64)
			if err := a.Open(&OpenContext{State: NewKeyedStore(128, 0, 127)}); err != nil {
				t.Fatal(err)
			}
			var err error
			if i == 0 {
				err = a.Process(0, b.data, b.count, &outs[i])
			} else {
				err = a.processSplit(0, b.data, b.split(), &outs[i])
			}
			if err == nil {
				err = a.Close(&outs[i])
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(outs[0].buf) == 0 || !bytes.Equal(outs[0].buf, outs[1].buf) {
			t.Fatalf("%s: split output differs from parsed (%d vs %d bytes)", kind, len(outs[1].buf), len(outs[0].buf))
		}
	}
	b.data = abi.AppendEnvelope(b.data, 0, false, nil, enc("k", "x"))
	b.count++ // a record appended without its span: the batch must be parsed
	if b.split() != nil {
		t.Fatal("a batch with a record and no span still offers spans")
	}
	b.home = make(chan *batch, 1)
	b.release()
	if len(b.spans) != 0 || b.count != 0 {
		t.Fatal("a released batch keeps spans")
	}
}

// TestAggregationFieldMoves: records of one key whose field sits at other
// offsets, or behind other bytes, still fold the right value (the cell's
// offset is only a guess checked against the record's leading bytes).
func TestAggregationFieldMoves(t *testing.T) {
	values := `[{k: a, v: 1}, {v: 2, k: a}, {k: a, x: 1, v: 4}, {k: a, v: 8, x: 1}, {k: a, vv: 100, v: 16}, {k: a, v: {n: 1}}]`
	got := runAgg(t, "streaming", values, "sum: v\n    on-error: skip")
	want := []string{`{"k":"a","v":1}`, `{"k":"a","v":3}`, `{"k":"a","v":7}`, `{"k":"a","v":15}`, `{"k":"a","v":31}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestBatchFeedsEachKeyInTimeOrder: BATCH mode feeds a key's records in
// event-time order, as Flink's sort does (key, then timestamp; a record
// without one as Long.MIN_VALUE; equal times in arrival order here), so the
// record an aggregation keeps is the key's earliest whatever order they
// arrived in, min-by's ties go to the earlier time, and the final carries
// Long.MAX_VALUE, as Flink's BatchGroupedReduceOperator stamps it.
func TestBatchFeedsEachKeyInTimeOrder(t *testing.T) {
	key := abi.AppendStr(nil, "a")
	var w abi.Writer
	for _, r := range []struct {
		t   int64
		tag string
		v   int64
	}{{30, "late", 1}, {10, "early", 1}, {20, "mid", 9}, {10, "early-tie", 3}} {
		w.Append(r.t, true, key, enc("k", "a", "v", r.v, "tag", r.tag))
	}
	untimed := abi.AppendEnvelope(nil, 0, false, key, enc("k", "a", "v", int64(2), "tag", "untimed"))
	for _, c := range []struct {
		kind     pipeline.Kind
		untimed  bool
		want     string
		wantTime int64
	}{
		{pipeline.KindSum, false, `{"k":"a","v":14,"tag":"early"}`, math.MaxInt64},
		{pipeline.KindMax, false, `{"k":"a","v":9,"tag":"early"}`, math.MaxInt64},
		{pipeline.KindMinBy, false, `{"k":"a","v":1,"tag":"early"}`, math.MaxInt64},
		{pipeline.KindMaxBy, false, `{"k":"a","v":9,"tag":"mid"}`, math.MaxInt64},
		{pipeline.KindCount, false, `{"k":"a","count":4}`, math.MaxInt64},
		{pipeline.KindSum, true, `{"k":"a","v":16,"tag":"untimed"}`, math.MaxInt64}, // no time sorts first
	} {
		s := newSortedInput(newAggregate(c.kind, "v", []string{"k"}, 64), c.kind, 64)
		if err := s.Open(&OpenContext{State: NewKeyedStore(128, 0, 127)}); err != nil {
			t.Fatal(err)
		}
		var out captureOut
		if err := s.Process(0, w.Buf, w.Count, &out); err != nil {
			t.Fatal(err)
		}
		if c.untimed { // a second batch, as from another upstream subtask
			if err := s.Process(0, untimed, 1, &out); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(&out); err != nil {
			t.Fatal(err)
		}
		r, end, err := abi.ParseRecord(out.buf, 0)
		if err != nil {
			t.Fatalf("%s: no final: %v", c.kind, err)
		}
		js, err := codec.MsgpackToJSON(nil, r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if string(js) != c.want || r.Time != c.wantTime || end != len(out.buf) {
			t.Errorf("%s (untimed %v): final %s at time %d (%d bytes after it), want %s at %d", c.kind, c.untimed, js, r.Time, len(out.buf)-end, c.want, c.wantTime)
		}
	}
}

// TestBatchAggregationNamesArrivalPositions: in BATCH mode an aggregation's
// failures name each record's position in its input, as in streaming mode,
// though the sorted input feeds the records key by key: the keyless third
// record, then the fourth and fifth, not the positions of the fed order.
func TestBatchAggregationNamesArrivalPositions(t *testing.T) {
	var w abi.Writer
	kx, ky := abi.AppendStr(nil, "x"), abi.AppendStr(nil, "y")
	w.Append(0, false, kx, enc("a", "x", "v", int64(1)))
	w.Append(0, false, ky, enc("a", "y", "v", int64(1)))
	w.Append(0, false, nil, enc("v", int64(2)))
	w.Append(0, false, kx, enc("a", "x", "v", "two"))
	w.Append(0, false, ky, enc("a", "y", "v", "three"))
	w.Append(0, false, kx, enc("a", "x", "v", int64(3)))
	var got []int64
	s := newSortedInput(newAggregate(pipeline.KindSum, "v", []string{"a"}, 64), pipeline.KindSum, 64)
	reject := func(f *RecordFailure) error { got = append(got, f.Position); return nil }
	if err := s.Open(&OpenContext{State: NewKeyedStore(128, 0, 127), Reject: reject}); err != nil {
		t.Fatal(err)
	}
	var out captureOut
	if err := s.Process(0, w.Buf, w.Count, &out); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(&out); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[3 4 5]" {
		t.Fatalf("positions %v, want [3 4 5]", got)
	}
}

// TestBatchMergesCoInputsByTime: a keyed co-operator in BATCH mode gets a
// key's records of both inputs merged by event time, input 0 first on equal
// times, as Flink's MultiInputSortingDataInput merges them.
func TestBatchMergesCoInputsByTime(t *testing.T) {
	key := abi.AppendStr(nil, "k")
	batch := func(times ...int64) ([]byte, int) {
		var w abi.Writer
		for _, tm := range times {
			w.Append(tm, true, key, enc("t", tm))
		}
		return w.Buf, w.Count
	}
	rec := &recordingOp{}
	s := newSortedInput(rec, pipeline.KindCoProcess, 64)
	if err := s.Open(&OpenContext{State: NewKeyedStore(128, 0, 127)}); err != nil {
		t.Fatal(err)
	}
	for _, in := range []struct {
		input int
		times []int64
	}{{0, []int64{30, 10}}, {1, []int64{20, 10, 40}}, {0, []int64{50}}} {
		b, n := batch(in.times...)
		if err := s.Process(in.input, b, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(&captureOut{}); err != nil {
		t.Fatal(err)
	}
	if want := "0:10 1:10 1:20 0:30 1:40 0:50"; strings.Join(rec.seen, " ") != want {
		t.Fatalf("fed %s, want %s", strings.Join(rec.seen, " "), want)
	}
}

// recordingOp notes input:time of every record it is given.
type recordingOp struct{ seen []string }

func (*recordingOp) Open(*OpenContext) error { return nil }
func (*recordingOp) Close(Collector) error   { return nil }
func (o *recordingOp) Process(input int, b []byte, count int, _ Collector) error {
	rd := abi.NewReader(b, count)
	for rd.Next() {
		o.seen = append(o.seen, fmt.Sprintf("%d:%d", input, rd.Record().Time))
	}
	return rd.Err()
}

// TestReadNumNamesAUint64PastLong: a uint64 past int64's range (a JSON
// source keeps one) is refused with its value, not "integer out of range
// at byte 0".
func TestReadNumNamesAUint64PastLong(t *testing.T) {
	_, err := readNum([]byte{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	if err == nil || !strings.HasPrefix(err.Error(), "is 18446744073709551615, above 9223372036854775807: integers add as Java longs") {
		t.Fatalf("%v", err)
	}
	if n, err := readNum([]byte{0xcf, 0, 0, 0, 0, 0, 0, 0, 9}); err != nil || n.i != 9 {
		t.Fatalf("a small uint64: %v %v", n, err)
	}
}

// TestMinMaxByFirstFlag is Flink's AggregationFunctionTest.minMaxByTest:
// nine tuples (0, i%3, i) grouped on f0, minBy / maxBy on f1, with first
// true (the default) and false. Flink's expected outputs, f2 of each.
func TestMinMaxByFirstFlag(t *testing.T) {
	var values []string
	for i := 0; i < 9; i++ {
		values = append(values, fmt.Sprintf("{f0: 0, f1: %d, f2: %d}", i%3, i))
	}
	input := "[" + strings.Join(values, ", ") + "]"
	for _, c := range []struct {
		agg  string
		want []int // f2 of each output
	}{
		{"max-by: f1", []int{0, 1, 2, 2, 2, 2, 2, 2, 2}},
		{"max-by: {field: f1, first: true}", []int{0, 1, 2, 2, 2, 2, 2, 2, 2}},
		{"max-by: {field: f1, first: false}", []int{0, 1, 2, 2, 2, 5, 5, 5, 8}},
		{"min-by: f1", []int{0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"min-by: {field: f1, first: false}", []int{0, 0, 0, 3, 3, 3, 6, 6, 6}},
	} {
		t.Run(c.agg, func(t *testing.T) {
			src := strings.Replace(fmt.Sprintf(aggPipeline, "streaming", input, c.agg), "key-by: k", "key-by: f0", 1)
			conn, _, _, err := runYAML(t, src, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, r := range conn.records("out") {
				got = append(got, int(intField(r.Value, "f2")))
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("f2 = %v, want Flink's %v", got, c.want)
			}
		})
	}
}
