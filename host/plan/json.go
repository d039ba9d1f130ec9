package plan

import (
	"io"

	"github.com/sluicehq/sluice/host/jsonout"
)

// jsonPlan is the --format json document; its keys are a contract.
type jsonPlan struct {
	Name          string         `json:"name"`
	Mode          string         `json:"mode"`
	RequiredSlots int            `json:"required_slots"`
	Operators     []jsonOperator `json:"operators"`
	Tasks         []jsonTask     `json:"tasks"`
	Edges         []jsonEdge     `json:"edges"`
	// Grants: plugin -> its grants (clock, random); absent when none.
	Grants map[string][]string `json:"grants,omitempty"`
}

type jsonOperator struct {
	ID               string `json:"id"`
	Kind             string `json:"kind"`
	Parallelism      int    `json:"parallelism"`
	MaxParallelism   int    `json:"max_parallelism"`
	SlotSharingGroup string `json:"slot_sharing_group"`
	Task             int    `json:"task"`
	// Grants of the operator's plugin; absent when none.
	Grants []string `json:"grants,omitempty"`
	// Window: the operator's window (window.go); absent when none.
	Window *jsonWindow `json:"window,omitempty"`
	// Watermarks is a source's watermark strategy; absent when none was
	// written (no watermarks).
	Watermarks *jsonWatermarks `json:"watermarks,omitempty"`
	// State is a keyed operator's state backend; absent for others.
	State *jsonState `json:"state,omitempty"`
}

type jsonState struct {
	Backend   string `json:"backend"`
	DiskQuota int64  `json:"disk_quota_bytes,omitempty"`
	// Note says why the backend differs from the one asked for.
	Note string `json:"note,omitempty"`
}

func stateJSON(op *Operator) *jsonState {
	if op.State.Backend == "" {
		return nil
	}
	return &jsonState{Backend: op.State.Backend, DiskQuota: op.State.DiskQuota, Note: op.State.Note}
}

type jsonWatermarks struct {
	Strategy          string `json:"strategy"`
	MaxOutOfOrderness int64  `json:"max_out_of_orderness_ms"`
	Interval          int64  `json:"interval_ms"`
	Idleness          int64  `json:"idleness_ms,omitempty"`
	TimestampField    string `json:"timestamp_field,omitempty"`
	TimestampFormat   string `json:"timestamp_format,omitempty"`
}

func watermarksJSON(g *JobGraph, op *Operator) *jsonWatermarks {
	if g.Pipeline == nil {
		return nil
	}
	w := g.Pipeline.WatermarksOf(op.Spec)
	if w == nil {
		return nil
	}
	j := &jsonWatermarks{Strategy: w.Kind, MaxOutOfOrderness: w.Bound(), Interval: w.Interval.Milliseconds(), Idleness: w.Idleness.Milliseconds()}
	if w.Field != "" {
		j.TimestampField, j.TimestampFormat = w.Field, w.Format
	}
	return j
}

type jsonTask struct {
	ID               int      `json:"id"`
	Name             string   `json:"name"`
	Operators        []string `json:"operators"`
	Parallelism      int      `json:"parallelism"`
	SlotSharingGroup string   `json:"slot_sharing_group"`
}

type jsonEdge struct {
	From         string `json:"from"`
	To           string `json:"to"`
	ShipStrategy string `json:"ship_strategy"`
	Chained      bool   `json:"chained"`
	Reason       string `json:"reason"`
	// Blocking: a BLOCKING result partition (batch mode, not chained).
	Blocking bool `json:"blocking,omitempty"`
}

// WriteJSON prints the plan as one indented JSON document: name, mode,
// required_slots, operators, tasks (a task's id is its index, which an
// operator's task refers to) and every edge, chained or not.
func WriteJSON(w io.Writer, g *JobGraph) error {
	doc := jsonPlan{
		Name:          g.Name,
		Mode:          string(g.Mode),
		RequiredSlots: g.RequiredSlots,
		Operators:     make([]jsonOperator, 0, len(g.Operators)),
		Tasks:         make([]jsonTask, 0, len(g.Tasks)),
		Edges:         make([]jsonEdge, 0, len(g.Edges)),
		Grants:        g.Grants(),
	}
	for _, op := range g.Operators {
		doc.Operators = append(doc.Operators, jsonOperator{op.ID, string(op.Kind), op.Parallelism,
			op.MaxParallelism, op.SlotSharingGroup, op.Task, operatorGrants(g, op), windowJSON(op), watermarksJSON(g, op), stateJSON(op)})
	}
	for _, t := range g.Tasks {
		doc.Tasks = append(doc.Tasks, jsonTask{t.Index, t.Name, t.Operators, t.Parallelism, t.SlotSharingGroup})
	}
	for _, e := range g.Edges {
		doc.Edges = append(doc.Edges, jsonEdge{e.From, e.To, e.ShipStrategy, e.Chained, e.Reason, e.Blocking})
	}
	return jsonout.NewEncoder(w).Encode(doc)
}
