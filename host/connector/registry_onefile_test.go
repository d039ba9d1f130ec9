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
	},
	Boundedness: func(map[string]any) spec.Boundedness { return spec.Bounded },
	Replayable:  true,
	Guarantee:   spec.ExactlyOnce,
	NonParallel: true,
}

func init() {
	registerSource(countdownSpec, func(_ *Builtin, o *options, _ *pipeline.Operator, _, _ int) (runtime.Source, error) {
		from := o.specInt("from")
		if err := o.finish(); err != nil {
			return nil, err
		}
		return &countdown{from: from}, nil
	})
}

type countdown struct{ from int64 }

func (c *countdown) Open(*runtime.OpenContext) error { return nil }
func (c *countdown) Total() int64                    { return c.from }
func (c *countdown) Close() error                    { return nil }

func (c *countdown) Run(_ context.Context, out runtime.Collector) error {
	var w abi.Writer
	for n := c.from; n > 0; n-- {
		w.Append(0, false, nil, abi.AppendInt(abi.AppendStr(abi.AppendMapHeader(nil, 1), "n"), n))
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
	// the default comes from the spec
	p.Operator("c").Source.Options = map[string]any{}
	c, _ = runSource(t, &Builtin{}, p.Operator("c"), 0, 1)
	if len(c.records) != 3 {
		t.Errorf("%d records without from, want the spec's default 3", len(c.records))
	}
}
