package unitjob

import (
	"slices"
	"testing"

	"github.com/sluicehq/sluice/host/cluster"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/connector/kafka"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
)

const keyed = `version: 1
name: cl
parallelism: 2
max-parallelism: 8
operators:
  - id: in
    source: { type: kafka, brokers: "b:9092", topics: [in] }
  - id: top
    key-by: account
    max: amount
  - id: out
    sink: { type: kafka, brokers: "b:9092", topic: out, key-field: account }
`

func layoutOf(t *testing.T, body string) (*pipeline.Pipeline, *plan.JobGraph, *cluster.Layout) {
	t.Helper()
	p, err := pipeline.Parse("t.yaml", []byte(body), pipeline.ParseOptions{Connectors: connector.Set()})
	if err != nil {
		t.Fatal(err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := cluster.Plan(g, cluster.Config{Brokers: []string{"b:9092"}})
	if err != nil {
		t.Fatal(err)
	}
	return p, g, l
}

func ids(ops []*pipeline.Operator) []string {
	var out []string
	for _, op := range ops {
		out = append(out, op.ID)
	}
	return out
}

// TestBuildKeyed builds every unit of a keyed job: the source stage's
// units run source subtask i of 2 and write the internal topic through a
// sink keyed as 'top' is, partitioned by key group; unit p of the keyed
// stage reads exactly partition p of the topic, as its Kafka source's
// subtask of the topic's partition count, and runs 'top' and 'out' as
// subtask p of 8; every unit job plans.
func TestBuildKeyed(t *testing.T) {
	p, g, l := layoutOf(t, keyed)
	topic := l.Edges[0].Topic
	for _, id := range []string{"s0/0", "s0/1"} {
		j, err := Build(p, g, l, id, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(j.Pipeline.Operators); !slices.Equal(got, []string{"in", "cluster-out-0"}) {
			t.Fatalf("unit %s runs %v", id, got)
		}
		if v := j.virtual["in"]; v != [2]int{int(id[3] - '0'), 2} {
			t.Errorf("unit %s runs source 'in' as subtask %v", id, v)
		}
		sink := j.Pipeline.Operators[1]
		if sink.KeyBy == nil || sink.KeyBy != p.Operators[1].KeyBy {
			t.Errorf("unit %s: the internal sink is not keyed as 'top'", id)
		}
		if kg := j.sinks["cluster-out-0"].KeyGroups; kg != (kafka.KeyGroupPartitioning{MaxParallelism: 8, Partitions: 8}) {
			t.Errorf("unit %s: internal sink key groups %+v", id, kg)
		}
		if _, err := plan.Plan(j.Pipeline, plan.Options{}); err != nil {
			t.Errorf("unit %s does not plan: %v", id, err)
		}
	}
	for u := range 8 {
		id := "s1/" + string(rune('0'+u))
		j, err := Build(p, g, l, id, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(j.Pipeline.Operators); !slices.Equal(got, []string{"cluster-in-0", "top", "out"}) {
			t.Fatalf("unit %s runs %v", id, got)
		}
		v := j.virtual["cluster-in-0"]
		var reads []int32
		for part := range int32(8) {
			if kafka.SplitOwner(topic, part, v[1]) == v[0] {
				reads = append(reads, part)
			}
		}
		if !slices.Equal(reads, []int32{int32(u)}) {
			t.Errorf("unit %s reads partitions %v of %s, want [%d]", id, reads, topic, u)
		}
		if j.virtual["out"] != [2]int{u, 8} || j.virtual["top"] != [2]int{u, 8} {
			t.Errorf("unit %s runs top and out as %v %v", id, j.virtual["top"], j.virtual["out"])
		}
		if j.Name != "cl-s1-"+string(rune('0'+u)) {
			t.Errorf("unit %s's checkpoints go to %s", id, j.Name)
		}
		ug, err := plan.Plan(j.Pipeline, plan.Options{})
		if err != nil {
			t.Fatalf("unit %s does not plan: %v", id, err)
		}
		for _, op := range ug.Operators {
			if op.Parallelism != 1 || op.MaxParallelism != 8 {
				t.Errorf("unit %s: %s at parallelism %d, max %d", id, op.ID, op.Parallelism, op.MaxParallelism)
			}
		}
	}
}

// TestBuildExactlyOnce: a job that checkpoints exactly-once writes its
// internal topics in transactions (ids of their own per unit and edge)
// and reads them read_committed.
func TestBuildExactlyOnce(t *testing.T) {
	p, g, l := layoutOf(t, keyed)
	up, err := Build(p, g, l, "s0/1", true)
	if err != nil {
		t.Fatal(err)
	}
	cfg := up.sinks["cluster-out-0"]
	if cfg.Delivery != kafka.DeliveryExactlyOnce || cfg.TransactionalIDPrefix != "sluice.cl-s0-1.out0" {
		t.Errorf("internal sink delivery %s, prefix %q", cfg.Delivery, cfg.TransactionalIDPrefix)
	}
	down, err := Build(p, g, l, "s1/3", true)
	if err != nil {
		t.Fatal(err)
	}
	if iso := down.Pipeline.Operators[0].Source.Options["isolation"]; iso != string(kafka.ReadCommitted) {
		t.Errorf("internal source isolation %v", iso)
	}
	alo, _ := Build(p, g, l, "s1/3", false)
	if _, ok := alo.Pipeline.Operators[0].Source.Options["isolation"]; ok {
		t.Error("at-least-once: the internal source reads read_committed")
	}
}

// TestBuildRefuses: edges it does not run across instances yet.
func TestBuildRefuses(t *testing.T) {
	p, g, l := layoutOf(t, `version: 1
name: cl
parallelism: 2
operators:
  - id: in
    source: { type: kafka, brokers: "b:9092", topics: [in] }
  - id: one
    partition: global
    sink: { type: discard }
`)
	if _, err := Build(p, g, l, "s0/0", false); err == nil {
		t.Error("a GLOBAL edge across instances: built")
	}
	if _, err := Build(p, g, l, "s9/0", false); err == nil {
		t.Error("unit s9/0 of a 2-stage job: built")
	}
}
