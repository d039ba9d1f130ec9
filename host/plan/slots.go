package plan

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/partition"
)

// slots places subtasks into slots as Flink's scheduler does with slot
// sharing (flink-semantics.md §4): a group needs as many slots as its
// highest task parallelism, subtask i of every task of the group runs in
// the group's slot i, and groups take consecutive slot ranges in order of
// first use. The job needs the sum over groups; more than offered (by the
// pipeline's slots: or the host) is refused with both numbers.
func (pl *planner) slots(opts Options) {
	groups := map[string]*SlotSharingGroup{}
	for _, t := range pl.g.Tasks {
		g := groups[t.SlotSharingGroup]
		if g == nil {
			g = &SlotSharingGroup{Name: t.SlotSharingGroup}
			groups[g.Name] = g
			pl.g.Groups = append(pl.g.Groups, g)
		}
		g.Slots = max(g.Slots, t.Parallelism)
	}
	next := 0
	for _, g := range pl.g.Groups {
		g.FirstSlot = next
		next += g.Slots
	}
	pl.g.RequiredSlots = next
	for _, t := range pl.g.Tasks {
		first := groups[t.SlotSharingGroup].FirstSlot
		t.Slots = make([]int, t.Parallelism)
		for i := range t.Slots {
			t.Slots[i] = first + i
		}
	}

	offered := pl.p.Slots
	if opts.Slots > 0 && (offered == 0 || opts.Slots < offered) {
		offered = opts.Slots
	}
	pl.g.OfferedSlots = offered
	if pl.p.Slots > 0 && pl.g.RequiredSlots > pl.p.Slots {
		pl.errorf(pl.p.KeyPos["slots"], "the job needs %d slots but the pipeline offers %d (slots: %d); %s",
			pl.g.RequiredSlots, pl.p.Slots, pl.p.Slots, pl.slotsWhy())
	}
	if opts.Slots > 0 && pl.g.RequiredSlots > opts.Slots {
		pl.errorf(pipeline.Pos{}, "the job needs %d slots but the host offers %d; %s",
			pl.g.RequiredSlots, opts.Slots, pl.slotsWhy())
	}
}

// slotsWhy explains the required slots: one term per group.
func (pl *planner) slotsWhy() string {
	terms := make([]string, len(pl.g.Groups))
	for i, g := range pl.g.Groups {
		terms[i] = fmt.Sprintf("group %s needs %d", g.Name, g.Slots)
	}
	return "the highest parallelism of each slot sharing group counts: " + strings.Join(terms, ", ")
}

// keyGroups computes the key-group range of every subtask of a keyed
// operator (flink-semantics.md §1).
func (pl *planner) keyGroups() {
	for _, op := range pl.g.Operators {
		if !op.Keyed {
			continue
		}
		op.KeyGroups = make([]KeyGroupRange, op.Parallelism)
		for i := range op.KeyGroups {
			s, e := partition.KeyGroupRange(op.MaxParallelism, op.Parallelism, i)
			op.KeyGroups[i] = KeyGroupRange{Start: s, End: e}
		}
	}
}
