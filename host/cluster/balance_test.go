package cluster

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/partition"
)

// TestBalanceTable: one leader decision per row.
func TestBalanceTable(t *testing.T) {
	stage := [][]string{span(0, 0, 7)}
	for _, c := range []struct {
		name string
		subs []Subscription
		want map[string][]string
	}{
		{"fresh members get contiguous ranges", []Subscription{{Member: "a"}, {Member: "b"}, {Member: "c"}},
			map[string][]string{"a": span(0, 0, 2), "b": span(0, 3, 5), "c": span(0, 6, 7)}},
		{"sticky: owners keep their units", []Subscription{{"a", span(0, 5, 7)}, {"b", span(0, 0, 2)}, {"c", span(0, 3, 4)}},
			map[string][]string{"a": span(0, 5, 7), "b": span(0, 0, 2), "c": span(0, 3, 4)}},
		{"join: over-share units are withheld, nobody gets them yet",
			[]Subscription{{"a", span(0, 0, 2)}, {"b", span(0, 3, 5)}, {"c", span(0, 6, 7)}, {Member: "d"}},
			map[string][]string{"a": span(0, 0, 1), "b": span(0, 3, 4), "c": span(0, 6, 7), "d": {}}},
		{"join, second round: the revoked units go to the newcomer",
			[]Subscription{{"a", span(0, 0, 1)}, {"b", span(0, 3, 4)}, {"c", span(0, 6, 7)}, {Member: "d"}},
			map[string][]string{"a": span(0, 0, 1), "b": span(0, 3, 4), "c": span(0, 6, 7), "d": unitIDs(0, 2, 5)}},
		{"leave: only the leaver's units move", []Subscription{{"a", span(0, 0, 2)}, {"c", span(0, 6, 7)}},
			map[string][]string{"a": append(span(0, 0, 2), "s0/3"), "c": append(unitIDs(0, 4, 5), span(0, 6, 7)...)}},
		{"a unit claimed twice stays with the first by name", []Subscription{{"b", unitIDs(0, 0)}, {"a", unitIDs(0, 0)}},
			map[string][]string{"a": span(0, 0, 3), "b": span(0, 4, 7)}},
		{"more members than units: never more owners than units",
			[]Subscription{{Member: "a"}, {Member: "b"}, {Member: "c"}, {Member: "d"}, {Member: "e"}, {Member: "f"}, {Member: "g"}, {Member: "h"}, {Member: "i"}},
			map[string][]string{"a": unitIDs(0, 0), "b": unitIDs(0, 1), "c": unitIDs(0, 2), "d": unitIDs(0, 3), "e": unitIDs(0, 4),
				"f": unitIDs(0, 5), "g": unitIDs(0, 6), "h": unitIDs(0, 7), "i": {}}},
		{"no members", nil, map[string][]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Balance(stage, c.subs); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

// TestBalanceFreshIsContiguous: members that start together each get one
// contiguous range of units, of the sizes Flink's KeyGroupRange(U, n, i)
// gives (which member gets the larger share may differ).
func TestBalanceFreshIsContiguous(t *testing.T) {
	for _, U := range []int{1, 7, 8, 128} {
		for n := 1; n <= 12; n++ {
			var subs []Subscription
			for i := 0; i < n; i++ {
				subs = append(subs, Subscription{Member: instanceName(i)})
			}
			got := Balance([][]string{span(0, 0, U-1)}, subs)
			sizes := map[int]int{}
			for _, m := range subs {
				us := got[m.Member]
				for j := 1; j < len(us); j++ {
					_, a := parseUnit(us[j-1])
					_, b := parseUnit(us[j])
					if b != a+1 {
						t.Fatalf("U=%d n=%d: %s owns %v, not one range", U, n, m.Member, us)
					}
				}
				sizes[len(us)]++
			}
			flink := map[int]int{}
			for i := 0; i < n; i++ {
				a, b := partition.KeyGroupRange(U, n, i)
				flink[max(b-a+1, 0)]++
			}
			if !reflect.DeepEqual(sizes, flink) {
				t.Errorf("U=%d n=%d: share sizes %v, Flink's ranges %v", U, n, sizes, flink)
			}
		}
	}
}

// TestBalanceNeverHandsOverAClaimedUnit: for random members with
// disjoint claims over random stages, Balance never gives a unit one
// member claims to another, gives each unit to at most one member, keeps
// every share within one of the others, and leaves a unit unassigned only
// while its claimant must give it up.
func TestBalanceNeverHandsOverAClaimedUnit(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 28))
	for round := 0; round < 2000; round++ {
		stages := make([][]string, 1+r.IntN(3))
		for s := range stages {
			stages[s] = span(s, 0, r.IntN(20))
		}
		members := 1 + r.IntN(8)
		subs := make([]Subscription, members)
		claimant := map[string]string{}
		for i := range subs {
			subs[i].Member = instanceName(i)
		}
		for _, units := range stages {
			for _, u := range units {
				if i := r.IntN(members + 2); i < members { // some units unclaimed
					subs[i].Owned = append(subs[i].Owned, u)
					claimant[u] = subs[i].Member
				}
			}
		}
		got := Balance(stages, subs)
		owner := map[string]string{}
		for m, units := range got {
			for _, u := range units {
				if o, dup := owner[u]; dup {
					t.Fatalf("round %d: %s given to %s and %s", round, u, o, m)
				}
				owner[u] = m
				if c := claimant[u]; c != "" && c != m {
					t.Fatalf("round %d: %s, claimed by %s, given to %s", round, u, c, m)
				}
			}
		}
		for s, units := range stages {
			hi := 0
			for _, sub := range subs {
				n := 0
				for _, u := range got[sub.Member] {
					if st, _ := parseUnit(u); st == s {
						n++
					}
				}
				hi = max(hi, n)
			}
			if hi > (len(units)+members-1)/members {
				t.Fatalf("round %d: stage %d: a member got %d of %d units among %d members", round, s, hi, len(units), members)
			}
			for _, u := range units {
				if owner[u] == "" && claimant[u] == "" {
					t.Fatalf("round %d: free unit %s left unassigned", round, u)
				}
			}
		}
	}
}
