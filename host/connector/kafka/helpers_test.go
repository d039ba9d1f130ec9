package kafka

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
)

// testTimeout bounds a test that waits for a state, so that a bug fails
// it instead of hanging; no assertion depends on it.
const testTimeout = 60 * time.Second

func startCluster(t *testing.T, brokers int, topics map[string]int32) *kafkatest.Cluster {
	t.Helper()
	c, err := kafkatest.Start(brokers, topics)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// rec is a record as a test compares it.
type rec struct {
	Time  int64
	Key   string // JSON of the key; "" for none
	Value string // JSON of the value
}

// collector keeps what a source emits. after, when set, runs at the end
// of each Emit, once the batch is received: where the engine's collector
// injects a barrier (runtime's sourceOut snapshots the source inside Emit,
// after handing the batch on), so a snapshot there must cover the batch.
type collector struct {
	mu      sync.Mutex
	recs    []rec
	after   func(n int) // n: records received so far, this batch's included
	changed chan struct{}
}

func newCollector() *collector { return &collector{changed: make(chan struct{}, 1)} }

func (c *collector) Emit(port int, buf []byte, count int) error {
	if port != 0 {
		return fmt.Errorf("emit on port %d", port)
	}
	rd := abi.NewReader(buf, count)
	var got []rec
	for rd.Next() {
		r := rd.Record()
		v, err := codec.MsgpackToJSON(nil, r.Value)
		if err != nil {
			return err
		}
		x := rec{Time: r.Time, Value: string(v)}
		if r.Key != nil {
			k, _ := codec.MsgpackToJSON(nil, r.Key)
			x.Key = string(k)
		}
		got = append(got, x)
	}
	if err := rd.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.recs = append(c.recs, got...)
	after, n := c.after, len(c.recs)
	c.mu.Unlock()
	if after != nil {
		after(n)
	}
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

func (c *collector) records() []rec {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]rec(nil), c.recs...)
}

// waitFor waits until ok holds of the records received, or ctx ends.
func (c *collector) waitFor(ctx context.Context, ok func([]rec) bool) error {
	for {
		if ok(c.records()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting: %w (have %d records)", ctx.Err(), len(c.records()))
		case <-c.changed:
		}
	}
}

// jsonRecords are n records of topic with values {"n": i} for i from
// first, spread over partitions partitions (i mod partitions), keyed "k<i>"
// and stamped at millisecond 1000+i.
func jsonRecords(topic string, first, n int, partitions int32) []*kgo.Record {
	var rs []*kgo.Record
	for i := first; i < first+n; i++ {
		rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Key: []byte(fmt.Sprintf("k%d", i)),
			Value: []byte(fmt.Sprintf(`{"n":%d}`, i)), Timestamp: time.UnixMilli(int64(1000 + i))})
	}
	return rs
}

// runSource runs s until it ends and returns Run's error.
func runSource(ctx context.Context, s *Source, out *collector) error {
	if err := s.Open(nil); err != nil {
		return err
	}
	defer s.Close()
	return s.Run(ctx, out)
}
