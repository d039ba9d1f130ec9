package runtime_test

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// The differential test: every config in configs/ run with chaining on and
// off, as written and with every operator at parallelism 1 and 4, must
// print the same multiset of records wherever the result cannot depend on
// routing:
//
//   - the number of records per sink never depends on it, except through a
//     BROADCAST edge, which prints one copy per downstream subtask: those
//     are compared between runs of equal parallelism only;
//   - the records themselves are compared where no keyed operator can see
//     a key's records in a different order: a keyed operator keeps its
//     first record's fields and emits running values, so its output depends
//     on the order, which is fixed only when the operator has one input and
//     everything upstream of it runs at parallelism 1 with a single input
//     (one upstream subtask, one FIFO channel per key).

type variant struct {
	name  string
	chain bool
	par   int // 0: as written
}

var variants = []variant{
	{"as-written", true, 0}, {"as-written/no-chaining", false, 0},
	{"p1", true, 1}, {"p1/no-chaining", false, 1},
	{"p4", true, 4}, {"p4/no-chaining", false, 4},
}

func (v variant) edit(p *pipeline.Pipeline) {
	p.Chaining = v.chain
	if v.par == 0 {
		return
	}
	p.Parallelism = v.par
	for _, op := range p.Operators {
		op.Parallelism = v.par
		if op.Kind == pipeline.KindSource && (op.Source.Type == "elements" || op.Source.Type == "stdin") {
			op.Parallelism = 1 // these sources are not parallel
		}
		if op.Window != nil && op.Window.All {
			op.Parallelism = 1 // a window-all runs at parallelism 1 (Flink's windowAll)
		}
	}
}

func TestDifferentialConfigs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(configsDir, "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no configs")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			type outcome struct {
				v         variant
				set       []string
				counts    map[string]int
				orderFree bool
				broadcast bool
			}
			var outs []outcome
			for _, v := range variants {
				var g *plan.JobGraph
				r := runPipeline(t, file, "", func(p *pipeline.Pipeline) {
					v.edit(p)
					g, _ = plan.Plan(p, plan.Options{})
				}, runtime.Options{})
				if r.err != nil {
					t.Fatalf("%s: %v", v.name, r.err)
				}
				counts := map[string]int{}
				for _, l := range r.lines {
					counts[l.Prefix]++
				}
				outs = append(outs, outcome{v, multiset(r.lines), counts, orderFree(g), hasBroadcast(g)})
			}
			compared := 0
			for i, a := range outs {
				for _, b := range outs[i+1:] {
					if a.broadcast && a.v.par != b.v.par {
						continue
					}
					if !equalCounts(a.counts, b.counts) {
						t.Fatalf("%s printed %v records per sink, %s %v", a.v.name, a.counts, b.v.name, b.counts)
					}
					if a.orderFree && b.orderFree {
						compared++
						if strings.Join(a.set, "\n") != strings.Join(b.set, "\n") {
							t.Fatalf("%s and %s printed different records:\n%s", a.v.name, b.v.name, diff(a.set, b.set))
						}
					}
				}
			}
			t.Logf("%d pairs of runs compared record by record", compared)
			if k, ok := knownOutputs[filepath.Base(file)]; ok {
				for _, v := range variants {
					r := runPipeline(t, file, "", func(p *pipeline.Pipeline) { k.input(p); v.edit(p) }, runtime.Options{})
					if r.err != nil {
						t.Fatalf("%s on the known input: %v", v.name, r.err)
					}
					if got := multiset(r.lines); strings.Join(got, "\n") != strings.Join(k.want, "\n") {
						t.Fatalf("%s on the known input printed:\n%s\nwant:\n%s", v.name, strings.Join(got, "\n"), strings.Join(k.want, "\n"))
					}
				}
			}
		})
	}
}

// knownOutputs pins what a config computes, not only that every variant
// agrees: the differential runs above would pass a job that prints the
// same wrong value everywhere (wordcount once printed "amount":0 for every
// word). input swaps the config's source for a small known one; want is
// the multiset printed, as multiset gives it.
var knownOutputs = map[string]struct {
	input func(*pipeline.Pipeline)
	want  []string
}{
	"wordcount.yaml": {
		input: func(p *pipeline.Pipeline) {
			op := p.Operators[0] // lines
			op.Source = &pipeline.Connector{Type: "elements", Pos: op.Source.Pos, Options: map[string]any{"values": []any{
				map[string]any{"line": "To be, or not to be:"},
				map[string]any{"line": "that is the question."},
				map[string]any{"line": "  BE  quick "},
			}}}
			op.Parallelism = 1
		},
		want: []string{
			`count {"word":"be","count":3}`,
			`count {"word":"is","count":1}`,
			`count {"word":"not","count":1}`,
			`count {"word":"or","count":1}`,
			`count {"word":"question","count":1}`,
			`count {"word":"quick","count":1}`,
			`count {"word":"that","count":1}`,
			`count {"word":"the","count":1}`,
			`count {"word":"to","count":2}`,
		},
	},
}

// orderFree reports whether every keyed operator of g sees each key's
// records in one fixed order: it has one input and all its ancestors run at
// parallelism 1, each with a single input.
func orderFree(g *plan.JobGraph) bool {
	byID := map[string]*plan.Operator{}
	for _, op := range g.Operators {
		byID[op.ID] = op
	}
	var fixed func(op *plan.Operator) bool
	fixed = func(op *plan.Operator) bool {
		if op.Parallelism != 1 || len(op.Inputs) > 1 {
			return false
		}
		for _, e := range op.Inputs {
			if !fixed(byID[e.From]) {
				return false
			}
		}
		return true
	}
	for _, op := range g.Operators {
		if op.Keyed && (len(op.Inputs) != 1 || !fixed(byID[op.Inputs[0].From])) {
			return false
		}
	}
	return true
}

func hasBroadcast(g *plan.JobGraph) bool {
	for _, e := range g.Edges {
		if e.ShipStrategy == plan.Broadcast {
			return true
		}
	}
	return false
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// diff lists the first lines only one side has.
func diff(a, b []string) string {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	var out []string
	for s, n := range count {
		if n > 0 {
			out = append(out, "- "+s)
		} else if n < 0 {
			out = append(out, "+ "+s)
		}
	}
	sort.Strings(out)
	if len(out) > 10 {
		out = append(out[:10], "...")
	}
	return strings.Join(out, "\n")
}

func setMode(mode pipeline.Mode) func(*pipeline.Pipeline) {
	return func(p *pipeline.Pipeline) { p.Mode = mode }
}
