package spec

import (
	"go/build"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSetLooksUpByRoleAndName(t *testing.T) {
	if got := Builtin.Names(Source); !reflect.DeepEqual(got, []string{"elements", "file", "generator", "stdin"}) {
		t.Errorf("sources %v", got)
	}
	if got := Builtin.Names(Sink); !reflect.DeepEqual(got, []string{"discard", "file", "print"}) {
		t.Errorf("sinks %v", got)
	}
	if Builtin.Lookup(Source, "file") != FileSource || Builtin.Lookup(Sink, "file") != FileSink {
		t.Error("file is both a source and a sink, each with its own spec")
	}
	if Builtin.Lookup(Sink, "generator") != nil || Builtin.Lookup(Source, "nope") != nil {
		t.Error("a name is looked up in its role only")
	}
	var nilSet *Set
	if nilSet.Lookup(Source, "file") != nil || nilSet.Names(Sink) != nil {
		t.Error("a nil set knows nothing")
	}
}

func TestWithExtendsACopy(t *testing.T) {
	extra := &Connector{Name: "collect", Role: Sink}
	s := Builtin.With(extra)
	if s.Lookup(Sink, "collect") != extra || s.Lookup(Source, "generator") != Generator {
		t.Error("With keeps the set's connectors and adds the new one")
	}
	if Builtin.Lookup(Sink, "collect") != nil {
		t.Error("With changed the set it extends")
	}
	if got := len(s.All()); got != len(Builtin.All())+1 {
		t.Errorf("All: %d connectors", got)
	}
}

func TestSetRefusesTwoOfOneName(t *testing.T) {
	for name, cs := range map[string][]*Connector{
		"twice":   {Print, {Name: "print", Role: Sink}},
		"no role": {{Name: "x"}},
		"no name": {{Role: Source}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: NewSet did not refuse it", name)
				}
			}()
			NewSet(cs...)
		}()
	}
}

func TestBoundedness(t *testing.T) {
	for _, tc := range []struct {
		c    *Connector
		opts map[string]any
		want Boundedness
	}{
		{Generator, map[string]any{"preset": "words", "count": 3}, Bounded},
		{Generator, map[string]any{"preset": "words"}, Unbounded},
		{Generator, map[string]any{"preset": "words", "count": nil}, Unbounded},
		{Elements, nil, Bounded},
		{FileSource, nil, Bounded},
		{Stdin, nil, EndsWithInput},
		{Print, nil, Unbounded},
		{nil, nil, Unbounded},
	} {
		if got := tc.c.BoundednessOf(tc.opts); got != tc.want {
			t.Errorf("%v %v: %v, want %v", tc.c, tc.opts, got, tc.want)
		}
	}
	if Generator.Why() != "a generator without count" || Print.Why() != "print never ends" {
		t.Errorf("why: %q, %q", Generator.Why(), Print.Why())
	}
}

// TestReplayAndGuarantees: generator, elements and file can read their
// records again (exactly-once once restored); stdin cannot.
func TestReplayAndGuarantees(t *testing.T) {
	for _, c := range Builtin.All() {
		switch c.Guarantee {
		case ExactlyOnce, AtLeastOnce, None:
		default:
			t.Errorf("%s %s: guarantee %q", c.Role, c.Name, c.Guarantee)
		}
		if c.Role == Source && c.Replayable != (c.Guarantee == ExactlyOnce) {
			t.Errorf("source %s: replayable %v but guarantee %s", c.Name, c.Replayable, c.Guarantee)
		}
	}
	if Stdin.Replayable || !Generator.Replayable || !FileSource.Replayable || !Elements.Replayable {
		t.Error("replayability")
	}
}

func TestProblemsAcrossOptions(t *testing.T) {
	given := func(opts map[string]any) map[string]bool {
		g := map[string]bool{}
		for k := range opts {
			g[k] = true
		}
		return g
	}
	for _, tc := range []struct {
		c    *Connector
		opts map[string]any
		want string // "" for none
	}{
		{Generator, map[string]any{"preset": "transactions", "accounts": 5, "skew": 0.5}, ""},
		{Generator, map[string]any{"preset": "sensors", "accounts": 5},
			"accounts is an option of the transactions preset, not of sensors (which takes count, rate, seed, devices, hot-key and skew)"},
		{Generator, map[string]any{"preset": "words", "skew": 0.1},
			"skew is an option of the transactions and sensors presets, not of words (which takes count, rate and seed)"},
		{Generator, map[string]any{"skew": 0.1}, ""}, // no preset: its own problem
		{FileSource, map[string]any{"path": "in.csv", "null-literal": "NULL"}, ""},
		{FileSource, map[string]any{"path": "in.jsonl", "null-literal": "NULL"},
			"null-literal is an option of format csv, and this source is format json (its path does not end in .csv)"},
		{FileSink, map[string]any{"path": "o.csv", "format": "json", "null-literal": ""},
			"null-literal is an option of format csv, and this sink is format json"},
		{Stdin, map[string]any{"null-literal": "NULL"}, "null-literal is an option of format csv, and this source is format json"},
		{Stdin, map[string]any{"format": "csv", "null-literal": "NULL"}, ""},
	} {
		ps := tc.c.Problems(tc.opts, given(tc.opts))
		var got string
		if len(ps) > 0 {
			got = ps[0].Msg
		}
		if got != tc.want || len(ps) > 1 {
			t.Errorf("%s %v:\n got %v\nwant %q", tc.c.Name, tc.opts, ps, tc.want)
		}
	}
}

// TestSpecsAreComplete: every option has a type and a doc, an enum its
// choices, a bounded number its range; every connector a summary and a
// guarantee; the generator a variant per preset.
func TestSpecsAreComplete(t *testing.T) {
	for _, c := range Builtin.All() {
		for _, p := range Incomplete(c) {
			t.Error(p)
		}
	}
	preset, _ := Generator.Option("preset")
	var names []string
	for _, v := range Generator.Variants {
		names = append(names, v.Name)
	}
	if !reflect.DeepEqual(names, preset.Choices) {
		t.Errorf("variants %v, presets %v", names, preset.Choices)
	}
}

// TestImportsNothingOfSluice: every layer reads the specs, so they import
// no other package of sluice's.
func TestImportsNothingOfSluice(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasPrefix(imp, "github.com/sluicehq/") {
			t.Errorf("imports %s", imp)
		}
	}
}

func TestSubtaskFile(t *testing.T) {
	for in, want := range map[string]string{"out.jsonl": "out-2.jsonl", "d/o.csv": "d/o-2.csv", "out": "out-2", ".hidden": ".hidden-2", "a.b/c": "a.b/c-2"} {
		if got := SubtaskFile(in, 2); got != want {
			t.Errorf("SubtaskFile(%q) = %q, want %q", in, got, want)
		}
	}
	if FileFormat("X.CSV") != "csv" || FileFormat("x.json") != "json" {
		t.Error("FileFormat")
	}
}

// TestIncompleteFindsMistakes: a spec with each mistake is caught.
func TestIncompleteFindsMistakes(t *testing.T) {
	c := &Connector{Name: "x", Role: Source, Summary: "s", Doc: "d", Guarantee: None, Options: []Option{
		{Name: "a", Type: Int, Min: 1, Max: 9, Default: int64(10), Doc: "a"},
		{Name: "b", Type: Duration, MinDuration: time.Second, Default: time.Millisecond, Doc: "b"},
		{Name: "c", Type: Map, Doc: "c", Fields: []Option{{Name: "d", Type: Enum, Doc: "d"}}},
		{Name: "e", Type: Duration, Default: int64(1), Doc: "e"},
	}}
	got := strings.Join(Incomplete(c), "\n")
	for _, want := range []string{"option a: default 10", "option b: default 1000000 does not fit", "option c.d: an enum without choices", "option e: default 1 does not fit a duration"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s\nwant %s", got, want)
		}
	}
}

func TestDefaultOfAVariant(t *testing.T) {
	for _, tc := range []struct {
		preset, option string
		want           any
	}{
		{"transactions", "hot-key", "acct-corp"},
		{"sensors", "hot-key", "sensor-hot"},
		{"words", "hot-key", nil},
		{"transactions", "accounts", int64(1000)},
		{"sensors", "seed", int64(0)},
	} {
		if got := Generator.DefaultOf(tc.option, map[string]any{"preset": tc.preset}); got != tc.want {
			t.Errorf("%s %s: %#v, want %#v", tc.preset, tc.option, got, tc.want)
		}
	}
}

// TestReference: the page lists every connector of both sets, links each
// from the table to its section, marks host serve's own, and writes a
// mapping's fields as map.field rows.
func TestReference(t *testing.T) {
	own := &Connector{Name: "tap", Role: Sink, Summary: "a test sink", Doc: "Test.", Guarantee: AtLeastOnce, Options: []Option{
		{Name: "verbose", Type: Bool, Default: false, Doc: "say more"},
		{Name: "tls", Type: Map, Doc: "encryption", Fields: []Option{{Name: "ca-file", Type: String, Required: true, Doc: "roots"}}},
	}}
	page := Reference(Builtin, Builtin.With(own))
	for _, want := range []string{
		"| [`tap`](#sink-tap) | sink | a test sink | — | no | at-least-once | only there |",
		"| [`stdin`](#source-stdin) | source |",
		"### Sink `tap`",
		"| `verbose` | boolean | false | say more |",
		"| `tls.ca-file` | string | required | roots |",
		"#### Generator presets",
		"## Formats",
		DocsCommand,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, c := range Builtin.All() {
		if !strings.Contains(page, "### "+strings.ToUpper(c.Role.String()[:1])+c.Role.String()[1:]+" `"+c.Name+"`") {
			t.Errorf("no section for %s %s", c.Role, c.Name)
		}
	}
}

// TestOnlyContainedConnectorsAreForTenants: host serve offers tenants the
// connectors that touch nothing outside the job; a spec that says nothing
// is not one of them.
func TestOnlyContainedConnectorsAreForTenants(t *testing.T) {
	var contained []string
	for _, c := range Builtin.All() {
		if c.Contained {
			contained = append(contained, c.Role.String()+" "+c.Name)
		}
	}
	if want := []string{"source elements", "source generator", "sink discard"}; !reflect.DeepEqual(contained, want) {
		t.Errorf("contained: %v, want %v", contained, want)
	}
	if (&Connector{Name: "new", Role: Source}).Contained {
		t.Error("a new connector is contained only when its spec says so")
	}
}
