// Package kafkatest starts an in-process Kafka-protocol broker (franz-go's
// kfake) for tests, and for a command that lets a user try the Kafka
// connectors without installing a broker.
package kafkatest

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Cluster is a running kfake cluster.
type Cluster struct {
	*kfake.Cluster
}

// Start starts a cluster of brokers brokers (at least 1) on ports of
// 127.0.0.1 the system picks, with topics made as topics says (topic name
// → partition count) and kfake's options opts.
func Start(brokers int, topics map[string]int32, opts ...kfake.Opt) (*Cluster, error) {
	opts = append([]kfake.Opt{kfake.NumBrokers(max(brokers, 1))}, opts...)
	for t, n := range topics {
		opts = append(opts, kfake.SeedTopics(n, t))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting an in-process Kafka broker: %w", err)
	}
	return &Cluster{c}, nil
}

// Addrs are the brokers' host:port.
func (c *Cluster) Addrs() []string { return c.ListenAddrs() }

// Client returns a franz-go client of the cluster with opts added.
func (c *Cluster) Client(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...)}, opts...)...)
}

// Produce writes records, each to its Topic (and Partition, when
// partition is true: kgo's ManualPartitioner), and waits for them.
func (c *Cluster) Produce(ctx context.Context, partition bool, records ...*kgo.Record) error {
	opts := []kgo.Opt{}
	if partition {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cl, err := c.Client(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	return cl.ProduceSync(ctx, records...).FirstErr()
}

// ReadAll reads topic from its start up to its end offsets at the call
// (committed-only when committed is set: read_committed, up to the last
// stable offsets) and returns its records in partition, then offset order.
func (c *Cluster) ReadAll(ctx context.Context, topic string, committed bool) ([]*kgo.Record, error) {
	return ReadAll(ctx, c.Addrs(), topic, committed)
}

// ReadAll is Cluster.ReadAll for any brokers (a broker another process
// runs, as host dev-kafka).
func ReadAll(ctx context.Context, brokers []string, topic string, committed bool) ([]*kgo.Record, error) {
	// control records (transaction markers) come back too, so that a
	// partition whose last offsets are markers is seen to reach its end
	opts := []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.KeepControlRecords()}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var listed kadm.ListedOffsets
	if committed {
		listed, err = adm.ListCommittedOffsets(ctx, topic)
	} else {
		listed, err = adm.ListEndOffsets(ctx, topic)
	}
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing the end offsets of %s: %w", topic, err)
	}
	ends := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	byPart := map[int32][]*kgo.Record{}
	pos := map[int32]int64{} // where each partition's fetches reached
	for {
		left := false
		for p, e := range ends {
			if pos[p] < e {
				left = true
			}
		}
		if !left {
			break
		}
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading %s: %w (reached %v of end offsets %v)", topic, err, pos, ends)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return nil, errs[0].Err
		}
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			for _, r := range fp.Records {
				if r.Offset < ends[r.Partition] && !r.Attrs.IsControl() {
					byPart[r.Partition] = append(byPart[r.Partition], r)
				}
				pos[fp.Partition] = r.Offset + 1
			}
		})
	}
	var out []*kgo.Record
	for p := int32(0); p < int32(len(ends)); p++ {
		out = append(out, byPart[p]...)
	}
	return out, nil
}
