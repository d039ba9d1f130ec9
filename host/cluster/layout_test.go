package cluster

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/partition"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestCrosses: every redistributing strategy crosses instances, the
// pointwise ones (FORWARD, RESCALE) stay inside one.
func TestCrosses(t *testing.T) {
	want := map[string]bool{"FORWARD": false, "RESCALE": false, "HASH": true, "REBALANCE": true,
		"SHUFFLE": true, "BROADCAST": true, "GLOBAL": true, "CUSTOM": true}
	for _, name := range partition.Names() {
		w, ok := want[name]
		if !ok {
			t.Fatalf("strategy %s has no expectation", name)
		}
		if got := Crosses(name); got != w {
			t.Errorf("Crosses(%s) = %v, want %v", name, got, w)
		}
	}
}

func TestLayoutQuickstart(t *testing.T) {
	l := layout(t, planFile(t, "quickstart"), Config{Brokers: []string{"k1:9092", "k2:9092"}})
	if l.Group != "sluice.quickstart" || l.TransactionalIDPrefix != "sluice.quickstart" || l.Restore != "checkpoint" {
		t.Errorf("group %q, txn prefix %q, restore %q", l.Group, l.TransactionalIDPrefix, l.Restore)
	}
	var crossing []Edge
	for _, e := range l.Edges {
		if e.Crosses {
			crossing = append(crossing, e)
		} else if e.ShipStrategy != "FORWARD" || e.Topic != "" {
			t.Errorf("edge %s->%s %s stays but has topic %q", e.From, e.To, e.ShipStrategy, e.Topic)
		}
	}
	if len(crossing) != 1 {
		t.Fatalf("crossing edges %+v, want enriched -> totals only", crossing)
	}
	e := crossing[0]
	if e.From != "enriched" || e.To != "totals" || e.Topic != "sluice.quickstart.enriched.totals" || e.Partitions != 128 || !e.Assigned {
		t.Errorf("crossing edge %+v", e)
	}
	if len(l.Stages) != 2 || strings.Join(l.Stages[0].Operators, ",") != "txns,valid,enriched" ||
		strings.Join(l.Stages[1].Operators, ",") != "totals,out" {
		t.Fatalf("stages %+v %+v", l.Stages[0], l.Stages[1])
	}
	s0, s1 := l.Stages[0], l.Stages[1]
	if s0.UnitKind != "subtask" || len(s0.Units) != 2 || s1.UnitKind != "partition" || len(s1.Units) != 128 ||
		s1.Keyed != "totals" || s1.MaxParallelism != 128 {
		t.Errorf("stage 0 %s x%d, stage 1 %s x%d keyed %q maxP %d", s0.UnitKind, len(s0.Units), s1.UnitKind, len(s1.Units), s1.Keyed, s1.MaxParallelism)
	}
	for p, u := range s1.Units { // one key group per partition by default
		if !u.HasKeyGroups || u.KeyGroups.Start != p || u.KeyGroups.End != p {
			t.Errorf("unit %d key groups %+v", p, u.KeyGroups)
		}
	}
}

// TestHashRecordPartition: under any partition cap, partition p holds
// Flink's KeyGroupRange(maxP, P, p), the ranges cover every key group
// once, and a HASH record goes to the partition whose range holds its
// key group (KeyGroupRangeAssignment: kg*P/maxP).
func TestHashRecordPartition(t *testing.T) {
	g := planFile(t, "quickstart")
	for _, cap := range []int{0, 1, 5, 8, 100, 128, 1000} {
		l := layout(t, g, Config{MaxPartitions: cap})
		s := l.Stages[1]
		P := len(s.Units)
		if want := min(max(cap, 0), 128); cap == 0 && P != 128 || cap > 0 && P != want {
			t.Fatalf("cap %d: %d partitions", cap, P)
		}
		next := 0
		for p, u := range s.Units {
			if u.KeyGroups.Start != next || u.KeyGroups.End < u.KeyGroups.Start {
				t.Fatalf("cap %d: partition %d key groups %+v, want to start at %d", cap, p, u.KeyGroups, next)
			}
			next = u.KeyGroups.End + 1
		}
		if next != 128 {
			t.Fatalf("cap %d: ranges end at %d, want 128", cap, next)
		}
		for _, h := range partition.SampleKeyHashes(2000) {
			kg := partition.KeyGroup(h, 128)
			p := partition.OperatorIndexForKeyGroup(128, P, kg)
			if r := s.Units[p].KeyGroups; kg < r.Start || kg > r.End {
				t.Fatalf("cap %d: key hash %d, key group %d goes to partition %d holding %+v", cap, h, kg, p, r)
			}
		}
	}
	// Flink's vectors (KeyGroupRangeAssignmentTest): maxP 128 over 3.
	l := layout(t, g, Config{MaxPartitions: 3})
	var got []string
	for _, u := range l.Stages[1].Units {
		got = append(got, kgText(u.KeyGroups))
	}
	if strings.Join(got, " ") != "[0-42] [43-85] [86-127]" {
		t.Errorf("3 partitions over 128 key groups: %v", got)
	}
}

func TestLayoutStrategies(t *testing.T) {
	for _, c := range []struct {
		file, from, to string
		partitions     int
		assigned       bool
		stage          string // unit kind of the downstream stage
	}{
		{"broadcast", "rules", "out", 1, false, "subtask"},
		{"global", "numbers", "out", 1, true, "partition"},
		{"custom-partitioner", "txns", "by-country", 4, true, "partition"},
		{"shuffle", "", "", 128, true, "partition"},
		{"rebalance", "", "", 128, true, "partition"},
		// a topic into a stage with a source: one partition per subtask of its reader
		{"connect", "limits", "checked", 2, true, "subtask"},
	} {
		l := layout(t, planFile(t, c.file), Config{})
		found := false
		for _, e := range l.Edges {
			if !e.Crosses || c.from != "" && (e.From != c.from || e.To != c.to) {
				continue
			}
			found = true
			if e.Partitions != c.partitions || e.Assigned != c.assigned || l.Stages[e.Stage].UnitKind != c.stage {
				t.Errorf("%s: %s->%s %s: %d partitions assigned %v stage %s, want %d %v %s", c.file, e.From, e.To,
					e.ShipStrategy, e.Partitions, e.Assigned, l.Stages[e.Stage].UnitKind, c.partitions, c.assigned, c.stage)
			}
		}
		if !found {
			t.Errorf("%s: no crossing edge", c.file)
		}
	}
	l := layout(t, planFile(t, "broadcast"), Config{})
	if s := l.Stages[1]; strings.Join(s.Broadcast, ",") != "sluice.broadcast.rules.out" || len(s.Units) != 3 {
		t.Errorf("broadcast stage %+v", s)
	}
}

// TestTwoInputsFromOneOperator: both inputs of a co-operator from the
// same operator get topics of their own.
func TestTwoInputsFromOneOperator(t *testing.T) {
	l := layout(t, planBody(t, `plugins:
  comap: { path: comap.wasm }
operators:
  - { id: a, source: { type: generator, preset: sequence, count: 10 }, parallelism: 2 }
  - { id: j, connect: [a, a], co-map: comap, parallelism: 3 }
  - { id: out, sink: { type: discard }, parallelism: 3 }
`), Config{})
	var topics []string
	for _, e := range l.Edges {
		if e.Crosses {
			topics = append(topics, e.Topic)
		}
	}
	if strings.Join(topics, " ") != "sluice.t.a.j sluice.t.a.j.in.1" {
		t.Errorf("topics %v", topics)
	}
}

func TestLayoutRefused(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"batch", "runs in batch mode: across instances only streaming jobs are planned"},
	} {
		_, err := Plan(planFile(t, c.file), Config{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "cluster: job "+c.file) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
	_, err := Plan(planBody(t, `operators:
  - { id: a, source: { type: generator, preset: sequence, count: 10 }, parallelism: 2 }
  - { id: k, input: [a], key-by: id, sum: id, parallelism: 2 }
  - { id: b, source: { type: generator, preset: sequence, count: 10 }, parallelism: 2 }
  - { id: u, input: [k, b], sink: { type: discard }, parallelism: 2 }
`), Config{})
	if want := "keyed operator 'k' runs in one instance-local stage (b, k, u) with source 'b'"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("keyed with a source: %v, want %q", err, want)
	}
	if _, err := Plan(planFile(t, "quickstart"), Config{MaxPartitions: -1}); err == nil {
		t.Error("negative max partitions accepted")
	}
}

// TestConfigsGolden lays every example pipeline out on a cluster and
// compares the text (with a sample of 3 instances) and JSON with
// testdata/configs/NAME.golden; a pipeline refused says why.
func TestConfigsGolden(t *testing.T) {
	files, err := filepath.Glob("../../configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			l, err := Plan(planFile(t, name), Config{Brokers: []string{"127.0.0.1:9092"}})
			if err != nil {
				b.WriteString("refused: " + err.Error() + "\n")
			} else {
				if err := WriteText(&b, l, 3); err != nil {
					t.Fatal(err)
				}
				b.WriteString("\n---- json\n")
				if err := WriteJSON(&b, l, 3); err != nil {
					t.Fatal(err)
				}
			}
			golden(t, filepath.Join("testdata", "configs", name+".golden"), b.Bytes())
		})
	}
}

func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("layout differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", file, got, want)
	}
}

func TestTopicNames(t *testing.T) {
	for _, c := range []struct {
		from, side, to string
		input          int
		want           string
	}{
		{"a", "", "b", 0, "sluice.j.a.b"},
		{"a-b", "", "c", 0, "sluice.j.a-b.c"}, // not sluice.j.a.b-c's name: ids hold no '.'
		{"a", "", "b-c", 0, "sluice.j.a.b-c"},
		{"hot", "alerts", "out", 0, "sluice.j.hot.out.side.alerts"},
		{"a", "late", "j", 1, "sluice.j.a.j.side.late.in.1"},
	} {
		if got := Topic("j", c.from, c.side, c.to, c.input); got != c.want {
			t.Errorf("Topic(%s, %q, %s, %d) = %s, want %s", c.from, c.side, c.to, c.input, got, c.want)
		}
	}
}

// TestSubtaskUnits: a stage fed by sources has one unit per group of
// subtasks its pointwise edges connect (Flink's connectPointwise pairs).
func TestSubtaskUnits(t *testing.T) {
	l := layout(t, planFile(t, "rescale"), Config{}) // numbers (2) RESCALE out (4)
	s := l.Stages[0]
	if len(l.Stages) != 1 || s.UnitKind != "subtask" || len(s.Units) != 2 {
		t.Fatalf("stages %+v", l.Stages)
	}
	want := []map[string][]int{{"numbers": {0}, "out": {0, 1}}, {"numbers": {1}, "out": {2, 3}}}
	for i, u := range s.Units {
		if !reflect.DeepEqual(u.Subtasks, want[i]) {
			t.Errorf("unit %d runs %v, want %v", i, u.Subtasks, want[i])
		}
	}
	l = layout(t, planBody(t, `operators:
  - { id: a, source: { type: generator, preset: sequence, count: 10 }, parallelism: 6 }
  - { id: b, partition: rescale, sink: { type: discard }, parallelism: 4 }
`), Config{})
	// 6 -> 4: upstream i feeds ((i+1)*4-1)/6: 0 -> 0; 1, 2 -> 1; 3 -> 2; 4, 5 -> 3
	want = []map[string][]int{{"a": {0}, "b": {0}}, {"a": {1, 2}, "b": {1}}, {"a": {3}, "b": {2}}, {"a": {4, 5}, "b": {3}}}
	for i, u := range l.Stages[0].Units {
		if !reflect.DeepEqual(u.Subtasks, want[i]) {
			t.Errorf("6 -> 4: unit %d runs %v, want %v", i, u.Subtasks, want[i])
		}
	}
	l = layout(t, planFile(t, "quickstart"), Config{})
	for i, u := range l.Stages[0].Units {
		if w := map[string][]int{"txns": {i}, "valid": {i}, "enriched": {i}}; !reflect.DeepEqual(u.Subtasks, w) {
			t.Errorf("quickstart unit %d runs %v, want %v", i, u.Subtasks, w)
		}
	}
}
