package connector

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// This file is what adding a connector that only this package knows
// takes (as a Kafka connector would be): its spec and its constructor in
// one file, registered in init. TestOneFileConnector shows that the parser,
// lint, the planner and Builtin all know it through Set, and nothing else
// changed. (A test file, so the countdown exists in this package's tests
// only.)

var countdownSpec = &spec.Connector{
	Name:    "countdown",
	Role:    spec.Source,
	Summary: "the numbers from `from` down to 1",
	Doc:     "A test connector.",
	Options: []spec.Option{
		{Name: "from", Type: spec.Int, Min: 1, Max: 100, Default: int64(3), Doc: "the first number"},
		{Name: "even", Type: spec.Bool, Default: false, Doc: "only the even numbers"},
		{Name: "label", Type: spec.Map, Doc: "a field added to each record", Fields: []spec.Option{
			{Name: "name", Type: spec.String, Required: true, Doc: "its name"},
			{Name: "value", Type: spec.Int, Min: 0, Max: 9, Default: int64(0), Doc: "its value"},
		}},
	},
	Boundedness: func(map[string]any) spec.Boundedness { return spec.Bounded },
	Replayable:  false, // it keeps no position (TestGuaranteesMatchTheConnectors)
	Guarantee:   spec.AtLeastOnce,
	NonParallel: true,
}

func init() {
	registerSource(countdownSpec, func(_ *Builtin, o *options, _ *pipeline.Operator, _, _ int) (runtime.Source, error) {
		c := &countdown{from: o.specInt("from"), even: o.specBool("even")}
		if l := o.specMap("label"); l != nil {
			c.label, _ = l["name"].(string)
			c.value, _ = l["value"].(int)
		}
		if err := o.finish(); err != nil {
			return nil, err
		}
		return c, nil
	})
}

type countdown struct {
	from  int64
	even  bool
	label string
	value int
}

func (c *countdown) Open(*runtime.OpenContext) error { return nil }
func (c *countdown) Total() int64                    { return c.from }
func (c *countdown) Close() error                    { return nil }

func (c *countdown) Run(_ context.Context, out runtime.Collector) error {
	var w abi.Writer
	for n := c.from; n > 0; n-- {
		if c.even && n%2 != 0 {
			continue
		}
		if c.label == "" {
			w.Append(0, false, nil, abi.AppendInt(abi.AppendStr(abi.AppendMapHeader(nil, 1), "n"), n))
			continue
		}
		v := abi.AppendInt(abi.AppendStr(abi.AppendMapHeader(nil, 2), "n"), n)
		w.Append(0, false, nil, abi.AppendInt(abi.AppendStr(v, c.label), int64(c.value)))
	}
	return out.Emit(0, w.Buf, w.Count)
}

func TestOneFileConnector(t *testing.T) {
	if spec.Builtin.Lookup(spec.Source, "countdown") != nil || Set().Lookup(spec.Source, "countdown") != countdownSpec {
		t.Fatal("the countdown is in Set, and only there")
	}
	src := "version: 1\nname: c\nmode: automatic\nparallelism: 4\noperators:\n  - id: c\n    source: { type: countdown, from: 2 }\n  - id: out\n    sink: { type: discard }\n"
	p, err := pipeline.Parse("c.yaml", []byte(src), pipeline.ParseOptions{Connectors: Set()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Mode != pipeline.Batch || p.ParallelismOf(p.Operator("c")) != 1 {
		t.Errorf("mode %s, parallelism %d: the spec says bounded and non-parallel", g.Mode, p.ParallelismOf(p.Operator("c")))
	}
	c, _ := runSource(t, &Builtin{}, p.Operator("c"), 0, 1)
	if got := strings.Join(c.jsons(), " "); got != `{"n":2} {"n":1}` {
		t.Errorf("records %s", got)
	}
	// lint checks its options by the spec, at their line and column
	bad := strings.Replace(src, "from: 2", "from: 200, form: 1", 1)
	_, err = pipeline.Parse("c.yaml", []byte(bad), pipeline.ParseOptions{Connectors: Set()})
	for _, want := range []string{
		"c.yaml:7:38: source countdown from must be between 1 and 100, not 200",
		`c.yaml:7:43: unknown key "form" in source countdown (did you mean "from"?)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("lint: %v\nwant %s", err, want)
		}
	}
	// a boolean and a mapping of options of their own
	withMap := strings.Replace(src, "from: 2", "from: 4, even: true, label: { name: tag, value: 7 }", 1)
	p2, err := pipeline.Parse("c.yaml", []byte(withMap), pipeline.ParseOptions{Connectors: Set()})
	if err != nil {
		t.Fatal(err)
	}
	c, _ = runSource(t, &Builtin{}, p2.Operator("c"), 0, 1)
	if got := strings.Join(c.jsons(), " "); got != `{"n":4,"tag":7} {"n":2,"tag":7}` {
		t.Errorf("records %s", got)
	}
	badMap := strings.Replace(src, "from: 2", "even: yes, label: { nme: tag, value: 70 }", 1)
	_, err = pipeline.Parse("c.yaml", []byte(badMap), pipeline.ParseOptions{Connectors: Set()})
	for _, want := range []string{
		`c.yaml:7:38: source countdown even must be true or false, not a string ("yes")`,
		`c.yaml:7:52: unknown key "nme" in source countdown label (did you mean "name"?)`,
		`c.yaml:7:69: source countdown label value must be between 0 and 9, not 70`,
		`c.yaml:7:50: source countdown label needs name`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("lint: %v\nwant %s", err, want)
		}
	}
	// the default comes from the spec
	p.Operator("c").Source.Options = map[string]any{}
	c, _ = runSource(t, &Builtin{}, p.Operator("c"), 0, 1)
	if len(c.records) != 3 {
		t.Errorf("%d records without from, want the spec's default 3", len(c.records))
	}
}
