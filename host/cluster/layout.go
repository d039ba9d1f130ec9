package cluster

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/partition"
)

// Config is the cluster a job is planned for.
type Config struct {
	// Brokers are the Kafka brokers of the cluster, as given to
	// --cluster; the planner only records them.
	Brokers []string
	// MaxPartitions caps the partition count of an internal topic that
	// carries a redistributing edge; 0 means no cap: the topic has one
	// partition per key group of its downstream operator (its max
	// parallelism). Under a cap P, partition p holds the key-group range
	// KeyGroupRange(maxP, P, p), so whole key groups map to a partition.
	MaxPartitions int
}

// Layout is a job planned for a cluster.
type Layout struct {
	Job     string
	Brokers []string
	// Group is the consumer group every instance of the job joins:
	// "sluice.<job>". Its assignment decides which instance runs which
	// units.
	Group string
	// TransactionalIDPrefix: unit s<stage>/<unit>'s sink of internal
	// topic edge k writes under "<prefix>-s<stage>-<unit>.out<k>", one
	// Kafka transaction per checkpoint of the unit (host/cluster/unitjob).
	TransactionalIDPrefix string
	// Restore says where a unit's keyed state comes from when it moves:
	// "checkpoint" (RATIONALE.md, "Cluster: restore from checkpoints").
	Restore string
	Edges   []Edge   // every edge of the job graph, in its order
	Stages  []*Stage // connected parts of the graph without crossing edges
}

// Edge is one edge of the job graph and whether it crosses instances.
type Edge struct {
	From, To     string
	SideOutput   string
	ShipStrategy string
	// Crosses: the edge redistributes through an internal topic.
	// FORWARD and RESCALE stay inside an instance (local, pointwise).
	Crosses bool
	Reason  string // why it crosses or stays
	// Topic and Partitions of a crossing edge. A HASH record with key
	// group kg is written to partition OperatorIndexForKeyGroup(maxP,
	// Partitions, kg).
	Topic      string
	Partitions int
	// Assigned: the topic's partitions are handed out by the group (all
	// but BROADCAST, which every owner of a downstream unit reads whole).
	Assigned bool
	Stage    int // the downstream stage
}

// Stage is a part of the job connected by edges that stay inside an
// instance (Kafka Streams' sub-topology). Its units are what the group
// hands out: an instance runs a stage for the units it owns.
type Stage struct {
	Index     int
	Operators []string // in the job graph's order
	// UnitKind is "partition" (unit p reads partition p of every
	// assigned input topic) or "subtask" (a stage fed by sources or
	// broadcast only: a unit is a group of subtasks that its pointwise
	// edges connect, see Unit.Subtasks).
	UnitKind string
	Units    []Unit
	// Keyed is the keyed entry operator whose key groups the units
	// split, "" when none; MaxParallelism is its max parallelism.
	Keyed          string
	MaxParallelism int
	// Broadcast lists the broadcast topics every owner reads in full.
	Broadcast []string
}

// Unit is one unit of work of a stage: Kafka Streams' task, and for a
// keyed stage one contiguous range of whole key groups.
type Unit struct {
	Stage, Index int
	// KeyGroups is the inclusive key-group range of a keyed stage's unit;
	// HasKeyGroups is false for stages without keyed state.
	KeyGroups    plan.KeyGroupRange
	HasKeyGroups bool
	// Subtasks of a "subtask" unit: operator id -> the subtasks the unit
	// runs, a group that pointwise edges connect.
	Subtasks map[string][]int
}

// ID is the unit's name, "s<stage>/<index>".
func (u Unit) ID() string { return fmt.Sprintf("s%d/%d", u.Stage, u.Index) }

// Crosses reports whether an edge of strategy shipStrategy goes between
// instances: every redistributing strategy does; FORWARD and RESCALE,
// pointwise and local, stay inside an instance.
func Crosses(shipStrategy string) bool { return !partition.IsPointwise(shipStrategy) }

var topicChar = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// maxTopicLength is Kafka's limit on a topic name.
const maxTopicLength = 249

// Topic is the internal topic of edge from -> to of job:
// "sluice.<job>.<from>.<to>", then ".side.<tag>" for side output tag and
// ".in.<n>" for input n > 0 of a two-input operator (both inputs may come
// from one operator). Job names, operator ids and tags are
// [A-Za-z0-9_-]: they hold no '.', so the name is unambiguous, and every
// character is legal in a topic name (anything else would become '_').
func Topic(job, from, side, to string, input int) string {
	t := "sluice." + job + "." + from + "." + to
	if side != "" {
		t += ".side." + side
	}
	if input > 0 {
		t += ".in." + strconv.Itoa(input)
	}
	return topicChar.ReplaceAllString(t, "_")
}

// Plan lays g out on the cluster cfg.
func Plan(g *plan.JobGraph, cfg Config) (*Layout, error) {
	if cfg.MaxPartitions < 0 {
		return nil, fmt.Errorf("cluster: max partitions %d: want 0 (one per key group) or more", cfg.MaxPartitions)
	}
	if g.Mode == pipeline.Batch {
		return nil, fmt.Errorf("cluster: job %s runs in batch mode: across instances only streaming jobs are planned (their checkpoints and Kafka transactions carry exactly-once)", g.Name)
	}
	l := &Layout{
		Job:                   g.Name,
		Brokers:               append([]string(nil), cfg.Brokers...),
		Group:                 "sluice." + g.Name,
		TransactionalIDPrefix: "sluice." + g.Name,
		Restore:               "checkpoint",
	}
	byID := map[string]*plan.Operator{}
	for _, op := range g.Operators {
		byID[op.ID] = op
	}
	stageOf := stages(g)
	for _, s := range stageOf.list {
		l.Stages = append(l.Stages, &Stage{Index: len(l.Stages), Operators: s})
	}
	seen := map[string]string{}
	var errs []string
	for _, e := range g.Edges {
		down := byID[e.To]
		le := Edge{From: e.From, To: e.To, SideOutput: e.SideOutput, ShipStrategy: e.ShipStrategy,
			Crosses: Crosses(e.ShipStrategy), Stage: stageOf.index[e.To]}
		if !le.Crosses {
			le.Reason = e.ShipStrategy + " is pointwise: stays inside an instance"
			l.Edges = append(l.Edges, le)
			continue
		}
		if down.Spec != nil && down.Spec.Window != nil && down.Spec.Window.All {
			// Flink's windowAll is forceNonParallel: one subtask sees every
			// record. A stage reading a topic runs one unit per partition,
			// so a window-all there would run many times over.
			errs = append(errs, fmt.Sprintf("edge %s: '%s' is a window-all, which runs as one subtask (Flink's windowAll): it cannot be spread over instances yet; key the stream and use window, or run the job on one instance", plan.EdgeKey(e.From, e.To), e.To))
		}
		le.Topic = Topic(g.Name, e.From, e.SideOutput, e.To, e.InputIndex)
		if other, dup := seen[le.Topic]; dup {
			errs = append(errs, fmt.Sprintf("edges %s and %s would share internal topic %s", other, plan.EdgeKey(e.From, e.To), le.Topic))
		}
		seen[le.Topic] = plan.EdgeKey(e.From, e.To)
		if len(le.Topic) > maxTopicLength {
			errs = append(errs, fmt.Sprintf("edge %s: internal topic name %s is longer than Kafka's %d characters: shorten the job name or operator ids", plan.EdgeKey(e.From, e.To), le.Topic, maxTopicLength))
		}
		le.Assigned = true
		switch e.ShipStrategy {
		case plan.Broadcast:
			le.Partitions, le.Assigned = 1, false
			le.Reason = "read in full by every instance that runs '" + e.To + "'"
		case plan.Global:
			le.Partitions = 1
			le.Reason = "owned by one instance, which runs subtask 0 of '" + e.To + "'"
		case plan.Custom:
			le.Partitions = down.Parallelism
			le.Reason = fmt.Sprintf("partition = the channel the partitioner picks, one per subtask of '%s'", e.To)
		default:
			le.Partitions = partitions(down.MaxParallelism, cfg.MaxPartitions)
			switch e.ShipStrategy {
			case plan.Hash:
				le.Reason = fmt.Sprintf("partition = key group * %d / %d: whole key groups of '%s' per partition", le.Partitions, down.MaxParallelism, e.To)
			case plan.Rebalance:
				le.Reason = "round robin over the partitions from each upstream subtask"
			case plan.Shuffle:
				le.Reason = "a random partition per record"
			}
		}
		l.Edges = append(l.Edges, le)
	}
	for _, s := range l.Stages {
		if msg := l.units(s, byID); msg != "" {
			errs = append(errs, msg)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("cluster: job %s: %s", g.Name, strings.Join(errs, "; "))
	}
	return l, nil
}

// partitions is the partition count of a topic into an operator of max
// parallelism maxP: maxP, at most max when max > 0.
func partitions(maxP, max int) int {
	if max > 0 && max < maxP {
		return max
	}
	return maxP
}

// units gives stage s its units, or says why it cannot be laid out.
func (l *Layout) units(s *Stage, byID map[string]*plan.Operator) string {
	in := map[string]bool{}
	source := ""
	for _, id := range s.Operators {
		in[id] = true
		if source == "" && byID[id].Kind == pipeline.KindSource {
			source = id
		}
	}
	n, from := 0, ""
	for i := range l.Edges {
		e := &l.Edges[i]
		if !e.Crosses || !in[e.To] {
			continue
		}
		if !e.Assigned {
			s.Broadcast = append(s.Broadcast, e.Topic)
			continue
		}
		if source != "" {
			// The stage's units are its source's subtask groups: a topic
			// into it has a partition per subtask of its reader, the
			// channel Flink's partitioner picks, and the unit running
			// subtask j reads partition j.
			if e.ShipStrategy == plan.Hash {
				return fmt.Sprintf("keyed operator '%s' runs in one instance-local stage (%s) with source '%s': give the edges out of '%s' a partition (e.g. rebalance)",
					e.To, strings.Join(s.Operators, ", "), source, source)
			}
			if e.ShipStrategy != plan.Global {
				e.Partitions = byID[e.To].Parallelism
				e.Reason = fmt.Sprintf("%s: one partition per subtask of '%s', which runs with source '%s': partition = the channel %s picks, read by the unit running that subtask",
					e.ShipStrategy, e.To, source, e.ShipStrategy)
			}
			continue
		}
		if n != 0 && e.Partitions != n {
			return fmt.Sprintf("operators %s and %s run together in one instance (FORWARD/RESCALE between them) but their input topics have %d and %d partitions: give the edge between them a partition (e.g. hash)",
				from, e.To, n, e.Partitions)
		}
		n, from = e.Partitions, e.To
		if e.ShipStrategy == plan.Hash {
			op := byID[e.To]
			if s.Keyed != "" && s.Keyed != op.ID && s.MaxParallelism != op.MaxParallelism {
				return fmt.Sprintf("keyed operators %s and %s run together in one instance but have max parallelism %d and %d",
					s.Keyed, op.ID, s.MaxParallelism, op.MaxParallelism)
			}
			s.Keyed, s.MaxParallelism = op.ID, op.MaxParallelism
		}
	}
	sort.Strings(s.Broadcast)
	if n > 0 {
		s.UnitKind = "partition"
		for p := 0; p < n; p++ {
			u := Unit{Stage: s.Index, Index: p}
			if s.Keyed != "" {
				a, b := partition.KeyGroupRange(s.MaxParallelism, n, p)
				u.KeyGroups, u.HasKeyGroups = plan.KeyGroupRange{Start: a, End: b}, true
			}
			s.Units = append(s.Units, u)
		}
		return ""
	}
	// Fed by sources (and topics read per subtask) or broadcast only: a
	// unit is a group of subtasks
	// that pointwise edges (FORWARD i -> i, RESCALE's subsets) connect,
	// Flink's pointwise pairing; with one parallelism throughout, one
	// subtask of each operator.
	s.UnitKind = "subtask"
	for i, group := range l.pointwiseGroups(s, in, byID) {
		s.Units = append(s.Units, Unit{Stage: s.Index, Index: i, Subtasks: group})
	}
	return ""
}

// pointwiseGroups splits the subtasks of stage s into the groups its
// pointwise edges connect, ordered by their lowest subtask of the
// stage's first operator; each group maps operator id to its subtasks.
func (l *Layout) pointwiseGroups(s *Stage, in map[string]bool, byID map[string]*plan.Operator) []map[string][]int {
	type node struct {
		op  string
		sub int
	}
	parent := map[node]node{}
	var find func(node) node
	find = func(x node) node {
		if parent[x] == x {
			return x
		}
		parent[x] = find(parent[x])
		return parent[x]
	}
	union := func(a, b node) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[rb] = ra
		}
	}
	var nodes []node
	for _, id := range s.Operators {
		for i := 0; i < byID[id].Parallelism; i++ {
			n := node{id, i}
			parent[n] = n
			nodes = append(nodes, n)
		}
	}
	for _, e := range l.Edges {
		if e.Crosses || !in[e.From] || !in[e.To] {
			continue
		}
		up, down := byID[e.From].Parallelism, byID[e.To].Parallelism
		for i := 0; i < up; i++ {
			first, end := partition.PointwiseTargets(i, up, down)
			for j := first; j < end; j++ {
				union(node{e.From, i}, node{e.To, j})
			}
		}
	}
	index := map[node]int{}
	var groups []map[string][]int
	for _, n := range nodes { // operators in order, subtasks ascending
		r := find(n)
		g, ok := index[r]
		if !ok {
			g = len(groups)
			index[r] = g
			groups = append(groups, map[string][]int{})
		}
		groups[g][n.op] = append(groups[g][n.op], n.sub)
	}
	return groups
}

type stageIndex struct {
	list  [][]string
	index map[string]int
}

// stages splits g's operators into the connected parts left when the
// crossing edges are cut, numbered by their first operator in g's order.
func stages(g *plan.JobGraph) stageIndex {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if parent[x] == x {
			return x
		}
		parent[x] = find(parent[x])
		return parent[x]
	}
	for _, op := range g.Operators {
		parent[op.ID] = op.ID
	}
	for _, e := range g.Edges {
		if !Crosses(e.ShipStrategy) {
			if a, b := find(e.From), find(e.To); a != b {
				parent[b] = a
			}
		}
	}
	si := stageIndex{index: map[string]int{}}
	root := map[string]int{}
	for _, op := range g.Operators {
		r := find(op.ID)
		i, ok := root[r]
		if !ok {
			i = len(si.list)
			root[r] = i
			si.list = append(si.list, nil)
		}
		si.list[i] = append(si.list[i], op.ID)
		si.index[op.ID] = i
	}
	return si
}
