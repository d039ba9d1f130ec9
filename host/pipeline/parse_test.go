package pipeline

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/connector/spec"
)

func mustParse(t *testing.T, src string, opts ParseOptions) *Pipeline {
	t.Helper()
	p, err := Parse("p.yaml", []byte(src), opts)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return p
}

const full = `version: 1
name: full
mode: automatic
parallelism: 4
max-parallelism: 256
chaining: false
slots: 16
plugins:
  valid: { path: plugins/valid.wasm }
  enrich: { path: plugins/enrich.wasm, config: { bank: NBI, retries: 3, ratio: 0.5, on: true, none: null, tags: [a, b] } }
  hot: { path: hot.wasm }
  co: { path: co.wasm }
  keys: { path: keys.wasm }
  part: { path: part.wasm }
operators:
  - id: txns
    source: { type: generator, preset: transactions, count: 100000, seed: 7, skew: 0.25, hot-key: acct-1 }
    parallelism: 2
  - id: valid
    filter: valid
  - id: enriched
    map: enrich
    config: { bank: ING }
    on-error: dead-letter
  - id: totals
    key-by: accountId
    sum: amount
    parallelism: 8
    max-parallelism: 64
  - id: composite
    input: enriched
    key-by: [accountId, currency]
    min-by: amount
  - id: selected
    input: enriched
    key-by: { plugin: keys }
    process: hot
    chaining: false
  - id: alerts
    input: selected.alerts
    partition: { custom: part, key: country }
    sink: { type: print, prefix: alert }
  - id: both
    input: [totals, composite]
    partition: rescale
    start-new-chain: true
    slot-sharing-group: merged
    sink: { type: file, path: out.json, format: json }
  - id: other
    source: { type: elements, values: [{ n: 1 }, { n: 2 }] }
  - id: joined
    connect: [txns, other]
    co-map: co
  - id: counted
    key-by: n
    count: true
    input: other
  - id: rejected
    input: enriched.dead-letter
    sink: { type: discard }
`

// TestParseFull checks that every construct of the format lands in the
// typed structs, with defaults applied and default inputs resolved.
func TestParseFull(t *testing.T) {
	p := mustParse(t, full, ParseOptions{})
	if p.Version != 1 || p.Name != "full" || p.Mode != Automatic || p.Parallelism != 4 ||
		p.MaxParallelism != 256 || p.Chaining || p.Slots != 16 || p.File != "p.yaml" {
		t.Errorf("pipeline settings: %+v", p)
	}
	if got := p.KeyPos["slots"]; got != (Pos{7, 1}) {
		t.Errorf("KeyPos[slots] = %v, want 7:1", got)
	}
	wantCfg := map[string]any{"bank": "NBI", "retries": 3, "ratio": 0.5, "on": true, "none": nil, "tags": []any{"a", "b"}}
	if got := p.Plugins["enrich"].Config; !reflect.DeepEqual(got, wantCfg) {
		t.Errorf("plugin config = %#v, want %#v", got, wantCfg)
	}
	if got := p.Plugins["valid"]; got.Path != "plugins/valid.wasm" || got.Pos != (Pos{9, 3}) {
		t.Errorf("plugin valid = %+v", got)
	}
	ops := map[string]*Operator{}
	for _, op := range p.Operators {
		ops[op.ID] = op
	}
	if len(ops) != 12 {
		t.Fatalf("got %d operators", len(ops))
	}
	txns := ops["txns"]
	if txns.Kind != KindSource || txns.Source.Type != "generator" || txns.Parallelism != 2 || txns.Pos != (Pos{16, 5}) {
		t.Errorf("txns = %+v", txns)
	}
	wantOpts := map[string]any{"preset": "transactions", "count": 100000, "seed": 7, "skew": 0.25, "hot-key": "acct-1"}
	if !reflect.DeepEqual(txns.Source.Options, wantOpts) {
		t.Errorf("source options = %#v, want %#v", txns.Source.Options, wantOpts)
	}
	if !txns.Source.Bounded() {
		t.Error("a generator with count must be bounded")
	}
	checkInputs(t, ops["valid"], Input{Operator: "txns", Pos: Pos{19, 5}})
	checkInputs(t, ops["enriched"], Input{Operator: "valid", Pos: Pos{21, 5}})
	if e := ops["enriched"]; e.Plugin != "enrich" || e.OnError != "dead-letter" || e.Config["bank"] != "ING" {
		t.Errorf("enriched = %+v", e)
	}
	if got := p.OperatorConfig(ops["enriched"]); got["bank"] != "ING" || got["retries"] != 3 {
		t.Errorf("OperatorConfig: operator keys must win over the plugin's: %v", got)
	}
	if tot := ops["totals"]; tot.Kind != KindSum || tot.Field != "amount" || tot.Parallelism != 8 ||
		tot.MaxParallelism != 64 || !reflect.DeepEqual(tot.KeyBy.Fields, []string{"accountId"}) || tot.KeyBy.Pos != (Pos{26, 13}) {
		t.Errorf("totals = %+v key %+v", tot, tot.KeyBy)
	}
	if c := ops["composite"]; !reflect.DeepEqual(c.KeyBy.Fields, []string{"accountId", "currency"}) || c.Kind != KindMinBy {
		t.Errorf("composite = %+v", c)
	}
	if s := ops["selected"]; s.KeyBy.Plugin != "keys" || !s.DisableChaining || s.Kind != KindProcess {
		t.Errorf("selected = %+v", s)
	}
	checkInputs(t, ops["alerts"], Input{Operator: "selected", SideOutput: "alerts", Pos: Pos{40, 12}})
	if a := ops["alerts"]; a.Partition.Strategy != "custom" || a.Partition.Plugin != "part" || !slices.Equal(a.Partition.Keys, []string{"country"}) {
		t.Errorf("alerts partition = %+v", a.Partition)
	}
	b := ops["both"]
	checkInputs(t, b, Input{Operator: "totals", Pos: Pos{44, 13}}, Input{Operator: "composite", Pos: Pos{44, 21}})
	if b.Partition.Strategy != "rescale" || !b.StartNewChain || b.SlotSharingGroup != "merged" || b.Sink.Options["path"] != "out.json" {
		t.Errorf("both = %+v", b)
	}
	checkInputs(t, ops["other"])
	checkInputs(t, ops["joined"], Input{Operator: "txns", Pos: Pos{52, 15}}, Input{Operator: "other", Pos: Pos{52, 21}})
	if c := ops["counted"]; c.Kind != KindCount {
		t.Errorf("counted = %+v", c)
	}
}

func checkInputs(t *testing.T, op *Operator, want ...Input) {
	t.Helper()
	if !reflect.DeepEqual(op.Inputs, want) && !(len(op.Inputs) == 0 && len(want) == 0) {
		t.Errorf("%s inputs = %+v, want %+v", op.ID, op.Inputs, want)
	}
}

// TestParseDefaults: mode streaming, parallelism 1, chaining on, no slots.
func TestParseDefaults(t *testing.T) {
	p := mustParse(t, "version: 1\nname: d\noperators:\n  - id: s\n    source: { type: stdin }\n", ParseOptions{})
	if p.Mode != Streaming || p.Parallelism != 1 || !p.Chaining || p.Slots != 0 || p.MaxParallelism != 0 {
		t.Errorf("defaults: %+v", p)
	}
	if p.Operators[0].Source.Bounded() {
		t.Error("stdin must be unbounded")
	}
}

// TestMergeKeys: << merges a mapping; keys written in place win.
func TestMergeKeys(t *testing.T) {
	src := `version: 1
name: merge
operators:
  - &base
    id: src
    source: { type: generator, preset: words, count: 1 }
    parallelism: 2
  - <<: *base
    id: copy
    parallelism: 3
`
	p := mustParse(t, src, ParseOptions{})
	c := p.Operators[1]
	if c.ID != "copy" || c.Parallelism != 3 || c.Kind != KindSource {
		t.Errorf("merged operator = %+v", c)
	}
}

// TestBoundedness: which sources end by themselves.
func TestBoundedness(t *testing.T) {
	for _, tc := range []struct {
		c    Connector
		want bool
	}{
		{Connector{Type: "generator", Options: map[string]any{"preset": "words", "count": 3}}, true},
		{Connector{Type: "generator", Options: map[string]any{"preset": "words"}}, false},
		{Connector{Type: "elements"}, true},
		{Connector{Type: "file"}, true},
		{Connector{Type: "stdin"}, false},
	} {
		if got := tc.c.Bounded(); got != tc.want {
			t.Errorf("%s %v: Bounded() = %v, want %v", tc.c.Type, tc.c.Options, got, tc.want)
		}
	}
}

// TestErrorFormat: file:line:col: message, sorted by position.
func TestErrorFormat(t *testing.T) {
	es := Errors{
		{File: "a.yaml", Pos: Pos{3, 1}, Msg: "third"},
		{File: "a.yaml", Pos: Pos{1, 9}, Msg: "second"},
		{File: "a.yaml", Pos: Pos{1, 2}, Msg: "first"},
		{File: "a.yaml", Msg: "no place"},
	}
	want := "a.yaml: no place\na.yaml:1:2: first\na.yaml:1:9: second\na.yaml:3:1: third"
	if got := es.Err().Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if (Errors{}).Err() != nil {
		t.Error("no problem must be a nil error")
	}
	if got := (&Error{Pos: Pos{2, 3}, Msg: "m"}).Error(); got != "2:3: m" {
		t.Errorf("without file: %q", got)
	}
}

// TestLimits: size, alias bombs and nesting are refused before decoding.
func TestLimits(t *testing.T) {
	big := "version: 1\nname: big\n# " + strings.Repeat("x", 100) + "\n"
	_, err := Parse("big.yaml", []byte(big), ParseOptions{MaxBytes: 64})
	if err == nil || !strings.Contains(err.Error(), "big.yaml: file is larger than 64 bytes") {
		t.Errorf("size limit: %v", err)
	}
	var nested strings.Builder
	nested.WriteString("version: 1\nname: n\nplugins:\n  p:\n    path: p.wasm\n    config: ")
	for i := 0; i < MaxDepth; i++ {
		nested.WriteString("{a: ")
	}
	nested.WriteString("1" + strings.Repeat("}", MaxDepth) + "\noperators:\n  - id: s\n    source: { type: stdin }\n")
	if _, err := Parse("deep.yaml", []byte(nested.String()), ParseOptions{}); err == nil || !strings.Contains(err.Error(), "nesting is deeper than 64 levels") {
		t.Errorf("depth limit: %v", err)
	}
}

// TestKindHelpers pins which kinds need a key, use a plugin, take two inputs.
func TestKindHelpers(t *testing.T) {
	var keyed, plugin, co []string
	for _, k := range Kinds {
		if k.NeedsKey() {
			keyed = append(keyed, string(k))
		}
		if k.UsesPlugin() {
			plugin = append(plugin, string(k))
		}
		if k.IsCoOperator() {
			co = append(co, string(k))
		}
	}
	for _, c := range []struct{ got, want []string }{
		{keyed, []string{"reduce", "sum", "min", "max", "min-by", "max-by", "count"}},
		{plugin, []string{"map", "filter", "flat-map", "process", "reduce", "co-map", "co-process"}},
		{co, []string{"co-map", "co-process"}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
	}
}

// TestLongCycle: a long cycle is named by its ends, not every operator.
func TestLongCycle(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nname: c\nplugins: {m: {path: m.wasm}}\noperators:\n  - {id: s, source: {type: stdin}}\n")
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "  - {id: o%d, map: m, input: [s, o%d]}\n", i, (i+1)%20)
	}
	_, err := Parse("c.yaml", []byte(b.String()), ParseOptions{})
	want := "c.yaml:25:34: operators form a cycle: o19 -> o18 -> o17 -> o16 -> o15 -> ... (20 operators) ... -> o3 -> o2 -> o1 -> o0 -> o19"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestElementsKeepKeyOrder(t *testing.T) {
	src := `version: 1
name: el
operators:
  - id: src
    source:
      type: elements
      values:
        - {zeta: 1, alpha: {y: 2, b: 3}}
  - id: out
    sink: {type: discard}
`
	p, err := Parse("el.yaml", []byte(src), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vals := p.Operators[0].Source.Options["values"].([]any)
	m := vals[0].(Map)
	if strings.Join(m.Keys, ",") != "zeta,alpha" {
		t.Fatalf("keys = %v, want zeta,alpha", m.Keys)
	}
	if inner := m.Values["alpha"].(Map); strings.Join(inner.Keys, ",") != "y,b" {
		t.Fatalf("nested keys = %v, want y,b", inner.Keys)
	}
}

// TestJobParallelismAboveJobMaxIsADefault: as in Flink, a job parallelism
// above the job's max-parallelism is no problem when every operator sets
// its own (only effective parallelisms are checked; the failing cases are
// in testdata/bad/job-ranges.yaml).
func TestJobParallelismAboveJobMaxIsADefault(t *testing.T) {
	p := mustParse(t, `version: 1
name: j
parallelism: 200
max-parallelism: 128
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 10 }
    parallelism: 2
  - id: out
    sink: { type: print }
    parallelism: 128
`, ParseOptions{})
	if p.Parallelism != 200 || p.ParallelismOf(p.Operators[1]) != 128 {
		t.Errorf("parallelism %d, out %d", p.Parallelism, p.ParallelismOf(p.Operators[1]))
	}
}

// TestConfigPos: each top-level config key's value is located, in the
// plugin's config and the operator's; a key of its own wins over a merged
// one, and a merged key points at the merge.
func TestConfigPos(t *testing.T) {
	p := mustParse(t, `version: 1
name: cfg
plugins:
  base: { path: b.wasm, config: &d { limit: 3, bank: X } }
  e: { path: e.wasm, config: { bank: NBI, <<: *d } }
operators:
  - id: src
    source: { type: generator, preset: words, count: 1 }
  - id: m
    map: e
    config:
      threshold: 25
      tags: [a, b]
  - id: out
    sink: { type: discard }
`, ParseOptions{})
	got := p.Plugins["e"].ConfigPos
	want := map[string]Pos{"bank": {5, 38}, "limit": {5, 47}}
	if len(got) != len(want) || got["bank"] != want["bank"] || got["limit"] != want["limit"] {
		t.Errorf("plugin ConfigPos %v, want %v", got, want)
	}
	op := p.Operator("m")
	if got := op.ConfigPos; len(got) != 2 || got["threshold"] != (Pos{12, 18}) || got["tags"] != (Pos{13, 13}) {
		t.Errorf("operator ConfigPos %v", got)
	}
}

// TestGeneratorRateZeroMeansUnpaced: rate: 0 is "as fast as downstream
// takes them", as README says and as an absent rate is (it was refused);
// a negative rate is still refused.
func TestGeneratorRateZeroMeansUnpaced(t *testing.T) {
	src := "version: 1\nname: r\noperators:\n  - id: g\n    source: { type: generator, preset: sequence, count: 3, rate: %s }\n"
	p := mustParse(t, fmt.Sprintf(src, "0"), ParseOptions{})
	if r := p.Operators[0].Source.Options["rate"]; r != int64(0) && r != 0 && r != 0.0 {
		t.Fatalf("rate %#v", r)
	}
	if _, err := Parse("p.yaml", []byte(fmt.Sprintf(src, "-1")), ParseOptions{}); err == nil || !strings.Contains(err.Error(), "rate must be between 0 and") {
		t.Fatalf("rate -1: %v", err)
	}
}

// TestPrintPrefixMayBeEmpty: prefix: "" is Flink's print(""), no
// identifier (it was refused as an empty string); other options still
// refuse "".
func TestPrintPrefixMayBeEmpty(t *testing.T) {
	src := "version: 1\nname: p\noperators:\n  - { id: s, source: { type: elements, values: [{a: 1}] } }\n  - { id: o, sink: { type: %s } }\n"
	p := mustParse(t, fmt.Sprintf(src, `print, prefix: ""`), ParseOptions{})
	if v, ok := p.Operators[1].Sink.Options["prefix"]; !ok || v != "" {
		t.Fatalf("prefix %#v %v", v, ok)
	}
	if _, err := Parse("p.yaml", []byte(fmt.Sprintf(src, `file, path: ""`)), ParseOptions{}); err == nil || !strings.Contains(err.Error(), "path must not be empty") {
		t.Fatalf("an empty path: %v", err)
	}
}

// TestCustomPartitionCompositeKey: a custom partition's key may be a list
// of fields (a tuple, as key-by's), not empty, none twice.
func TestCustomPartitionCompositeKey(t *testing.T) {
	src := "version: 1\nname: p\nplugins:\n  c: { path: c.wasm }\noperators:\n  - { id: s, source: { type: stdin } }\n  - { id: o, partition: { custom: c, key: %s }, sink: { type: discard } }\n"
	p := mustParse(t, fmt.Sprintf(src, "[a, b]"), ParseOptions{})
	if got := p.Operators[1].Partition.Keys; !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("keys %v", got)
	}
	for v, want := range map[string]string{"[]": "partition key must name at least one field", "[a, a]": `partition key names field "a" twice`} {
		if _, err := Parse("p.yaml", []byte(fmt.Sprintf(src, v)), ParseOptions{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("key %s: %v, want %q", v, err, want)
		}
	}
}

// TestLeadingZeroIntegers: the YAML parser reads 0755 as octal (493), as
// YAML 1.1 did, where YAML 1.2 and a person may mean 755 or "0755": such a
// number is refused wherever a pipeline holds one, saying what to write.
func TestLeadingZeroIntegers(t *testing.T) {
	src := "version: 1\nname: p\nparallelism: %s\nplugins:\n  x: { path: x.wasm, config: { mode: %s } }\noperators:\n" +
		"  - { id: s, source: { type: elements, values: [{a: %s}] } }\n  - { id: m, map: x }\n  - { id: o, sink: { type: discard } }\n"
	for _, c := range []struct{ par, cfg, val, want string }{
		{"2", "1", "0755", `p.yaml:7:53: source elements values: 0755 has a leading zero: write 755, 0o755 for octal (YAML reads it as 493) or quote it ("0755") for a string`},
		{"2", "-010", "1", `p.yaml:5:38: plugin x config: -010 has a leading zero: write -10, -0o10 for octal (YAML reads it as -8) or quote it ("-010") for a string`},
		{"02", "1", "1", `p.yaml:3:14: parallelism: 02 has a leading zero: write 2 or 0o2 for octal (YAML reads it as 2)`},
		{"2", "1", "08", `p.yaml:7:53: source elements values: 08 has a leading zero: write 8 or quote it ("08") for a string`},
		{"2", "1", "00", `p.yaml:7:53: source elements values: 00 has a leading zero: write 0, 0o0 for octal (YAML reads it as 0) or quote it ("00") for a string`},
	} {
		_, err := Parse("p.yaml", []byte(fmt.Sprintf(src, c.par, c.cfg, c.val)), ParseOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parallelism %s, config %s, value %s: got %v\nwant %s", c.par, c.cfg, c.val, err, c.want)
		}
	}
	// an option that takes only a number is not told to quote
	for opt, want := range map[string]string{
		"count: 007": "p.yaml:4:66: source generator count: 007 has a leading zero: write 7 or 0o7 for octal (YAML reads it as 7)",
		"rate: 010":  "p.yaml:4:65: source generator rate: 010 has a leading zero: write 10 or 0o10 for octal (YAML reads it as 8)",
	} {
		_, err := Parse("p.yaml", []byte("version: 1\nname: p\noperators:\n  - { id: s, source: { type: generator, preset: sequence, "+opt+" } }\n"), ParseOptions{})
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v\nwant %s", opt, err, want)
		}
	}
	// an integer past 64 bits would be a float with lost digits
	_, err := Parse("p.yaml", []byte(fmt.Sprintf(src, "2", "99999999999999999999", "1")), ParseOptions{})
	if want := "p.yaml:5:38: plugin x config: integer 99999999999999999999 does not fit in 64 bits: quote it to keep its digits as a string, or write it with an exponent (1e+20) for a float"; err == nil || err.Error() != want {
		t.Errorf("a wide integer: got %v\nwant %s", err, want)
	}
	// what stays: a quoted string, 0o octal, hex, a plain 0, a float 0.5
	p := mustParse(t, fmt.Sprintf(src, "2", "0o17", `"0755", b: 0x1f, c: 0, d: 0.5, e: -0`), ParseOptions{})
	if got := p.Plugins["x"].Config["mode"]; got != 15 {
		t.Errorf("config 0o17 = %v, want 15", got)
	}
	vals := p.Operators[0].Source.Options["values"].([]any)[0].(Map)
	if want := (Map{Keys: []string{"a", "b", "c", "d", "e"}, Values: map[string]any{"a": "0755", "b": 31, "c": 0, "d": 0.5, "e": 0}}); !reflect.DeepEqual(vals, want) {
		t.Errorf("values %#v, want %#v", vals, want)
	}
}

// TestParseAgainstAGivenSet: the connectors a pipeline may use are the
// set's it is parsed against, and each parsed connector carries its spec.
func TestParseAgainstAGivenSet(t *testing.T) {
	only := spec.NewSet(spec.Elements, spec.Discard)
	src := "version: 1\nname: s\noperators:\n  - { id: a, source: { type: generator, preset: words } }\n  - { id: b, sink: { type: discard } }\n"
	_, err := Parse("s.yaml", []byte(src), ParseOptions{Connectors: only})
	if err == nil || !strings.Contains(err.Error(), `s.yaml:4:30: source type must be one of elements, not "generator"`) {
		t.Errorf("generator outside the set: %v", err)
	}
	p, err := Parse("s.yaml", []byte(src), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Operator("a").Source.Spec != spec.Generator || p.Operator("b").Sink.Spec != spec.Discard {
		t.Error("a parsed connector carries the spec it was parsed against")
	}
}
