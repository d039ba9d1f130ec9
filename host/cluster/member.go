package cluster

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Member is one instance's view of its units in the job's consumer group:
// a state machine in the manner of etcd's raft. Step takes an event (an
// assignment from a rebalance, a stop, a lost membership) and returns the
// actions the instance must carry out, in order; Member itself does no
// I/O, starts no goroutine and reads no clock. Owned is what the instance
// reports it owns, and what it subscribes with when it rejoins.
type Member struct {
	name       string
	generation int
	owned      map[string]bool
	left       bool
}

// NewMember is the state machine of instance name, which owns nothing
// yet; its first action is to join the group.
func NewMember(name string) (*Member, []Action) {
	m := &Member{name: name, owned: map[string]bool{}}
	return m, []Action{{Kind: Join, Member: name}}
}

// Name is the instance's name (its static group instance id).
func (m *Member) Name() string { return m.name }

// Generation is the group generation of the last assignment taken.
func (m *Member) Generation() int { return m.generation }

// Owned is the units the instance owns, sorted.
func (m *Member) Owned() []string {
	out := make([]string, 0, len(m.owned))
	for u := range m.owned {
		out = append(out, u)
	}
	sortUnits(out)
	return out
}

// Subscription is what the instance joins with: its name and the units
// it owns.
func (m *Member) Subscription() Subscription { return Subscription{Member: m.name, Owned: m.Owned()} }

// EventKind says what happened.
type EventKind int

const (
	// Assigned: a rebalance of generation Generation gave the instance
	// Units (the SyncGroup answer). Checkpoints[u] is the last completed
	// checkpoint unit u's state was committed with (read from the
	// committed offsets' metadata); absent or 0: none, the unit starts
	// empty.
	Assigned EventKind = iota
	// Stop: the instance is stopped gracefully (SIGTERM, host cancel).
	Stop
	// Lost: the group no longer knows the instance (its session timed
	// out, a heartbeat or commit answered UNKNOWN_MEMBER_ID or
	// ILLEGAL_GENERATION): its units may already run elsewhere.
	Lost
)

// Event is one input of Step.
type Event struct {
	Kind        EventKind
	Generation  int
	Units       []string
	Checkpoints map[string]int64
}

// ActionKind says what the instance must do.
type ActionKind int

const (
	// Join the group with Owned (JoinGroup, metadata: the owned units).
	Join ActionKind = iota
	// Revoke Units: finish the running checkpoint with them (commit the
	// Kafka transaction holding their outputs, state and offsets), then
	// stop them and drop their state. Kafka's onPartitionsRevoked.
	Revoke
	// Abandon Units without committing: abort the open transaction and
	// drop their state; their new owner redoes the uncommitted work.
	// Kafka's onPartitionsLost.
	Abandon
	// Restore Units' keyed state (their key groups) from completed
	// checkpoint Checkpoint in shared storage (0: start empty).
	Restore
	// Start Units: read their input partitions from the committed offsets.
	Start
	// Leave the group (LeaveGroup), after the revokes before it.
	Leave
)

var actionNames = [...]string{"join", "revoke", "abandon", "restore", "start", "leave"}

func (k ActionKind) String() string { return actionNames[k] }

// Action is one output of Step.
type Action struct {
	Kind       ActionKind
	Member     string
	Units      []string
	Owned      []string // Join: the units owned when joining
	Checkpoint int64    // Restore
}

func (a Action) String() string {
	switch a.Kind {
	case Join:
		return fmt.Sprintf("%s: join owning %v", a.Member, a.Owned)
	case Restore:
		return fmt.Sprintf("%s: restore %v from checkpoint %d", a.Member, a.Units, a.Checkpoint)
	case Leave:
		return fmt.Sprintf("%s: leave", a.Member)
	}
	return fmt.Sprintf("%s: %s %v", a.Member, a.Kind, a.Units)
}

// Step applies one event and returns the actions, in the order the
// instance must carry them out. Ownership changes as the actions are
// returned: a revoked unit is no longer owned, an assigned one is.
func (m *Member) Step(ev Event) []Action {
	if m.left {
		return nil
	}
	switch ev.Kind {
	case Assigned:
		if ev.Generation <= m.generation {
			return nil // a stale SyncGroup answer
		}
		m.generation = ev.Generation
		want := map[string]bool{}
		for _, u := range ev.Units {
			want[u] = true
		}
		var revoke, add []string
		for _, u := range m.Owned() {
			if !want[u] {
				revoke = append(revoke, u)
			}
		}
		for u := range want {
			if !m.owned[u] {
				add = append(add, u)
			}
		}
		sortUnits(add)
		var acts []Action
		if len(revoke) > 0 {
			for _, u := range revoke {
				delete(m.owned, u)
			}
			acts = append(acts, Action{Kind: Revoke, Member: m.name, Units: revoke})
		}
		if len(add) > 0 {
			for _, u := range add {
				m.owned[u] = true
			}
			acts = append(acts, restores(m.name, add, ev.Checkpoints)...)
			acts = append(acts, Action{Kind: Start, Member: m.name, Units: add})
		}
		if len(revoke) > 0 { // cooperative: rejoin so the revoked units find their owner
			acts = append(acts, Action{Kind: Join, Member: m.name, Owned: m.Owned()})
		}
		return acts
	case Stop:
		m.left = true
		var acts []Action
		if own := m.Owned(); len(own) > 0 {
			m.owned = map[string]bool{}
			acts = append(acts, Action{Kind: Revoke, Member: m.name, Units: own})
		}
		return append(acts, Action{Kind: Leave, Member: m.name})
	case Lost:
		var acts []Action
		if own := m.Owned(); len(own) > 0 {
			m.owned = map[string]bool{}
			acts = append(acts, Action{Kind: Abandon, Member: m.name, Units: own})
		}
		m.generation = 0
		return append(acts, Action{Kind: Join, Member: m.name})
	}
	return nil
}

// restores groups units by the checkpoint they are restored from, oldest
// first.
func restores(member string, units []string, cps map[string]int64) []Action {
	by := map[int64][]string{}
	var ids []int64
	for _, u := range units {
		cp := cps[u]
		if _, ok := by[cp]; !ok {
			ids = append(ids, cp)
		}
		by[cp] = append(by[cp], u)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	acts := make([]Action, 0, len(ids))
	for _, cp := range ids {
		acts = append(acts, Action{Kind: Restore, Member: member, Units: by[cp], Checkpoint: cp})
	}
	return acts
}

// sortUnits sorts unit ids by stage, then index ("s0/2" before "s0/10").
func sortUnits(ids []string) {
	sort.Slice(ids, func(i, j int) bool {
		si, ui := parseUnit(ids[i])
		sj, uj := parseUnit(ids[j])
		if si != sj {
			return si < sj
		}
		if ui != uj {
			return ui < uj
		}
		return ids[i] < ids[j]
	})
}

// parseUnit reads "s<stage>/<index>"; other ids give -1, -1.
func parseUnit(id string) (stage, index int) {
	rest, ok := strings.CutPrefix(id, "s")
	if !ok {
		return -1, -1
	}
	a, b, ok := strings.Cut(rest, "/")
	if !ok {
		return -1, -1
	}
	st, err1 := strconv.Atoi(a)
	ix, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || st < 0 || ix < 0 {
		return -1, -1
	}
	return st, ix
}
