package kafka

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
	"github.com/sluicehq/sluice/partition"
)

func sinkConfig(c *kafkatest.Cluster, topic string) SinkConfig {
	return SinkConfig{Operator: "out", Connection: Connection{Brokers: c.Addrs()}, Topic: topic}
}

// batch is the abi batch of JSON values, stamped at millisecond 1000+i.
func batch(t *testing.T, first int, values ...string) ([]byte, int) {
	t.Helper()
	var w abi.Writer
	for i, v := range values {
		mp, err := codec.JSONToMsgpack(nil, []byte(v))
		if err != nil {
			t.Fatal(err)
		}
		w.Append(int64(1000+first+i), true, nil, mp)
	}
	return w.Buf, w.Count
}

// numbered is n values {"n": i, "k": "k<i>"} from first.
func numbered(first, n int) []string {
	var vs []string
	for i := first; i < first+n; i++ {
		vs = append(vs, fmt.Sprintf(`{"n":%d,"k":"k%d"}`, i, i))
	}
	return vs
}

func process(t *testing.T, s *Sink, first, n int) {
	t.Helper()
	b, count := batch(t, first, numbered(first, n)...)
	if err := s.Process(0, b, count, nil); err != nil {
		t.Fatal(err)
	}
}

// visible is what a reader of topic sees, as sorted values: only
// committed records when committed is set (read_committed).
func visible(t *testing.T, c *kafkatest.Cluster, topic string, committed bool) []string {
	t.Helper()
	rs, err := c.ReadAll(testContext(t), topic, committed)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Value))
	}
	sort.Strings(out)
	return out
}

func sorted(vs []string) []string {
	vs = append([]string(nil), vs...)
	sort.Strings(vs)
	return vs
}

// crash drops a sink as a killed process would: its connections close,
// and nothing ends its transactions.
func crash(s *Sink) {
	if s.cl != nil {
		s.cl.Close()
	}
	for _, p := range s.pending {
		if p.cl != nil {
			p.cl.Close()
		}
	}
	s.admin.Close()
}

// TestSinkExactlyOnce: a read_committed reader sees a checkpoint's records
// once the checkpoint completes, never before; after a crash, the restore
// commits what the checkpoint pre-committed and aborts the transaction
// that was open, so committed data appears once and aborted data never.
func TestSinkExactlyOnce(t *testing.T) {
	c := startCluster(t, 1, map[string]int32{"out": 2})
	cfg := sinkConfig(c, "out")
	cfg.Delivery, cfg.TransactionalIDPrefix, cfg.KeyField = DeliveryExactlyOnce, "job", "k"
	s, err := NewSink(cfg, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(nil); err != nil {
		t.Fatal(err)
	}
	process(t, s, 0, 10)
	if got := visible(t, c, "out", true); len(got) != 0 {
		t.Fatalf("read_committed sees %d records before any checkpoint", len(got))
	}
	if _, _, err := s.SnapshotState(1); err != nil {
		t.Fatal(err)
	}
	if got := visible(t, c, "out", true); len(got) != 0 {
		t.Fatalf("read_committed sees %d pre-committed records before the checkpoint completes", len(got))
	}
	if err := s.NotifyCheckpointComplete(1); err != nil {
		t.Fatal(err)
	}
	if got := visible(t, c, "out", true); !sameStrings(got, sorted(numbered(0, 10))) {
		t.Fatalf("after checkpoint 1 completed, read_committed sees %v", got)
	}
	process(t, s, 10, 10)
	split2, _, err := s.SnapshotState(2)
	if err != nil {
		t.Fatal(err)
	}
	if s.pending[0].c.TransactionalID != "job-0-2" {
		t.Errorf("checkpoint 2's transaction is %s, want job-0-2 (prefix-subtask-checkpoint)", s.pending[0].c.TransactionalID)
	}
	process(t, s, 20, 10) // in transaction job-0-3, never pre-committed
	if err := s.flush(testContext(t)); err != nil {
		t.Fatal(err)
	}
	crash(s) // before checkpoint 2's notification

	if got := visible(t, c, "out", true); len(got) != 10 {
		t.Fatalf("after the crash read_committed sees %d records, want checkpoint 1's 10", len(got))
	}
	if got := visible(t, c, "out", false); len(got) != 30 {
		t.Fatalf("read_uncommitted sees %d records, want all 30 written (the test can see aborted data)", len(got))
	}

	// restore from checkpoint 2, twice: the second commit of the same
	// transaction is a no-op. The first restore is in the engine's order
	// (Open, then RestoreState: Open must not abort the transactions the
	// checkpoint pre-committed before it has read them), the second in
	// the other.
	for round := 0; round < 2; round++ {
		s2, _ := NewSink(cfg, 0, 1)
		if round == 0 {
			if err := s2.Open(nil); err != nil {
				t.Fatal(err)
			}
			if m := s2.Metrics(); m.Committed != 0 || m.Aborted != 0 {
				t.Fatalf("Open before RestoreState committed %d and aborted %d transactions: it cannot know yet which to keep", m.Committed, m.Aborted)
			}
			if err := s2.RestoreState(checkpoint.Restore{Split: split2}); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := s2.RestoreState(checkpoint.Restore{Split: split2}); err != nil {
				t.Fatal(err)
			}
			if err := s2.Open(nil); err != nil {
				t.Fatal(err)
			}
		}
		if m := s2.Metrics(); m.Committed != 1 {
			t.Errorf("round %d: restore committed %d transactions, want 1", round, m.Committed)
		}
		if round == 0 {
			if m := s2.Metrics(); m.Aborted != 1 {
				t.Errorf("restore aborted %d lingering transactions, want job-0-3", m.Aborted)
			}
			process(t, s2, 30, 10)
			if _, _, err := s2.SnapshotState(3); err != nil {
				t.Fatal(err)
			}
			if err := s2.NotifyCheckpointComplete(3); err != nil {
				t.Fatal(err)
			}
		}
		if err := s2.Close(nil); err != nil {
			t.Fatal(err)
		}
	}
	want := sorted(append(numbered(0, 20), numbered(30, 10)...))
	if got := visible(t, c, "out", true); !sameStrings(got, want) {
		t.Fatalf("read_committed sees %d records, want checkpoints 1, 2 and 3's 30 once each:\n%v", len(got), got)
	}
	for _, v := range visible(t, c, "out", true) {
		if strings.Contains(v, `"n":2`) && len(v) == len(`{"n":20,"k":"k20"}`) {
			t.Errorf("aborted record visible: %s", v)
		}
	}
}

// TestSinkRestoreLowerParallelism: subtask 0 of a restored job at
// parallelism 1 aborts what old subtasks 0 and 1 left open, and commits
// both their committables.
func TestSinkRestoreLowerParallelism(t *testing.T) {
	c := startCluster(t, 1, map[string]int32{"out": 1})
	cfg := sinkConfig(c, "out")
	cfg.Delivery, cfg.TransactionalIDPrefix = DeliveryExactlyOnce, "job"
	var split [][]byte
	for sub := 0; sub < 2; sub++ {
		s, _ := NewSink(cfg, sub, 2)
		if err := s.Open(nil); err != nil {
			t.Fatal(err)
		}
		process(t, s, sub*100, 5)
		st, _, err := s.SnapshotState(1)
		if err != nil {
			t.Fatal(err)
		}
		split = append(split, st...)
		process(t, s, sub*100+50, 5) // left open by the crash
		if err := s.flush(testContext(t)); err != nil {
			t.Fatal(err)
		}
		crash(s)
	}
	s, _ := NewSink(cfg, 0, 1)
	if err := s.RestoreState(checkpoint.Restore{Split: split}); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close(nil)
	if m := s.Metrics(); m.Committed != 2 || m.Aborted != 2 {
		t.Errorf("committed %d, aborted %d; want 2 and 2", m.Committed, m.Aborted)
	}
	want := sorted(append(numbered(0, 5), numbered(100, 5)...))
	if got := visible(t, c, "out", true); !sameStrings(got, want) {
		t.Errorf("read_committed sees %v", got)
	}
}

// TestSinkAtLeastOnceAndPartitioners: at-least-once has everything in
// Kafka once SnapshotState returns; the default partitioner puts a key
// where Kafka's murmur2 does (vectors of Kafka's UtilsTest.testMurmur2),
// the fixed one puts subtask i's records in partition i mod n.
func TestSinkAtLeastOnceAndPartitioners(t *testing.T) {
	c := startCluster(t, 1, map[string]int32{"keyed": 7, "fixed": 2})
	murmur2 := map[string]int32{
		"21": -973932308, "foobar": -790332482, "a-little-bit-long-string": -985981536,
		"a-little-bit-longer-string": -1486304829, "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971, "abc": 479470107,
	}
	cfg := sinkConfig(c, "keyed")
	cfg.Delivery, cfg.KeyField = DeliveryAtLeastOnce, "k"
	s, _ := NewSink(cfg, 0, 1)
	if err := s.Open(nil); err != nil {
		t.Fatal(err)
	}
	var vs []string
	for k := range murmur2 {
		vs = append(vs, fmt.Sprintf(`{"k":%q}`, k))
	}
	b, n := batch(t, 0, vs...)
	if err := s.Process(0, b, n, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SnapshotState(1); err != nil {
		t.Fatal(err)
	}
	rs, err := c.ReadAll(testContext(t), "keyed", false) // no Close yet: the snapshot flushed them
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(murmur2) {
		t.Fatalf("%d records in Kafka after the snapshot, want %d", len(rs), len(murmur2))
	}
	for _, r := range rs {
		h := murmur2[string(r.Key)]
		if want := (h & 0x7fffffff) % 7; r.Partition != want {
			t.Errorf("key %q in partition %d, Kafka's murmur2 says %d", r.Key, r.Partition, want)
		}
		if r.Timestamp.UnixMilli() < 1000 {
			t.Errorf("record timestamp %v, want the event time", r.Timestamp)
		}
	}
	s.Close(newCollector())

	cfg = sinkConfig(c, "fixed")
	cfg.Partitioner = PartitionerFixed
	s, _ = NewSink(cfg, 3, 4)
	if err := s.Open(nil); err != nil {
		t.Fatal(err)
	}
	process(t, s, 0, 20)
	if err := s.Close(newCollector()); err != nil {
		t.Fatal(err)
	}
	rs, err = c.ReadAll(testContext(t), "fixed", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Partition != 1 {
			t.Fatalf("subtask 3 wrote to partition %d, FlinkFixedPartitioner says 3 mod 2 = 1", r.Partition)
		}
	}
	if len(rs) != 20 {
		t.Fatalf("%d records, want 20", len(rs))
	}
}

// TestSinkTopicField writes each record to the topic its field names.
func TestSinkTopicField(t *testing.T) {
	c := startCluster(t, 1, map[string]int32{"a": 1, "b": 1})
	cfg := sinkConfig(c, "")
	cfg.TopicField, cfg.ValueFormat = "to", FormatCSV
	s, _ := NewSink(cfg, 0, 1)
	if err := s.Open(nil); err != nil {
		t.Fatal(err)
	}
	b, n := batch(t, 0, `{"to":"a","x":1}`, `{"to":"b","x":2}`, `{"to":"a","x":3}`)
	if err := s.Process(0, b, n, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(newCollector()); err != nil {
		t.Fatal(err)
	}
	if got := visible(t, c, "a", false); !sameStrings(got, []string{"a,1", "a,3"}) {
		t.Errorf("topic a: %v", got)
	}
	if got := visible(t, c, "b", false); !sameStrings(got, []string{"b,2"}) {
		t.Errorf("topic b: %v", got)
	}
	b, n = batch(t, 0, `{"x":1}`)
	s, _ = NewSink(cfg, 0, 1)
	if err := s.Open(nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close(nil)
	if err := s.Process(0, b, n, nil); err == nil || !strings.Contains(err.Error(), `sink "out" (kafka): the record has no field "to"`) {
		t.Errorf("a record without its topic field: %v", err)
	}
}

// TestSinkKeyGroups writes each keyed record to the partition whose
// key-group range (Flink's KeyGroupRangeAssignment over the partitions)
// holds the key's key group: a cluster's internal topic of a HASH edge.
func TestSinkKeyGroups(t *testing.T) {
	c := startCluster(t, 1, map[string]int32{"kg": 3})
	cfg := sinkConfig(c, "kg")
	cfg.ValueFormat, cfg.Delivery = FormatMsgpack, DeliveryAtLeastOnce
	cfg.KeyGroups = KeyGroupPartitioning{MaxParallelism: 8, Partitions: 3}
	s, err := NewSink(cfg, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(nil); err != nil {
		t.Fatal(err)
	}
	var w abi.Writer
	for i := range 200 {
		k := abi.AppendStr(nil, fmt.Sprintf("k%d", i))
		w.Append(int64(1000+i), true, k, abi.AppendInt(nil, int64(i)))
	}
	if err := s.Process(0, w.Buf, w.Count, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(newCollector()); err != nil {
		t.Fatal(err)
	}
	rs, err := c.ReadAll(testContext(t), "kg", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 200 {
		t.Fatalf("%d records, want 200", len(rs))
	}
	used := map[int32]bool{}
	for _, r := range rs {
		n, err := abi.ReadInt(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := abi.KeyHash(abi.AppendStr(nil, fmt.Sprintf("k%d", n)))
		kg := partition.KeyGroup(h, 8)
		lo, hi := partition.KeyGroupRange(8, 3, int(r.Partition))
		if kg < lo || kg > hi {
			t.Errorf("key k%d (key group %d) in partition %d, which holds key groups %d-%d", n, kg, r.Partition, lo, hi)
		}
		used[r.Partition] = true
	}
	if len(used) != 3 {
		t.Errorf("200 keys went to partitions %v of 3", used)
	}
	cfg.KeyGroups.Partitions = 9
	if _, err := NewSink(cfg, 0, 1); err == nil {
		t.Error("9 partitions of 8 key groups: accepted")
	}
}
