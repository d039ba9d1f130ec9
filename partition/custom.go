package partition

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/abi"
)

// BatchPartitioner is a user partitioner (Flink's Partitioner<K>) working
// on a batch: for each of count records of batch (abi wire format, the
// envelope key set to the partitioning key) it writes a channel in [0, n)
// to out[i]. It is host/runtime.CustomPartitioner without Close, declared
// here so that partition does not import the runtime. Values outside
// [0, n) are written as they are: Custom reports them.
type BatchPartitioner interface {
	Partition(batch []byte, count, n int, out []int32) error
}

// BatchPartitionerFunc adapts a function to BatchPartitioner.
type BatchPartitionerFunc func(batch []byte, count, n int, out []int32) error

// Partition calls f.
func (f BatchPartitionerFunc) Partition(batch []byte, count, n int, out []int32) error {
	return f(batch, count, n, out)
}

// KeyFunc is a per-record user partitioner, Flink's
// Partitioner<K>.partition(key, numPartitions): key is the raw msgpack of
// the record's key (nil for a nil key). As a BatchPartitioner it reads the
// keys with abi.Reader; a result outside [0, n) is a *ChannelError.
type KeyFunc func(key []byte, n int) int

// Partition writes f(key, n) for each record of batch to out.
func (f KeyFunc) Partition(batch []byte, count, n int, out []int32) error {
	if len(out) < count {
		return fmt.Errorf("partition: out holds %d channels for %d records", len(out), count)
	}
	rd := abi.NewReader(batch, count)
	for i := 0; rd.Next(); i++ {
		ch := f(rd.Record().Key, n)
		if ch < 0 || ch >= n {
			return &ChannelError{Record: i, Count: count, Channel: int64(ch), N: n}
		}
		out[i] = int32(ch)
	}
	return rd.Err()
}

// ChannelError is a user partitioner's channel outside [0, N): Flink
// refuses it, sluice too, with no silent modulo (flink-semantics.md §2).
type ChannelError struct {
	Record  int   // position of the record in its batch, from 0
	Count   int   // records in the batch
	Channel int64 // the channel returned
	N       int   // number of channels
}

func (e *ChannelError) Error() string {
	return fmt.Sprintf("partition: CUSTOM partitioner returned channel %d for record %d of %d, want [0, %d)",
		e.Channel, e.Record, e.Count, e.N)
}

// Custom is Flink's CustomPartitionerWrapper (flink-semantics.md §2): it
// routes a batch through a user partitioner over all n downstream
// channels and checks every channel it returns. It has a Name but no
// per-record Channel: the user code runs once per batch. Like a
// Partitioner, it belongs to one upstream subtask.
type Custom struct {
	f BatchPartitioner
	n int
}

// NewCustom wraps user partitioner f for an edge with n downstream
// channels (1..32768).
func NewCustom(f BatchPartitioner, n int) (*Custom, error) {
	if f == nil {
		return nil, errors.New("partition: CUSTOM: nil user partitioner")
	}
	if n < 1 || n > MaxParallelismUpperBound {
		return nil, fmt.Errorf("partition: CUSTOM: downstream parallelism %d not within bounds [1, %d]", n, MaxParallelismUpperBound)
	}
	return &Custom{f: f, n: n}, nil
}

// Name is CUSTOM.
func (*Custom) Name() string { return NameCustom }

// N is the number of downstream channels.
func (c *Custom) N() int { return c.n }

// Partition writes the channel of each of count records of batch to
// out[:count]. A channel outside [0, n) is a *ChannelError naming it, n and
// the record's position; an error of the user partitioner is wrapped.
func (c *Custom) Partition(batch []byte, count int, out []int32) error {
	if count < 0 {
		return fmt.Errorf("partition: CUSTOM: negative record count %d", count)
	}
	if len(out) < count {
		return fmt.Errorf("partition: CUSTOM: out holds %d channels for %d records", len(out), count)
	}
	out = out[:count]
	if err := c.f.Partition(batch, count, c.n, out); err != nil {
		var ce *ChannelError
		if errors.As(err, &ce) {
			return err
		}
		return fmt.Errorf("partition: CUSTOM partitioner: %w", err)
	}
	for i, ch := range out {
		if ch < 0 || int(ch) >= c.n {
			return &ChannelError{Record: i, Count: count, Channel: int64(ch), N: c.n}
		}
	}
	return nil
}
