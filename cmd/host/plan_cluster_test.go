package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPlanCluster: host plan --cluster prints the plan, then which edges
// cross instances through which topic and a sample assignment.
func TestPlanCluster(t *testing.T) {
	code, out, errs := runHost(t, "plan", "--cluster", "k1:9092, k2:9092", "--instances", "3", "--max-partitions", "8", "configs/quickstart.yaml")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"enriched -> totals  HASH [accountId]  not chained", // the plan comes first
		"cluster (brokers k1:9092,k2:9092): consumer group sluice.quickstart,",
		"  txns -> valid       FORWARD  stays inside an instance\n",
		"  enriched -> totals  HASH     crosses: topic sluice.quickstart.enriched.totals, 8 partitions; partition = key group * 8 / 128: whole key groups of 'totals' per partition\n",
		"  stage 1: totals, out\n    8 units (one per partition of its input topics); keyed 'totals', 128 key groups, unit 0 = key groups [0-15]\n",
		"sample assignment, 3 instances starting together\n",
		"  instance-0: stage 0 units [0]; stage 1 units [3-5] (key groups [48-95])\n",
		"  instance-1: stage 0 units [1]; stage 1 units [6-7] (key groups [96-127])\n",
		"  instance-2: stage 1 units [0-2] (key groups [0-47])\n",
		"host run --cluster BROKERS --instance NAME runs it on several instances: docs/cluster.md",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanClusterJSON(t *testing.T) {
	code, out, errs := runHost(t, "plan", "--format", "json", "--cluster", "k1:9092", "--instances", "2", "configs/quickstart.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Job, Group, Restore string
		Brokers             []string
		Edges               []struct {
			From, To   string
			Crosses    bool
			Topic      string
			Partitions int
		}
		Stages []struct {
			Units          int
			UnitKind       string `json:"unit_kind"`
			Keyed          string
			MaxParallelism int `json:"max_parallelism"`
		}
		Assignment []struct {
			Instance string
			Stages   []struct {
				Stage     int
				Units     [][2]int
				KeyGroups [][2]int `json:"key_groups"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.Job != "quickstart" || doc.Group != "sluice.quickstart" || doc.Restore != "checkpoint" || len(doc.Brokers) != 1 ||
		len(doc.Edges) != 4 || !doc.Edges[2].Crosses || doc.Edges[2].Topic != "sluice.quickstart.enriched.totals" ||
		doc.Edges[2].Partitions != 128 || doc.Edges[0].Crosses {
		t.Errorf("document: %+v", doc)
	}
	if len(doc.Stages) != 2 || doc.Stages[1].Units != 128 || doc.Stages[1].UnitKind != "partition" || doc.Stages[1].Keyed != "totals" {
		t.Errorf("stages: %+v", doc.Stages)
	}
	// two instances split the 128 key groups in two whole halves
	kgs := 0
	for _, in := range doc.Assignment {
		for _, s := range in.Stages {
			for _, r := range s.KeyGroups {
				kgs += r[1] - r[0] + 1
			}
		}
	}
	if len(doc.Assignment) != 2 || kgs != 128 {
		t.Errorf("assignment %+v (%d key groups)", doc.Assignment, kgs)
	}
}

func TestPlanClusterRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--instances", "3", "configs/quickstart.yaml"}, "--instances and --max-partitions need --cluster BROKERS"},
		{[]string{"plan", "--cluster", "k:9092", "--format", "dot", "configs/quickstart.yaml"}, "--cluster prints text or json, not dot"},
		{[]string{"plan", "--cluster", "k:9092", "--instances", "-1", "configs/quickstart.yaml"}, "--instances -1: want 0 to 1000"},
		{[]string{"plan", "--cluster", "k:9092", "configs/batch.yaml"}, "cluster: job batch runs in batch mode"},
	} {
		t.Run(c.want, func(t *testing.T) { // runHost changes directory: one per test
			code, out, errs := runHost(t, c.args...)
			if code != 1 || out != "" || !strings.Contains(errs, c.want) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q, want %q", c.args, code, out, errs, c.want)
			}
		})
	}
}
