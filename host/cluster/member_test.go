package cluster

import (
	"reflect"
	"strings"
	"testing"
)

func unitIDs(stage int, idx ...int) []string {
	out := make([]string, len(idx))
	for i, x := range idx {
		out[i] = Unit{Stage: stage, Index: x}.ID()
	}
	return out
}

func span(stage, from, to int) []string {
	var idx []int
	for i := from; i <= to; i++ {
		idx = append(idx, i)
	}
	return unitIDs(stage, idx...)
}

func actionsText(acts []Action) string {
	s := make([]string, len(acts))
	for i, a := range acts {
		s[i] = a.String()
	}
	return strings.Join(s, "\n")
}

// TestMemberSteps: the actions of one instance, event by event.
func TestMemberSteps(t *testing.T) {
	m, acts := NewMember("a")
	if got := actionsText(acts); got != "a: join owning []" {
		t.Fatalf("start: %s", got)
	}
	steps := []struct {
		ev   Event
		want string
		own  []string
	}{
		{Event{Kind: Assigned, Generation: 1, Units: unitIDs(1, 0, 1, 2), Checkpoints: map[string]int64{"s1/1": 7}},
			"a: restore [s1/0 s1/2] from checkpoint 0\na: restore [s1/1] from checkpoint 7\na: start [s1/0 s1/1 s1/2]", unitIDs(1, 0, 1, 2)},
		// a stale answer of an older generation changes nothing
		{Event{Kind: Assigned, Generation: 1, Units: nil}, "", unitIDs(1, 0, 1, 2)},
		// cooperative: give up s1/2, keep the rest, rejoin
		{Event{Kind: Assigned, Generation: 2, Units: unitIDs(1, 0, 1)},
			"a: revoke [s1/2]\na: join owning [s1/0 s1/1]", unitIDs(1, 0, 1)},
		{Event{Kind: Assigned, Generation: 3, Units: unitIDs(1, 0, 1, 10), Checkpoints: map[string]int64{"s1/10": 9}},
			"a: restore [s1/10] from checkpoint 9\na: start [s1/10]", unitIDs(1, 0, 1, 10)},
		// fenced: drop everything without committing, join afresh
		{Event{Kind: Lost}, "a: abandon [s1/0 s1/1 s1/10]\na: join owning []", nil},
		{Event{Kind: Assigned, Generation: 5, Units: unitIDs(1, 4)}, "a: restore [s1/4] from checkpoint 0\na: start [s1/4]", unitIDs(1, 4)},
		{Event{Kind: Stop}, "a: revoke [s1/4]\na: leave", nil},
		// stopped: deaf to everything after
		{Event{Kind: Assigned, Generation: 9, Units: unitIDs(1, 4)}, "", nil},
	}
	for i, s := range steps {
		if got := actionsText(m.Step(s.ev)); got != s.want {
			t.Errorf("step %d: actions\n%s\nwant\n%s", i, got, s.want)
		}
		if got := m.Owned(); !reflect.DeepEqual(got, append([]string{}, s.own...)) {
			t.Errorf("step %d: owns %v, want %v", i, got, s.own)
		}
	}
}

// TestOwnedSortsNumerically: s1/2 before s1/10.
func TestOwnedSortsNumerically(t *testing.T) {
	m, _ := NewMember("a")
	m.Step(Event{Kind: Assigned, Generation: 1, Units: []string{"s1/10", "s0/3", "s1/2"}})
	if got := strings.Join(m.Owned(), " "); got != "s0/3 s1/2 s1/10" {
		t.Errorf("owned %s", got)
	}
}
