package plan

import (
	"fmt"
	"io"
	"strings"
)

// WriteDOT prints the plan as a Graphviz digraph: one cluster per task,
// one node per operator, chained edges bold inside their cluster and
// exchanges dashed, labelled with their ship strategy.
func WriteDOT(w io.Writer, g *JobGraph) error {
	ew := &errWriter{w: w}
	ew.printf("digraph %s {\n", dotQuote(g.Name))
	ew.printf("  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n")
	for _, t := range g.Tasks {
		ew.printf("  subgraph cluster_%d {\n", t.Index)
		ew.printf("    label=%s;\n", dotQuote(fmt.Sprintf("task %d: %s (parallelism %d, group %s)", t.Index, t.Name, t.Parallelism, t.SlotSharingGroup)))
		for _, id := range t.Operators {
			for _, op := range g.Operators {
				if op.ID == id {
					ew.printf("    %s [label=%s];\n", dotQuote(id), dotQuote(fmt.Sprintf("%s\n%s, p=%d", id, op.Kind, op.Parallelism)))
				}
			}
		}
		ew.printf("  }\n")
	}
	for _, e := range g.Edges {
		label := strategyText(e)
		if e.Blocking {
			label += " (blocking)"
		}
		attrs := []string{"label=" + dotQuote(label)}
		if e.Chained {
			attrs = append(attrs, "style=bold")
		} else {
			attrs = append(attrs, "style=dashed", "tooltip="+dotQuote("not chained: "+e.Reason))
		}
		if e.SideOutput != "" {
			attrs = append(attrs, "taillabel="+dotQuote(e.SideOutput))
		}
		ew.printf("  %s -> %s [%s];\n", dotQuote(e.From), dotQuote(e.To), strings.Join(attrs, ", "))
	}
	ew.printf("}\n")
	return ew.err
}

// dotQuote writes s as a DOT double-quoted string.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
