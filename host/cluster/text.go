package cluster

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/sluicehq/sluice/host/plan"
)

// WriteText prints the layout: the group, which edges cross instances
// and through which topic, the stages and their units, and, when
// instances > 0, the sample assignment of that many instances.
func WriteText(w io.Writer, l *Layout, instances int) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "cluster (brokers %s): consumer group %s, one transaction per checkpoint of a unit and internal topic (transactional ids %s-s<stage>-<unit>.out<edge>-0-<checkpoint>)\n",
		strings.Join(l.Brokers, ","), l.Group, l.TransactionalIDPrefix)
	fmt.Fprintf(b, "keyed state of a moved unit: restored from its last completed checkpoint in shared storage\n")
	fmt.Fprintf(b, "\nedges across instances\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, e := range l.Edges {
		name := plan.EdgeKey(e.From, e.To)
		if e.SideOutput != "" {
			name += " [" + e.SideOutput + "]"
		}
		name = strings.Replace(name, "->", " -> ", 1)
		if !e.Crosses {
			fmt.Fprintf(tw, "  %s\t%s\tstays inside an instance\n", name, e.ShipStrategy)
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\tcrosses: topic %s, %d partition%s; %s\n", name, e.ShipStrategy, e.Topic, e.Partitions, plural(e.Partitions), e.Reason)
	}
	tw.Flush()
	fmt.Fprintf(b, "\nstages (run by an instance for the units it owns)\n")
	for _, s := range l.Stages {
		fmt.Fprintf(b, "  stage %d: %s\n    %d unit%s (%s)", s.Index, strings.Join(s.Operators, ", "), len(s.Units), plural(len(s.Units)), unitKind(s))
		if s.Keyed != "" {
			u := s.Units[0].KeyGroups
			fmt.Fprintf(b, "; keyed '%s', %d key groups, unit 0 = key groups %s", s.Keyed, s.MaxParallelism, kgText(u))
		}
		if len(s.Broadcast) > 0 {
			fmt.Fprintf(b, "; every owner reads %s in full", strings.Join(s.Broadcast, ", "))
		}
		b.WriteString("\n")
	}
	if instances > 0 {
		names, units := l.Sample(instances)
		fmt.Fprintf(b, "\nsample assignment, %d instance%s starting together\n", instances, plural(instances))
		for _, n := range names {
			fmt.Fprintf(b, "  %s:", n)
			byStage := l.byStage(units[n])
			if len(byStage) == 0 {
				b.WriteString(" nothing (more instances than units)")
			}
			for _, st := range byStage {
				fmt.Fprintf(b, " stage %d units %s", st.stage, ranges(st.units))
				if kg := st.keyGroups; len(kg) > 0 {
					fmt.Fprintf(b, " (key groups %s)", ranges(kg))
				}
				b.WriteString(";")
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, strings.ReplaceAll(b.String(), ";\n", "\n"))
	return err
}

func unitKind(s *Stage) string {
	if s.UnitKind == "partition" {
		return "one per partition of its input topics"
	}
	for _, u := range s.Units {
		for _, subs := range u.Subtasks {
			if len(subs) > 1 {
				return "one per group of subtasks its pointwise edges connect"
			}
		}
	}
	return "one per subtask"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func kgText(r plan.KeyGroupRange) string {
	if r.Start == r.End {
		return "[" + strconv.Itoa(r.Start) + "]"
	}
	return fmt.Sprintf("[%d-%d]", r.Start, r.End)
}

type stageUnits struct {
	stage     int
	units     []int
	keyGroups []int
}

// byStage groups unit ids by stage, with the key groups they hold.
func (l *Layout) byStage(ids []string) []stageUnits {
	var out []stageUnits
	for _, id := range ids {
		u, ok := l.Unit(id)
		if !ok {
			continue
		}
		if len(out) == 0 || out[len(out)-1].stage != u.Stage {
			out = append(out, stageUnits{stage: u.Stage})
		}
		st := &out[len(out)-1]
		st.units = append(st.units, u.Index)
		if u.HasKeyGroups {
			for kg := u.KeyGroups.Start; kg <= u.KeyGroups.End; kg++ {
				st.keyGroups = append(st.keyGroups, kg)
			}
		}
	}
	return out
}

// ranges prints sorted ints as "[0-42 86]".
func ranges(xs []int) string {
	var parts []string
	for _, p := range pairs(xs) {
		if p[0] == p[1] {
			parts = append(parts, strconv.Itoa(p[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", p[0], p[1]))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}
