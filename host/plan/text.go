package plan

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sluicehq/sluice/host/pipeline"
)

// WriteText prints the plan for a person: tasks with their chained
// operators, every edge with its ship strategy and why it did or did not
// chain, key-group ranges, slots, the physical layout (the subtasks each
// slot runs) and hints.
func WriteText(w io.Writer, g *JobGraph) error {
	ew := &errWriter{w: w}
	offer := "unlimited"
	if g.OfferedSlots > 0 {
		offer = fmt.Sprint(g.OfferedSlots)
	}
	ew.printf("job %s\n", g.Name)
	ew.printf("  mode           %s (%s)\n", g.Mode, g.ModeReason)
	ew.printf("  graph          %s in %s\n", plural(len(g.Operators), "operator"), plural(len(g.Tasks), "task"))
	ew.printf("  slots needed   %d (offered: %s)\n", g.RequiredSlots, offer)
	for _, l := range grantLines(g) {
		ew.printf("  grants         %s (not reproducible: a real clock or random source)\n", l)
	}

	ew.printf("\ntasks\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	for _, t := range g.Tasks {
		fmt.Fprintf(tw, "  %d\t%s\tparallelism %d\tgroup %s\n", t.Index, t.Name, t.Parallelism, t.SlotSharingGroup)
	}
	tw.Flush()

	ew.printf("\nedges\n")
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	for _, e := range g.Edges {
		status := "chained"
		if !e.Chained {
			status = "not chained: " + e.Reason
		}
		if e.Blocking {
			status = "blocking exchange, " + status
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", edgeName(e, g), strategyText(e), status)
	}
	tw.Flush()

	writeKeyGroups(ew, g)
	writeWatermarks(ew, g)
	writeWindows(ew, g)

	ew.printf("\nslots\n")
	for _, gr := range g.Groups {
		ew.printf("  group %s: %s (highest parallelism %d)\n", gr.Name, slotRange(gr.FirstSlot, gr.Slots), gr.Slots)
	}

	ew.printf("\nphysical layout\n")
	bySlot := make([][]string, g.RequiredSlots)
	for _, t := range g.Tasks {
		for i, s := range t.Slots {
			bySlot[s] = append(bySlot[s], fmt.Sprintf("%s (%d/%d)", t.Name, i+1, t.Parallelism))
		}
	}
	for s, subtasks := range bySlot {
		ew.printf("  slot %d: %s\n", s, strings.Join(subtasks, ", "))
	}

	if len(g.Hints) > 0 {
		ew.printf("\nhints\n")
		for _, h := range g.Hints {
			ew.printf("  - %s\n", h.Text)
		}
	}
	return ew.err
}

func writeKeyGroups(ew *errWriter, g *JobGraph) {
	first := true
	for _, op := range g.Operators {
		if !op.Keyed {
			continue
		}
		if first {
			ew.printf("\nkey groups (inclusive ranges per subtask)\n")
			first = false
		}
		ew.printf("  %s: max parallelism %d, parallelism %d\n", op.ID, op.MaxParallelism, op.Parallelism)
		const perLine = 8
		for i := 0; i < len(op.KeyGroups); i += perLine {
			var parts []string
			for j := i; j < min(i+perLine, len(op.KeyGroups)); j++ {
				r := op.KeyGroups[j]
				parts = append(parts, fmt.Sprintf("%d:[%d-%d]", j, r.Start, r.End))
			}
			ew.printf("    %s\n", strings.Join(parts, " "))
		}
	}
}

// edgeName is "from -> to", with the side-output tag and the input side of
// a co-operator when they matter.
func edgeName(e *Edge, g *JobGraph) string {
	from := e.From
	if e.SideOutput != "" {
		from += "." + e.SideOutput
	}
	s := from + " -> " + e.To
	for _, op := range g.Operators {
		if op.ID == e.To && op.Kind.IsCoOperator() {
			s += fmt.Sprintf(" (input %d)", e.InputIndex+1)
		}
	}
	return s
}

// strategyText is the ship strategy with what drives it: HASH [f1, f2],
// HASH [plugin p], CUSTOM [plugin p, key k].
func strategyText(e *Edge) string {
	switch {
	case e.ShipStrategy == Hash && e.KeyPlugin != "":
		return "HASH [plugin " + e.KeyPlugin + "]"
	case e.ShipStrategy == Hash:
		return "HASH [" + strings.Join(e.KeyFields, ", ") + "]"
	case e.ShipStrategy == Custom:
		return "CUSTOM [plugin " + e.CustomPlugin + ", key " + strings.Join(e.CustomKeys, ", ") + "]"
	}
	return e.ShipStrategy
}

func slotRange(first, n int) string {
	if n == 1 {
		return fmt.Sprintf("slot %d", first)
	}
	return fmt.Sprintf("slots %d-%d", first, first+n-1)
}

// errWriter keeps the first write error so renderers stay linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// writeWatermarks prints each source's watermark strategy, when some
// source has one written (its own or the pipeline's).
func writeWatermarks(ew *errWriter, g *JobGraph) {
	if g.Pipeline == nil {
		return
	}
	first := true
	for _, op := range g.Operators {
		if op.Kind != pipeline.KindSource {
			continue
		}
		w := g.Pipeline.WatermarksOf(op.Spec)
		if w == nil {
			continue
		}
		if first {
			ew.printf("\nwatermarks\n")
			if g.Mode == pipeline.Batch {
				ew.printf("  (BATCH: none while the job runs; every operator gets the end of event time when its input ends)\n")
			}
			first = false
		}
		ew.printf("  %s  %s\n", op.ID, w.Strategy.String())
	}
}
