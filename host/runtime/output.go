package runtime

import (
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/partition"
)

// route is how an edgeOut places records.
type route uint8

const (
	routeOne       route = iota // every record to the one connected channel (FORWARD, GLOBAL, pointwise with one target, n = 1)
	routeAll                    // every record to every channel (BROADCAST)
	routePerRecord              // the partitioner picks a channel per record (REBALANCE, RESCALE, SHUFFLE)
	routeHash                   // read the key, write it into the envelope, pick by key group (HASH)
	routeCustom                 // a user partitioner picks a channel per record, a batch at a time (CUSTOM)
)

// edgeOut is the output of one upstream subtask into one non-chained edge:
// it routes each record to a downstream channel and batches per channel. It
// is a target of its operator's collector, called by the subtask goroutine;
// the linger flusher also takes mu to send batches that wait too long.
type edgeOut struct {
	mu       sync.Mutex
	edge     *plan.Edge
	subtask  int // upstream subtask
	parallel int // upstream parallelism
	route    route
	chans    []*channel // by downstream subtask; nil where not connected
	one      *channel   // routeOne
	part     partition.Partitioner
	keys     *keyReader        // routeHash, routeCustom
	custom   *partition.Custom // routeCustom
	user     CustomPartitioner // routeCustom: the plugin instance
	hot      *hotKeys          // routeHash, routeCustom

	batchSize, batchBytes int
	done                  <-chan struct{}
	blocked               *counter // the subtask's back-pressured time
	ended                 bool

	// keyless: a record whose key cannot be read goes on without a key
	// (to channel routed mod n) for the downstream built-in aggregation
	// to apply its on-error, instead of failing here.
	keyless bool
	// spans: the downstream operator is a built-in aggregation, which
	// takes the records of a batch split (see batch.spans)
	spans bool
	// seenKeys: channels a custom partitioner gave recent keys
	seenKeys *keyChannels

	routed  int64 // records routed, for error positions
	chanIdx []int32
	rekeyed abi.Writer
	canon   []byte                  // abi.CanonicalKey's buffer
	memo    *[hashMemoSize]hashMemo // routeHash
}

// hashMemo remembers the channel of a key hash: HASH's channel is a pure
// function of the hash (Flink's murmur mix, then the key group's owner),
// and a stream repeats its keys: a hit costs a load and a compare instead
// of the mix's chain of dependent multiplications.
type hashMemo struct{ hash, channel int32 }

const hashMemoBits = 12
const hashMemoSize = 1 << hashMemoBits

// newHashMemo starts every entry as hash 0 and its channel, a true pair
// wherever it sits, so a lookup needs no test for an empty entry.
func newHashMemo(p partition.Partitioner) *[hashMemoSize]hashMemo {
	m := new([hashMemoSize]hashMemo)
	zero := hashMemo{hash: 0, channel: int32(p.Channel(0))}
	for i := range m {
		m[i] = zero
	}
	return m
}

// hashMemoSlot is where the channel of key hash h is remembered.
func hashMemoSlot(h int32) int { return int(uint32(h) * 0x9e3779b1 >> (32 - hashMemoBits)) } // Fibonacci hashing

// memoMiss computes and remembers the channel of h in m.
func (o *edgeOut) memoMiss(m *hashMemo, h int32) {
	*m = hashMemo{hash: h, channel: int32(o.part.Channel(h))}
}

// emit routes count records of b. It is the edge's collector target.
// ends, when not nil, are where the records end (see EndsCollector).
func (o *edgeOut) emit(b []byte, count int, ends []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch o.route {
	case routeOne:
		return o.appendBatch(o.one, b, count)
	case routeAll:
		for _, c := range o.chans {
			if err := o.appendBatch(c, b, count); err != nil {
				return err
			}
		}
		return nil
	case routePerRecord:
		for off := 0; off < len(b); {
			end, err := abi.Skip(b, off)
			if err != nil {
				return o.recordErr(err)
			}
			if err := o.appendRecord(o.chans[o.part.Channel(0)], b[off:end]); err != nil {
				return err
			}
			o.routed++
			off = end
		}
		return nil
	case routeHash:
		return o.emitHash(b, count, ends)
	}
	return o.emitCustom(b, count)
}

func (o *edgeOut) emitHash(b []byte, count int, ends []byte) error {
	if err := o.keys.load(b, count); err != nil {
		return o.keyErr(err)
	}
	memo := o.memo
	one := len(o.chans) == 1 // one subtask owns every key group: no hash to compute
	rd := abi.NewReader(b, count)
	if ends != nil {
		rd = abi.NewReaderEnds(b, count, ends) // each record's head only
	}
	for rd.Next() {
		r := rd.Current()
		key, err := o.keys.next(r.Value)
		if err != nil {
			if o.keyless {
				if err := o.appendKeyless(r); err != nil {
					return err
				}
				continue
			}
			return o.keyErr(fmt.Errorf("record %d: %w: %s", o.routed+1, err, preview(r.Value)))
		}
		// one encoding per Java key: keyed state finds cells by bytes
		key, o.canon = abi.CanonicalKey(o.canon, key)
		ch := 0
		if !one || !hashable(key) {
			h, err := abi.KeyHash(key)
			if err != nil {
				if o.keyless {
					if err := o.appendKeyless(r); err != nil {
						return err
					}
					continue
				}
				return o.keyErr(fmt.Errorf("record %d: key %s: %w: %s", o.routed+1, preview(key), err, preview(r.Value)))
			}
			m := &memo[hashMemoSlot(h)] // o.part.Channel(h), memoised
			if m.hash != h {
				o.memoMiss(m, h)
			}
			ch = int(m.channel)
		}
		o.hot.observe(key)
		c := o.chans[ch]
		if c.cur == nil {
			if err := c.acquire(o.done, o.blocked); err != nil {
				return err
			}
		}
		cur := c.cur
		cur.data = abi.AppendEnvelope(cur.data, r.Time, r.HasTime, key, r.Value)
		cur.count++
		if o.spans {
			cur.addSpan(len(key), len(r.Value))
		}
		if cur.count >= o.batchSize || len(cur.data) >= o.batchBytes {
			if err := c.flush(o.done); err != nil {
				return err
			}
		}
		o.routed++
	}
	if err := rd.Err(); err != nil {
		return o.recordErr(err)
	}
	return nil
}

// emitCustom sets each record's key to the partitioning field, asks the
// user partitioner for the channels of the whole batch, checks them, then
// sends the records (unchanged: a custom partitioning does not key the
// stream). A record whose key cannot be read fails the edge after the
// records before it went on, as a key-by edge's do.
func (o *edgeOut) emitCustom(b []byte, count int) error {
	o.rekeyed.Reset()
	rd := abi.NewReader(b, count)
	n := 0 // records keyed, in o.rekeyed
	var fail error
	for rd.Next() {
		r := rd.Current()
		key, err := o.keys.next(r.Value)
		if err != nil {
			fail = o.keyErr(fmt.Errorf("record %d: %w: %s", o.routed+int64(n)+1, err, preview(r.Value)))
			break
		}
		o.rekeyed.AppendRecordWithKey(*r, key)
		n++
	}
	if err := o.routeCustom(b, n); err != nil {
		return err
	}
	if fail != nil {
		return fail
	}
	if err := rd.Err(); err != nil {
		return o.recordErr(err)
	}
	return nil
}

// routeCustom sends the first n records of b on the channels the user
// partitioner gives them (their keys are in o.rekeyed).
func (o *edgeOut) routeCustom(b []byte, n int) error {
	if n == 0 {
		return nil
	}
	if cap(o.chanIdx) < n {
		o.chanIdx = make([]int32, n)
	}
	if err := o.custom.Partition(o.rekeyed.Buf, n, o.chanIdx[:n]); err != nil {
		return o.customErr(err)
	}
	if err := o.checkChannels(n); err != nil {
		return err
	}
	keys := abi.NewReader(o.rekeyed.Buf, n)
	off := 0
	for i := 0; i < n; i++ {
		end, err := abi.Skip(b, off)
		if err != nil {
			return o.recordErr(err)
		}
		if keys.Next() {
			o.hot.observeAt(keys.Current().Key, int(o.chanIdx[i]))
		}
		if err := o.appendRecord(o.chans[o.chanIdx[i]], b[off:end]); err != nil {
			return err
		}
		o.routed++
		off = end
	}
	return nil
}

// appendKeyless sends r on without a key (see keyless).
func (o *edgeOut) appendKeyless(r *abi.Record) error {
	c := o.chans[int(o.routed%int64(len(o.chans)))]
	o.rekeyed.Reset()
	o.rekeyed.Append(r.Time, r.HasTime, nil, r.Value)
	o.routed++
	return o.appendRecord(c, o.rekeyed.Buf)
}

// appendRecord appends one raw envelope to c, cutting the batch when full.
func (o *edgeOut) appendRecord(c *channel, env []byte) error {
	if c.cur == nil {
		if err := c.acquire(o.done, o.blocked); err != nil {
			return err
		}
	}
	cur := c.cur
	cur.data = append(cur.data, env...)
	cur.count++
	if cur.count >= o.batchSize || len(cur.data) >= o.batchBytes {
		return c.flush(o.done)
	}
	return nil
}

// appendBatch appends a whole batch to c without splitting it into
// records: a one-target edge forwards bytes.
func (o *edgeOut) appendBatch(c *channel, b []byte, count int) error {
	if count == 0 {
		return nil
	}
	if cur := c.cur; cur != nil && (cur.count+count > o.batchSize || len(cur.data)+len(b) > o.batchBytes) {
		if err := c.flush(o.done); err != nil {
			return err
		}
	}
	if c.cur == nil {
		if err := c.acquire(o.done, o.blocked); err != nil {
			return err
		}
	}
	cur := c.cur
	cur.data = append(cur.data, b...)
	cur.count += count
	o.routed += int64(count)
	if cur.count >= o.batchSize || len(cur.data) >= o.batchBytes {
		return c.flush(o.done)
	}
	return nil
}

// flushPending sends every pending batch (the linger timer).
func (o *edgeOut) flushPending() error {
	for _, c := range o.chans {
		if c != nil {
			if err := c.flush(o.done); err != nil {
				return err
			}
		}
	}
	return nil
}

// end sends what is pending then the end of every channel, once.
func (o *edgeOut) end() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended {
		return nil
	}
	o.ended = true
	for _, c := range o.chans {
		if c != nil {
			if err := c.end(o.done); err != nil {
				return err
			}
		}
	}
	return nil
}

// sendControl sends what is pending then m (a barrier or a cancel
// marker) on every channel, unless the output ended.
func (o *edgeOut) sendControl(m message) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended {
		return nil
	}
	for _, c := range o.chans {
		if c != nil {
			if err := c.control(m, o.done); err != nil {
				return err
			}
		}
	}
	return nil
}

// close releases the user partitioner and key-selector instances.
func (o *edgeOut) close() error {
	var first error
	if o.user != nil {
		first = o.user.Close()
		o.user = nil
	}
	if err := o.keys.close(); err != nil && first == nil {
		first = err
	}
	return first
}

func (o *edgeOut) recordErr(err error) error {
	return fmt.Errorf("output to %q: record %d: %w", o.edge.To, o.routed+1, err)
}

func (o *edgeOut) keyErr(err error) error {
	what := "key-by"
	if o.route == routeCustom {
		what = "custom partition key"
	}
	return &KeyError{What: what, Key: o.keys.describe(), To: o.edge.To, Err: err}
}

func (o *edgeOut) customErr(err error) error {
	if ce, ok := err.(*partition.ChannelError); ok {
		// recover the record for the message
		rd := abi.NewReader(o.rekeyed.Buf, ce.Count)
		var rec abi.Record
		for i := 0; i <= ce.Record && rd.Next(); i++ {
			rec = rd.Record()
		}
		return fmt.Errorf("custom partitioner plugin %q of %q returned channel %d for record %d (key %s), want [0, %d): %s",
			o.edge.CustomPlugin, o.edge.To, ce.Channel, o.routed+int64(ce.Record)+1, preview(rec.Key), ce.N, preview(rec.Value))
	}
	return fmt.Errorf("custom partitioner plugin %q of %q: %w", o.edge.CustomPlugin, o.edge.To, err)
}
