package cluster

import (
	"sort"
)

// Subscription is what a member of the job's consumer group sends when
// it joins: its name (a static instance id) and the units it owns now,
// as Kafka's cooperative protocol has members send their owned
// partitions (KIP-429).
type Subscription struct {
	Member string
	Owned  []string // unit ids
}

// Balance is the group leader's assignor: it hands each stage's units
// (stages[s] lists stage s's unit ids in order) to the members,
// cooperatively and stickily, the way Kafka's CooperativeStickyAssignor
// does, one stage at a time:
//
//   - a unit claimed by a member stays with it unless that member owns
//     more than its share; a unit claimed by two members (never, when
//     every member follows its Member state machine) stays with the first
//     by name;
//   - shares of a stage differ by at most one: with U units and n
//     members, U mod n members keep U/n+1 (those owning the most of the
//     stage, then those with the fewest units so far, then by name), the
//     others U/n; a member beyond U gets none of the stage, so a stage
//     never has more owners than units (than max parallelism);
//   - a unit a member must give up is assigned to NOBODY in this
//     generation: the member revokes it and rejoins, and the next
//     rebalance, which sees it unclaimed, assigns it. So a unit, and the
//     key groups in it, is never owned by two members at once;
//   - free units (new, or left behind by a member that is gone) go to the
//     members below their share, lowest unit first: to the owner of the
//     unit before it if that one is below its share (so fresh members get
//     contiguous ranges of units, hence of key groups), else to the
//     member with the fewest units of the stage (then fewest in all, then
//     by name).
//
// The result maps every member to its units, stage by stage in order; it
// is a function of its arguments only.
func Balance(stages [][]string, subs []Subscription) map[string][]string {
	subs = append([]Subscription(nil), subs...)
	sort.SliceStable(subs, func(i, j int) bool { return subs[i].Member < subs[j].Member })
	var members []string
	claims := map[string][]string{}
	for _, s := range subs {
		if _, dup := claims[s.Member]; dup {
			continue
		}
		members = append(members, s.Member)
		claims[s.Member] = s.Owned
	}
	out := make(map[string][]string, len(members))
	total := map[string]int{}
	for _, m := range members {
		out[m] = []string{}
	}
	for _, units := range stages {
		for m, ids := range balanceStage(units, members, claims, total) {
			out[m] = append(out[m], ids...)
			total[m] += len(ids)
		}
	}
	return out
}

// balanceStage assigns one stage's units; total is each member's count
// of units in the stages before.
func balanceStage(units, members []string, claims map[string][]string, total map[string]int) map[string][]string {
	pos := make(map[string]int, len(units))
	for i, u := range units {
		pos[u] = i
	}
	owned := map[string][]int{}
	claimed := make([]bool, len(units))
	for _, m := range members {
		owned[m] = []int{}
		for _, u := range claims[m] {
			if i, ok := pos[u]; ok && !claimed[i] {
				claimed[i] = true
				owned[m] = append(owned[m], i)
			}
		}
		sort.Ints(owned[m])
	}
	out := make(map[string][]string, len(members))
	if len(members) == 0 {
		return out
	}
	// Shares: the members owning the most of the stage keep the larger one.
	order := append([]string(nil), members...)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if len(owned[a]) != len(owned[b]) {
			return len(owned[a]) > len(owned[b])
		}
		return total[a] < total[b]
	})
	share := map[string]int{}
	base, extra := len(units)/len(members), len(units)%len(members)
	for i, m := range order {
		share[m] = base
		if i < extra {
			share[m]++
		}
	}
	keep := map[string][]int{}
	withheld := make([]bool, len(units))
	for _, m := range members {
		k := owned[m]
		if len(k) > share[m] {
			for _, i := range k[share[m]:] {
				withheld[i] = true // being revoked: nobody gets it this generation
			}
			k = k[:share[m]]
		}
		keep[m] = k
	}
	ownerOf := make([]string, len(units))
	for m, k := range keep {
		for _, i := range k {
			ownerOf[i] = m
		}
	}
	for i := range units {
		if claimed[i] || withheld[i] {
			continue
		}
		best := ""
		if prev := ""; i > 0 {
			if prev = ownerOf[i-1]; prev != "" && len(keep[prev]) < share[prev] {
				best = prev // keep ranges contiguous where it costs nothing
			}
		}
		for _, m := range members {
			if best != "" && best == ownerOfPrev(ownerOf, i) {
				break
			}
			if len(keep[m]) >= share[m] {
				continue
			}
			if best == "" || len(keep[m]) < len(keep[best]) ||
				len(keep[m]) == len(keep[best]) && total[m] < total[best] {
				best = m
			}
		}
		if best == "" {
			break
		}
		keep[best] = append(keep[best], i)
		ownerOf[i] = best
	}
	for _, m := range members {
		k := keep[m]
		sort.Ints(k)
		ids := make([]string, len(k))
		for j, i := range k {
			ids[j] = units[i]
		}
		out[m] = ids
	}
	return out
}

func ownerOfPrev(ownerOf []string, i int) string {
	if i == 0 {
		return ""
	}
	return ownerOf[i-1]
}
