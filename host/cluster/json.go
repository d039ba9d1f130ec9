package cluster

import (
	"io"

	"github.com/sluicehq/sluice/host/jsonout"
)

// The --cluster --format json document; its keys are a contract.
type jsonLayout struct {
	Job                   string         `json:"job"`
	Brokers               []string       `json:"brokers"`
	Group                 string         `json:"group"`
	TransactionalIDPrefix string         `json:"transactional_id_prefix"`
	Restore               string         `json:"restore"`
	Edges                 []jsonEdge     `json:"edges"`
	Stages                []jsonStage    `json:"stages"`
	Assignment            []jsonInstance `json:"assignment,omitempty"`
}

type jsonEdge struct {
	From         string `json:"from"`
	To           string `json:"to"`
	SideOutput   string `json:"side_output,omitempty"`
	ShipStrategy string `json:"ship_strategy"`
	Crosses      bool   `json:"crosses"`
	Topic        string `json:"topic,omitempty"`
	Partitions   int    `json:"partitions,omitempty"`
	Assigned     bool   `json:"assigned"`
	Stage        int    `json:"stage"`
	Reason       string `json:"reason"`
}

type jsonStage struct {
	Index     int      `json:"index"`
	Operators []string `json:"operators"`
	UnitKind  string   `json:"unit_kind"`
	// Units is the count; unit p of a keyed stage holds key groups
	// KeyGroupRange(max_parallelism, units, p).
	Units          int      `json:"units"`
	Keyed          string   `json:"keyed,omitempty"`
	MaxParallelism int      `json:"max_parallelism,omitempty"`
	Broadcast      []string `json:"broadcast,omitempty"`
}

type jsonInstance struct {
	Instance string      `json:"instance"`
	Stages   []jsonOwned `json:"stages"`
}

// jsonOwned: an instance's units of one stage and their key groups, as
// inclusive [start, end] ranges.
type jsonOwned struct {
	Stage     int      `json:"stage"`
	Units     [][2]int `json:"units"`
	KeyGroups [][2]int `json:"key_groups,omitempty"`
}

// WriteJSON prints the layout as one indented JSON document, with the
// sample assignment of instances fresh instances when instances > 0.
func WriteJSON(w io.Writer, l *Layout, instances int) error {
	doc := jsonLayout{Job: l.Job, Brokers: l.Brokers, Group: l.Group, TransactionalIDPrefix: l.TransactionalIDPrefix,
		Restore: l.Restore, Edges: []jsonEdge{}, Stages: []jsonStage{}}
	for _, e := range l.Edges {
		doc.Edges = append(doc.Edges, jsonEdge{e.From, e.To, e.SideOutput, e.ShipStrategy, e.Crosses, e.Topic, e.Partitions, e.Assigned, e.Stage, e.Reason})
	}
	for _, s := range l.Stages {
		doc.Stages = append(doc.Stages, jsonStage{Index: s.Index, Operators: s.Operators, UnitKind: s.UnitKind, Units: len(s.Units),
			Keyed: s.Keyed, MaxParallelism: s.MaxParallelism, Broadcast: s.Broadcast})
	}
	if instances > 0 {
		names, units := l.Sample(instances)
		for _, n := range names {
			ji := jsonInstance{Instance: n, Stages: []jsonOwned{}}
			for _, st := range l.byStage(units[n]) {
				ji.Stages = append(ji.Stages, jsonOwned{Stage: st.stage, Units: pairs(st.units), KeyGroups: pairs(st.keyGroups)})
			}
			doc.Assignment = append(doc.Assignment, ji)
		}
	}
	return jsonout.NewEncoder(w).Encode(doc)
}

// pairs folds sorted ints into inclusive [start, end] ranges.
func pairs(xs []int) [][2]int {
	var out [][2]int
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		out = append(out, [2]int{xs[i], xs[j]})
		i = j + 1
	}
	return out
}
