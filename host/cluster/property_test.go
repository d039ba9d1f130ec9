package cluster

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
)

// sim drives Members the way Kafka's group coordinator and the instances'
// processes would, with no goroutine and no clock: a process runs a
// Member; the group is the members the coordinator knows (a killed process
// stays in it until its session expires); a rebalance is Rebalance over
// the group's members that are still alive. It checks the invariants
// after every action.
type sim struct {
	t       *testing.T
	l       *Layout
	stages  [][]string
	alive   map[string]*Member // running processes
	group   map[string]bool    // members the coordinator knows
	gen     int
	pending bool // a rebalance is due
	next    int  // name of the next instance
	cp      int64
	// committed[u]: the last completed checkpoint holding unit u's state.
	committed map[string]int64
	log       []string
}

func newSim(t *testing.T, l *Layout) *sim {
	return &sim{t: t, l: l, stages: l.UnitIDs(), alive: map[string]*Member{}, group: map[string]bool{}, committed: map[string]int64{}}
}

func (s *sim) logf(format string, args ...any) { s.log = append(s.log, fmt.Sprintf(format, args...)) }

func (s *sim) fail(format string, args ...any) {
	s.t.Helper()
	for _, l := range s.log {
		s.t.Log(l)
	}
	s.t.Fatalf(format, args...)
}

// do carries out actions as the instances would.
func (s *sim) do(acts []Action) {
	for _, a := range acts {
		s.logf("  %s", a)
		switch a.Kind {
		case Join:
			s.group[a.Member] = true
			s.pending = true
		case Revoke: // finish a checkpoint with them, then let go
			s.cp++
			for _, u := range a.Units {
				s.committed[u] = s.cp
			}
		case Restore:
			for _, u := range a.Units {
				if s.committed[u] != a.Checkpoint {
					s.fail("%s restores %s from checkpoint %d, its last completed checkpoint is %d", a.Member, u, a.Checkpoint, s.committed[u])
				}
			}
		case Leave:
			delete(s.group, a.Member)
			delete(s.alive, a.Member)
			s.pending = true
		}
		s.checkSafe()
	}
}

// checkSafe: no unit and no key group has two owners among the running
// instances.
func (s *sim) checkSafe() {
	s.t.Helper()
	owner := map[string]string{}
	kgOwner := map[[2]int]string{} // (stage, key group)
	for name, m := range s.alive {
		for _, u := range m.Owned() {
			if o, ok := owner[u]; ok {
				s.fail("unit %s owned by %s and %s", u, o, name)
			}
			owner[u] = name
			unit, ok := s.l.Unit(u)
			if !ok {
				s.fail("%s owns unknown unit %s", name, u)
			}
			if unit.HasKeyGroups {
				for kg := unit.KeyGroups.Start; kg <= unit.KeyGroups.End; kg++ {
					k := [2]int{unit.Stage, kg}
					if o, ok := kgOwner[k]; ok {
						s.fail("stage %d key group %d owned by %s and %s", unit.Stage, kg, o, name)
					}
					kgOwner[k] = name
				}
			}
		}
	}
}

func (s *sim) join() string {
	name := instanceName(s.next)
	s.next++
	m, acts := NewMember(name)
	s.alive[name] = m
	s.logf("start %s", name)
	s.do(acts)
	return name
}

func (s *sim) names() []string {
	var out []string
	for n := range s.alive {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (s *sim) stop(name string) {
	s.logf("stop %s", name)
	s.do(s.alive[name].Step(Event{Kind: Stop}))
}

// kill: the process dies at once; the group notices at expire.
func (s *sim) kill(name string) {
	s.logf("kill -9 %s", name)
	delete(s.alive, name)
}

// expire: the sessions of dead members time out.
func (s *sim) expire() {
	for n := range s.group {
		if s.alive[n] == nil {
			s.logf("session of %s expired", n)
			delete(s.group, n)
			s.pending = true
		}
	}
}

func (s *sim) checkpoint() {
	s.cp++
	for _, m := range s.alive {
		for _, u := range m.Owned() {
			s.committed[u] = s.cp
		}
	}
	s.logf("checkpoint %d completed", s.cp)
}

// rebalance runs one rebalance if one is due; dead members do not rejoin,
// so the coordinator drops them.
func (s *sim) rebalance() {
	if !s.pending {
		return
	}
	s.pending = false
	var members []*Member
	for _, n := range s.names() {
		if s.group[n] {
			members = append(members, s.alive[n])
		}
	}
	for n := range s.group {
		if s.alive[n] == nil {
			delete(s.group, n) // did not rejoin within the rebalance timeout
		}
	}
	s.gen++
	s.logf("rebalance, generation %d, %d members", s.gen, len(members))
	cps := map[string]int64{}
	for u, c := range s.committed {
		cps[u] = c
	}
	acts, _ := Rebalance(s.stages, members, s.gen, cps)
	s.do(acts)
}

// settle runs rebalances until none is due and returns how many ran.
func (s *sim) settle() int {
	n := 0
	for s.pending {
		s.rebalance()
		n++
		if n > 5 {
			s.fail("no settled assignment after %d rebalances", n)
		}
	}
	return n
}

func (s *sim) owners() map[string]string {
	o := map[string]string{}
	for n, m := range s.alive {
		for _, u := range m.Owned() {
			o[u] = n
		}
	}
	return o
}

// checkSettled: every unit has exactly one owner and each stage's units
// are spread evenly (counts differ by at most one).
func (s *sim) checkSettled() {
	s.t.Helper()
	if len(s.alive) == 0 {
		return
	}
	o := s.owners()
	for si, units := range s.stages {
		count := map[string]int{}
		for _, u := range units {
			if o[u] == "" {
				s.fail("settled, but unit %s has no owner", u)
			}
			count[o[u]]++
		}
		lo, hi := len(units), 0
		for _, n := range s.names() {
			lo, hi = min(lo, count[n]), max(hi, count[n])
		}
		if hi-lo > 1 {
			s.fail("settled, but stage %d is spread %d..%d units per instance", si, lo, hi)
		}
	}
}

// TestRandomMembership: random sequences of joins, graceful stops,
// kill -9s, session expiries, checkpoints and rebalances, interleaved
// without waiting for the group to settle: no unit or key group ever has
// two owners, restores name the last completed checkpoint, and once the
// group settles every unit has exactly one owner, evenly spread.
func TestRandomMembership(t *testing.T) {
	l := layout(t, planFile(t, "parallelism-change"), Config{MaxPartitions: 16})
	for seed := uint64(1); seed <= 200; seed++ {
		s := newSim(t, l)
		r := rand.New(rand.NewPCG(seed, 28))
		s.join()
		for step := 0; step < 60; step++ {
			names := s.names()
			switch x := r.IntN(10); {
			case x < 2 && len(names) < 20:
				s.join()
			case x < 3 && len(names) > 0:
				s.stop(names[r.IntN(len(names))])
			case x < 4 && len(names) > 0:
				s.kill(names[r.IntN(len(names))])
			case x < 5:
				s.expire()
			case x < 6:
				s.checkpoint()
			default:
				s.rebalance()
			}
		}
		s.expire()
		if len(s.alive) == 0 {
			s.join()
		}
		s.settle()
		s.checkSettled()
	}
}

// TestStickyMoves: from a settled group, one change moves only what it
// must. A join moves units only to the newcomer, and only its share; a
// stop or a kill moves only the departed instance's units. At most two
// rebalances settle it (the cooperative protocol's revoke, then assign).
func TestStickyMoves(t *testing.T) {
	l := layout(t, planFile(t, "parallelism-change"), Config{MaxPartitions: 32})
	for seed := uint64(1); seed <= 60; seed++ {
		s := newSim(t, l)
		r := rand.New(rand.NewPCG(seed, 29))
		for i := 0; i < 3; i++ {
			s.join()
		}
		s.settle()
		for step := 0; step < 12; step++ {
			before := s.owners()
			names := s.names()
			var gone, came string
			switch x := r.IntN(3); {
			case x == 0 || len(names) == 1:
				came = s.join()
			case x == 1:
				gone = names[r.IntN(len(names))]
				s.stop(gone)
			default:
				gone = names[r.IntN(len(names))]
				s.kill(gone)
				s.expire()
			}
			if n := s.settle(); n > 2 {
				s.fail("%d rebalances to settle one change", n)
			}
			s.checkSettled()
			after := s.owners()
			for u, was := range before {
				now := after[u]
				if now == was {
					continue
				}
				if gone != "" && was != gone {
					s.fail("%s left, but unit %s moved from %s to %s", gone, u, was, now)
				}
				if came != "" && now != came {
					s.fail("%s joined, but unit %s moved from %s to %s", came, u, was, now)
				}
			}
		}
	}
}

// TestMovesAgainstFlinkRanges: on 128 units of one key group each, the
// key groups a join or a leave moves, sticky against Flink's ranges
// (instance i of n owning KeyGroupRange(128, n, i), as a Flink rescale
// from a savepoint redistributes them). The figures are RATIONALE.md's.
func TestMovesAgainstFlinkRanges(t *testing.T) {
	l := layout(t, planBody(t, `operators:
  - { id: a, source: { type: generator, preset: sequence, count: 10 }, parallelism: 1 }
  - { id: k, key-by: id, sum: id, parallelism: 1 }
`), Config{})
	flink := func(a, b int) int {
		moved := 0
		for kg := 0; kg < 128; kg++ {
			if kg*a/128 != kg*b/128 {
				moved++
			}
		}
		return moved
	}
	for _, c := range []struct{ from, to, sticky, flink int }{
		{2, 3, 42, 63}, {3, 4, 32, 65}, {4, 5, 25, 62}, {4, 3, 32, 65}, {3, 2, 43, 63},
	} {
		s := newSim(t, l)
		for i := 0; i < c.from; i++ {
			s.join()
		}
		s.settle()
		before := s.owners()
		if c.to > c.from {
			s.join()
		} else {
			s.stop(s.names()[c.from-1])
		}
		s.settle()
		moved := 0
		for u, o := range s.owners() {
			if un, _ := l.Unit(u); un.Stage == 1 && before[u] != o {
				moved++
			}
		}
		if moved != c.sticky || flink(c.from, c.to) != c.flink {
			t.Errorf("%d -> %d instances: sticky moves %d key groups, Flink's ranges %d; want %d and %d",
				c.from, c.to, moved, flink(c.from, c.to), c.sticky, c.flink)
		}
	}
}
