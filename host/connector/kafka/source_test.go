package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/runtime"
)

func sourceConfig(c interface{ Addrs() []string }, topics ...string) SourceConfig {
	return SourceConfig{Operator: "in", Connection: Connection{Brokers: c.Addrs()}, Topics: topics}
}

func values(rs []rec) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Value)
	}
	sort.Strings(out)
	return out
}

func wantValues(first, n int) []string {
	var out []string
	for i := first; i < first+n; i++ {
		out = append(out, fmt.Sprintf(`{"n":%d}`, i))
	}
	sort.Strings(out)
	return out
}

func sameStrings(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// TestSourceBoundedAssignment: two subtasks of a bounded source read every
// record once between them, each exactly the partitions Flink's
// getSplitOwner gives it, with the Kafka timestamp as event time, the key
// and the headers.
func TestSourceBoundedAssignment(t *testing.T) {
	ctx := testContext(t)
	c := startCluster(t, 1, map[string]int32{"orders": 6})
	rs := jsonRecords("orders", 0, 60, 6)
	rs[0].Headers = []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}, {Key: "bin", Value: []byte{0xff}}}
	if err := c.Produce(ctx, true, rs...); err != nil {
		t.Fatal(err)
	}
	var all []rec
	for sub := 0; sub < 2; sub++ {
		cfg := sourceConfig(c, "orders")
		cfg.Bounded, cfg.KeyFormat, cfg.HeadersField = true, FormatRaw, "headers"
		s, err := NewSource(cfg, sub, 2)
		if err != nil {
			t.Fatal(err)
		}
		out := newCollector()
		if err := runSource(ctx, s, out); err != nil {
			t.Fatal(err)
		}
		got := out.records()
		for _, r := range got {
			var n int
			fmt.Sscanf(r.Value, `{"n":%d`, &n)
			if owner := SplitOwner("orders", int32(n%6), 2); owner != sub {
				t.Errorf("subtask %d read record %d of partition %d, which Flink gives to subtask %d", sub, n, n%6, owner)
			}
			if r.Time != int64(1000+n) || r.Key != fmt.Sprintf(`"k%d"`, n) {
				t.Errorf("record %d: time %d key %s", n, r.Time, r.Key)
			}
		}
		m := s.Metrics()
		if m.Records != int64(len(got)) || len(m.Partitions) != 3 {
			t.Errorf("subtask %d metrics: %+v", sub, m)
		}
		for _, p := range m.Partitions {
			if p.CurrentOffset != 9 || p.RecordsLag != 0 {
				t.Errorf("subtask %d partition %d: current offset %d lag %d, want 9 and 0", sub, p.Partition, p.CurrentOffset, p.RecordsLag)
			}
		}
		all = append(all, got...)
	}
	if len(all) != 60 {
		t.Fatalf("read %d records, want 60", len(all))
	}
	var plain []rec
	for _, r := range all {
		if strings.HasPrefix(r.Value, `{"n":0,`) {
			if !strings.HasPrefix(r.Value, `{"n":0,"headers":[{"key":"trace","value":"abc"},{"key":"bin","value":`) {
				t.Errorf("headers: %s", r.Value)
			}
			continue
		}
		r.Value = strings.Replace(r.Value, `,"headers":[]}`, "}", 1) // no headers
		plain = append(plain, r)
	}
	if got := values(plain); !sameStrings(got, wantValues(1, 59)) {
		t.Errorf("records differ:\n%v", got)
	}
}

// TestSourceRestore: a checkpoint taken where the engine takes it, inside
// Emit once the batch was handed on, holds the positions past that batch
// and every one before it; a source restored from it, at another
// parallelism, reads exactly the records after them.
func TestSourceRestore(t *testing.T) {
	ctx := testContext(t)
	c := startCluster(t, 1, map[string]int32{"t": 3})
	if err := c.Produce(ctx, true, jsonRecords("t", 0, 3000, 3)...); err != nil {
		t.Fatal(err)
	}
	cfg := sourceConfig(c, "t")
	cfg.GroupID = "g"
	s, err := NewSource(cfg, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := newCollector()
	var union [][]byte
	var before int
	var once sync.Once
	snapped := make(chan struct{})
	out.after = func(n int) {
		if n >= 1000 {
			once.Do(func() {
				_, union, err = s.SnapshotState(1)
				before = n
				close(snapped)
			})
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- runSource(rctx, s, out) }()
	select {
	case <-snapped:
	case <-ctx.Done():
		t.Fatal("no snapshot")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := s.NotifyCheckpointComplete(1); err != nil {
		t.Fatal(err)
	}
	m := s.Metrics()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
	if len(union) != 3 {
		t.Fatalf("snapshot holds %d positions, want 3", len(union))
	}
	seen := out.records()[:before]

	// the group has the checkpoint's offsets, for monitoring
	adm, _ := c.Client()
	defer adm.Close()
	offs, err := kadm.NewClient(adm).FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	var committed int64
	offs.Each(func(o kadm.OffsetResponse) { committed += o.At })
	if committed != int64(before) {
		t.Errorf("group offsets sum to %d, want the %d records before the checkpoint", committed, before)
	}
	for _, p := range m.Partitions {
		if p.CommittedOffset < 0 {
			t.Errorf("partition %d: committedOffset metric not set after the commit", p.Partition)
		}
	}

	// restored at parallelism 2, with start: latest (the checkpoint wins)
	var rest []rec
	for sub := 0; sub < 2; sub++ {
		cfg := sourceConfig(c, "t")
		cfg.Bounded, cfg.Start = true, StartLatest
		s2, err := NewSource(cfg, sub, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := s2.RestoreState(checkpoint.Restore{Union: union}); err != nil {
			t.Fatal(err)
		}
		o2 := newCollector()
		if err := runSource(ctx, s2, o2); err != nil {
			t.Fatal(err)
		}
		rest = append(rest, o2.records()...)
	}
	if len(seen)+len(rest) != 3000 {
		t.Fatalf("%d before the checkpoint + %d after the restore, want 3000", len(seen), len(rest))
	}
	if got := values(append(seen, rest...)); !sameStrings(got, wantValues(0, 3000)) {
		t.Fatal("the records before the checkpoint and after the restore are not each record once")
	}
}

// TestSourceStartModes: latest skips what is there, committed starts at
// the group's offsets (with a fallback where it has none), timestamp at
// the first record at or after it.
func TestSourceStartModes(t *testing.T) {
	ctx := testContext(t)
	c := startCluster(t, 1, map[string]int32{"t": 2})
	if err := c.Produce(ctx, true, jsonRecords("t", 0, 20, 2)...); err != nil {
		t.Fatal(err)
	}
	cl, _ := c.Client()
	defer cl.Close()
	// group g committed partition 0 at 4; it has nothing for partition 1
	if _, err := kadm.NewClient(cl).CommitOffsets(ctx, "g", kadm.Offsets{"t": {0: {Topic: "t", Partition: 0, At: 4, LeaderEpoch: -1}}}); err != nil {
		t.Fatal(err)
	}
	read := func(cfg SourceConfig) ([]string, error) {
		cfg.Bounded = true
		s, err := NewSource(cfg, 0, 1)
		if err != nil {
			return nil, err
		}
		out := newCollector()
		err = runSource(ctx, s, out)
		return values(out.records()), err
	}
	cfg := sourceConfig(c, "t")
	cfg.Start = StartLatest
	if got, err := read(cfg); err != nil || len(got) != 0 {
		t.Errorf("latest: %v %v", got, err)
	}
	cfg = sourceConfig(c, "t")
	cfg.Start, cfg.GroupID, cfg.CommittedFallback = StartCommitted, "g", FallbackEarliest
	got, err := read(cfg)
	// partition 0 holds 0,2,...,18 at offsets 0..9: from offset 4 that is 8..18; partition 1 all
	if err != nil || len(got) != 6+10 {
		t.Errorf("committed with fallback earliest: %d records %v", len(got), err)
	}
	cfg.CommittedFallback = FallbackNone
	if _, err := read(cfg); err == nil || !strings.Contains(err.Error(), `group "g" has no committed offset for topic "t" partition 1`) {
		t.Errorf("committed without fallback: %v", err)
	}
	cfg = sourceConfig(c, "t")
	cfg.Start, cfg.StartTimestamp = StartTimestamp, 1015
	if got, err := read(cfg); err != nil || !sameStrings(got, wantValues(15, 5)) {
		t.Errorf("timestamp: %v %v", got, err)
	}
}

// TestSourceDiscovery: partitions added while the source runs are found
// and read from their start.
func TestSourceDiscovery(t *testing.T) {
	ctx := testContext(t)
	c := startCluster(t, 1, map[string]int32{"t": 1})
	cfg := sourceConfig(c, "t")
	cfg.DiscoveryInterval = 20 * time.Millisecond
	s, err := NewSource(cfg, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := newCollector()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runSource(rctx, s, out) }()
	if err := c.Produce(ctx, true, jsonRecords("t", 0, 5, 1)...); err != nil {
		t.Fatal(err)
	}
	if err := out.waitFor(ctx, func(r []rec) bool { return len(r) >= 5 }); err != nil {
		t.Fatal(err)
	}
	cl, _ := c.Client()
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreatePartitions(ctx, 2, "t"); err != nil {
		t.Fatal(err)
	}
	// records on the new partitions 1 and 2, written before the source
	// finds them: it reads them from the start
	var rs []*kgo.Record
	for i := 5; i < 11; i++ {
		rs = append(rs, &kgo.Record{Topic: "t", Partition: int32(1 + i%2), Value: []byte(fmt.Sprintf(`{"n":%d}`, i))})
	}
	if err := c.Produce(ctx, true, rs...); err != nil {
		t.Fatal(err)
	}
	if err := out.waitFor(ctx, func(r []rec) bool { return len(r) >= 11 }); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if got := values(out.records()); !sameStrings(got, wantValues(0, 11)) {
		t.Errorf("read %v", got)
	}
	if n := len(s.Metrics().Partitions); n != 3 {
		t.Errorf("reads %d partitions, want 3", n)
	}
}

// TestSourceRejects: a record that does not decode goes through the
// operator's on-error with its topic, partition and offset; without one
// it fails the source.
func TestSourceRejects(t *testing.T) {
	ctx := testContext(t)
	c := startCluster(t, 1, map[string]int32{"t": 1})
	rs := jsonRecords("t", 0, 3, 1)
	rs[1].Value = []byte(`{"n":`)
	if err := c.Produce(ctx, true, rs...); err != nil {
		t.Fatal(err)
	}
	cfg := sourceConfig(c, "t")
	cfg.Bounded = true
	s, _ := NewSource(cfg, 0, 1)
	var failures []*runtime.RecordFailure
	if err := s.Open(&runtime.OpenContext{Reject: func(f *runtime.RecordFailure) error { failures = append(failures, f); return nil }}); err != nil {
		t.Fatal(err)
	}
	out := newCollector()
	if err := s.Run(ctx, out); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if len(out.records()) != 2 || len(failures) != 1 {
		t.Fatalf("%d records, %d rejected; want 2 and 1", len(out.records()), len(failures))
	}
	f := failures[0]
	if f.Input != "kafka topic t partition 0 offset 1" || string(f.Raw) != `{"n":` || !strings.Contains(f.Cause, "malformed JSON") {
		t.Errorf("dead letter: input %q raw %q cause %q", f.Input, f.Raw, f.Cause)
	}
	if s.Metrics().Rejected != 1 {
		t.Errorf("rejected metric %d", s.Metrics().Rejected)
	}

	s, _ = NewSource(cfg, 0, 1)
	err := runSource(ctx, s, newCollector())
	var de *DecodeError
	if !errors.As(err, &de) || de.Offset != 1 || !strings.Contains(err.Error(), `source "in": kafka topic t partition 0 offset 1: malformed JSON`) {
		t.Errorf("without on-error: %v", err)
	}
}

// TestSourceTopicPattern reads the topics a pattern matches, whole names only.
func TestSourceTopicPattern(t *testing.T) {
	ctx := testContext(t)
	c := startCluster(t, 1, map[string]int32{"ev-a": 1, "ev-b": 1, "xev-c": 1})
	for _, tp := range []string{"ev-a", "ev-b", "xev-c"} {
		if err := c.Produce(ctx, true, jsonRecords(tp, 0, 2, 1)...); err != nil {
			t.Fatal(err)
		}
	}
	cfg := sourceConfig(c)
	cfg.TopicPattern, cfg.Bounded = "ev-.*", true
	s, _ := NewSource(cfg, 0, 1)
	out := newCollector()
	if err := runSource(ctx, s, out); err != nil {
		t.Fatal(err)
	}
	if n := len(out.records()); n != 4 {
		t.Errorf("read %d records, want the 4 of ev-a and ev-b", n)
	}
}

// TestRecordsLagBeforeAFetch: a partition's records-lag is its end offset
// minus the source's position from the moment it is assigned (listed
// then), not -1 until a fetch returns it: an empty partition, whose
// fetches return nothing, reports 0, and one assigned but not yet fetched
// reports every record it holds.
func TestRecordsLagBeforeAFetch(t *testing.T) {
	ctx := testContext(t)
	c := startCluster(t, 1, map[string]int32{"lag": 2})
	if err := c.Produce(ctx, true, jsonRecords("lag", 0, 10, 1)...); err != nil { // all in partition 0
		t.Fatal(err)
	}
	s, err := NewSource(sourceConfig(c, "lag"), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.discover(ctx); err != nil { // assigned, nothing fetched yet
		t.Fatal(err)
	}
	lags := func() []int64 {
		var out []int64
		for _, p := range s.Metrics().Partitions {
			out = append(out, p.RecordsLag)
		}
		return out
	}
	if got := lags(); len(got) != 2 || got[0] != 10 || got[1] != 0 {
		t.Fatalf("records-lag before a fetch %v, want [10 0]", got)
	}
	rctx, cancel := context.WithCancel(ctx)
	out := newCollector()
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx, out) }()
	if err := out.waitFor(ctx, func(rs []rec) bool { return len(rs) == 10 }); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if got := lags(); len(got) != 2 || got[0] != 0 || got[1] != 0 {
		t.Fatalf("records-lag after reading partition 0 (partition 1 empty, never in a fetch) %v, want [0 0]", got)
	}
}

// splitCollector is a runtime.SplitCollector that records what a source
// does with its splits.
type splitCollector struct {
	*collector
	events []string // "add t-0", "emit t-0 3", "release t-0"
}

func (c *splitCollector) AddSplit(id string)     { c.events = append(c.events, "add "+id) }
func (c *splitCollector) ReleaseSplit(id string) { c.events = append(c.events, "release "+id) }
func (c *splitCollector) EmitSplit(id string, port int, buf []byte, count int) error {
	before := len(c.records())
	if err := c.collector.Emit(port, buf, count); err != nil {
		return err
	}
	c.events = append(c.events, fmt.Sprintf("emit %s %d", id, count))
	for _, r := range c.records()[before:] { // jsonRecords: record n is in partition n mod partitions
		var n int
		fmt.Sscanf(r.Value, `{"n":%d`, &n)
		if want := fmt.Sprintf("s-%d", n%2); want != id {
			c.events = append(c.events, fmt.Sprintf("record %d of %s in a batch of %s", n, want, id))
		}
	}
	return nil
}

// TestSourceEmitsPerSplit: under a collector that takes splits (the
// engine's, with a watermark strategy) the source registers each
// partition it is assigned (an empty one of a bounded source, done at
// once, is not), hands on each batch with its partition's records only,
// and releases a partition of a bounded source once it reached its end,
// so per-partition watermarks can be generated, as Flink's KafkaSource
// does.
func TestSourceEmitsPerSplit(t *testing.T) {
	ctx := testContext(t)
	c := startCluster(t, 1, map[string]int32{"s": 3})
	if err := c.Produce(ctx, true, jsonRecords("s", 0, 10, 2)...); err != nil { // partitions 0 and 1; 2 is empty
		t.Fatal(err)
	}
	cfg := sourceConfig(c, "s")
	cfg.Bounded = true
	s, err := NewSource(cfg, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := &splitCollector{collector: newCollector()}
	if err := s.Open(nil); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Run(ctx, out); err != nil {
		t.Fatal(err)
	}
	if len(out.records()) != 10 {
		t.Fatalf("%d records", len(out.records()))
	}
	emitted := map[string]int{}
	added, released := map[string]bool{}, map[string]bool{}
	for _, e := range out.events {
		var id string
		var n int
		switch {
		case strings.HasPrefix(e, "add "):
			added[e[4:]] = true
		case strings.HasPrefix(e, "release "):
			released[e[8:]] = true
		case strings.HasPrefix(e, "record "):
			t.Error(e)
		default:
			fmt.Sscanf(e, "emit %s %d", &id, &n)
			if !added[id] || released[id] {
				t.Errorf("%s: not between its add and its release (%v)", e, out.events)
			}
			emitted[id] += n
		}
	}
	if fmt.Sprint(added) != "map[s-0:true s-1:true]" || fmt.Sprint(released) != "map[s-0:true s-1:true]" || fmt.Sprint(emitted) != "map[s-0:5 s-1:5]" {
		t.Errorf("added %v, released %v, emitted %v: events %v", added, released, emitted, out.events)
	}
}
