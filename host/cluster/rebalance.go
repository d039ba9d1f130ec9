package cluster

import "strconv"

// Rebalance is one rebalance of generation gen over the units of each
// stage, as the group coordinator runs it: every member in members joins
// with its Subscription, the leader's Balance assigns units, and each
// member steps through its assignment (checkpoints: the last completed checkpoint per unit, as
// Event.Checkpoints). It returns the members' actions in member order and
// whether a member asked to rejoin (it revoked units, which the next
// rebalance hands out). Members that are gone (killed, stopped) must not
// be in members: the coordinator drops a member that does not rejoin.
func Rebalance(stages [][]string, members []*Member, gen int, checkpoints map[string]int64) (acts []Action, rejoin bool) {
	subs := make([]Subscription, len(members))
	for i, m := range members {
		subs[i] = m.Subscription()
	}
	assign := Balance(stages, subs)
	for _, m := range members {
		for _, a := range m.Step(Event{Kind: Assigned, Generation: gen, Units: assign[m.Name()], Checkpoints: checkpoints}) {
			acts = append(acts, a)
			if a.Kind == Join {
				rejoin = true
			}
		}
	}
	return acts, rejoin
}

// UnitIDs lists the ids of the units of each stage of the layout.
func (l *Layout) UnitIDs() [][]string {
	ids := make([][]string, len(l.Stages))
	for i, s := range l.Stages {
		ids[i] = []string{}
		for _, u := range s.Units {
			ids[i] = append(ids[i], u.ID())
		}
	}
	return ids
}

// Unit returns the unit of id, and whether the layout has it.
func (l *Layout) Unit(id string) (Unit, bool) {
	s, i := parseUnit(id)
	if s < 0 || s >= len(l.Stages) || i < 0 || i >= len(l.Stages[s].Units) {
		return Unit{}, false
	}
	return l.Stages[s].Units[i], true
}

// Sample is the settled assignment of n fresh instances named
// instance-0 .. instance-<n-1>: what the group gives them when they start
// together. It maps each instance to its units.
func (l *Layout) Sample(n int) (names []string, units map[string][]string) {
	members := make([]*Member, n)
	for i := range members {
		members[i], _ = NewMember(instanceName(i))
		names = append(names, members[i].Name())
	}
	ids := l.UnitIDs()
	for gen := 1; gen <= 2*n+2; gen++ {
		if _, again := Rebalance(ids, members, gen, nil); !again {
			break
		}
	}
	units = map[string][]string{}
	for _, m := range members {
		units[m.Name()] = m.Owned()
	}
	return names, units
}

func instanceName(i int) string { return "instance-" + strconv.Itoa(i) }
