package partition

import (
	"fmt"
	"testing"
)

// The examples of flink-semantics.md §2.
func TestPointwiseExamples(t *testing.T) {
	tests := []struct {
		s, t    int
		targets [][2]int // per upstream subtask, [first, end)
		sources [][2]int // per downstream subtask
	}{
		{2, 4, [][2]int{{0, 2}, {2, 4}}, [][2]int{{0, 1}, {0, 1}, {1, 2}, {1, 2}}},
		{3, 2, [][2]int{{0, 1}, {1, 2}, {1, 2}}, [][2]int{{0, 1}, {1, 3}}},
		{2, 3, [][2]int{{0, 2}, {2, 3}}, [][2]int{{0, 1}, {0, 1}, {1, 2}}},
		{3, 3, [][2]int{{0, 1}, {1, 2}, {2, 3}}, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{1, 4, [][2]int{{0, 4}}, [][2]int{{0, 1}, {0, 1}, {0, 1}, {0, 1}}},
		{4, 1, [][2]int{{0, 1}, {0, 1}, {0, 1}, {0, 1}}, [][2]int{{0, 4}}},
		{3, 7, [][2]int{{0, 3}, {3, 5}, {5, 7}}, nil},
	}
	for _, tt := range tests {
		for i, want := range tt.targets {
			if f, e := PointwiseTargets(i, tt.s, tt.t); f != want[0] || e != want[1] {
				t.Errorf("S=%d T=%d: PointwiseTargets(%d) = [%d, %d), want [%d, %d)", tt.s, tt.t, i, f, e, want[0], want[1])
			}
		}
		for j, want := range tt.sources {
			if f, e := PointwiseSources(j, tt.s, tt.t); f != want[0] || e != want[1] {
				t.Errorf("S=%d T=%d: PointwiseSources(%d) = [%d, %d), want [%d, %d)", tt.s, tt.t, j, f, e, want[0], want[1])
			}
		}
	}
}

// flinkPointwise transcribes EdgeManagerBuildUtil.connectPointwise's
// loops: the set of edges "i->j".
func flinkPointwise(s, t int) map[string]bool {
	edges := map[string]bool{}
	switch {
	case s == t:
		for i := 0; i < s; i++ {
			edges[fmt.Sprint(i, "->", i)] = true
		}
	case s > t:
		for j := 0; j < t; j++ {
			for i := j * s / t; i < (j+1)*s/t; i++ {
				edges[fmt.Sprint(i, "->", j)] = true
			}
		}
	default:
		for i := 0; i < s; i++ {
			for j := (i*t + s - 1) / s; j < ((i+1)*t+s-1)/s; j++ {
				edges[fmt.Sprint(i, "->", j)] = true
			}
		}
	}
	return edges
}

// TestPointwiseMatchesFlink: PointwiseTargets and PointwiseSources give
// exactly Flink's edges, every subtask on both sides has at least one, and
// the side with more subtasks has exactly one.
func TestPointwiseMatchesFlink(t *testing.T) {
	for s := 1; s <= 40; s++ {
		for tt := 1; tt <= 40; tt++ {
			want := flinkPointwise(s, tt)
			fromTargets, fromSources := map[string]bool{}, map[string]bool{}
			for i := 0; i < s; i++ {
				f, e := PointwiseTargets(i, s, tt)
				if e-f < 1 || (s >= tt && e-f != 1) {
					t.Fatalf("S=%d T=%d: upstream %d feeds [%d, %d)", s, tt, i, f, e)
				}
				for j := f; j < e; j++ {
					fromTargets[fmt.Sprint(i, "->", j)] = true
				}
			}
			for j := 0; j < tt; j++ {
				f, e := PointwiseSources(j, s, tt)
				if e-f < 1 || (s <= tt && e-f != 1) {
					t.Fatalf("S=%d T=%d: downstream %d reads [%d, %d)", s, tt, j, f, e)
				}
				for i := f; i < e; i++ {
					fromSources[fmt.Sprint(i, "->", j)] = true
				}
			}
			if !sameSet(want, fromTargets) || !sameSet(want, fromSources) {
				t.Fatalf("S=%d T=%d: edges differ from Flink's connectPointwise:\nflink   %v\ntargets %v\nsources %v", s, tt, want, fromTargets, fromSources)
			}
		}
	}
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
