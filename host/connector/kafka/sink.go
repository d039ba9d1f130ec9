package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/partition"
)

// Committable is an exactly-once sink's pre-committed transaction: what a
// restore needs to commit it without the producer that wrote it (Flink's
// KafkaCommittable).
type Committable struct {
	TransactionalID string `json:"transactional-id"`
	ProducerID      int64  `json:"producer-id"`
	Epoch           int16  `json:"epoch"`
	Checkpoint      uint64 `json:"checkpoint"`
}

// sinkElement is one element of a sink's split state: the writer's state
// (the prefix and the checkpoint) or a committable not committed yet.
type sinkElement struct {
	Prefix      string       `json:"prefix,omitempty"`
	Checkpoint  uint64       `json:"checkpoint,omitempty"`
	Committable *Committable `json:"committable,omitempty"`
}

// TransactionalID is Flink's TransactionalIdFactory.buildTransactionalId:
// prefix-subtask-checkpoint.
func TransactionalID(prefix string, subtask int, checkpoint uint64) string {
	return prefix + "-" + strconv.Itoa(subtask) + "-" + strconv.FormatUint(checkpoint, 10)
}

// parseTransactionalID splits an id TransactionalID made with prefix.
func parseTransactionalID(prefix, id string) (subtask int, checkpoint uint64, ok bool) {
	rest, found := strings.CutPrefix(id, prefix+"-")
	if !found {
		return 0, 0, false
	}
	sub, cp, found := strings.Cut(rest, "-")
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.Atoi(sub)
	c, err2 := strconv.ParseUint(cp, 10, 64)
	return s, c, err1 == nil && err2 == nil && s >= 0
}

type pendingTxn struct {
	cl *kgo.Client // nil after a restore: committed by a raw EndTxn
	c  Committable
}

// Sink is one subtask of a Kafka sink: a runtime.Operator that writes each
// record's value (and key) to Kafka, with the delivery guarantee of its
// config. The engine calls RestoreState after Open when restoring (before
// Open works too), SnapshotState when a checkpoint's barrier reaches it and
// NotifyCheckpointComplete when the checkpoint completes, all from the
// goroutine that calls Process.
//
// Exactly-once, the recovery (commit what the restored checkpoint
// pre-committed, then abort what a crashed run left open) runs once, when
// both the connection and the restored state are there: in RestoreState
// after Open, in Open after RestoreState, and otherwise (a job not
// restored) before the sink first writes, snapshots or closes. Open alone
// cannot do it: it does not know yet which open transactions a checkpoint
// will name, and aborting those would lose their records.
type Sink struct {
	brokerErrs           brokerErrs // the last failed broker connection, for errors
	cfg                  SinkConfig
	subtask, parallelism int
	base                 []kgo.Opt
	reject               func(*runtime.RecordFailure) error
	slabPerByte          float64 // the size of a batch's encoded keys and values per batch byte, last time

	cl         *kgo.Client // the producer; exactly-once: the open transaction's, nil before its first record
	txnID      string
	txnRecords int
	admin      *kgo.Client // raw requests: EndTxn, InitProducerId, ListTransactions
	pending    []pendingTxn
	last       uint64 // the last checkpoint snapshotted (or restored)
	restored   []Committable
	prefixes   []string // restored prefixes, whose lingering transactions are aborted too
	wasRestore bool     // RestoreState was called
	recovered  bool

	errMu   sync.Mutex
	prodErr error

	written atomic.Int64 // Metrics: records acknowledged, counted by the promise
	mu      sync.Mutex   // Metrics
	commits int64
	aborted int64
}

// NewSink returns subtask (0-based) of parallelism of the sink cfg.
func NewSink(cfg SinkConfig, subtask, parallelism int) (*Sink, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("sink %q (kafka): subtask %d of parallelism %d", cfg.Operator, subtask, parallelism)
	}
	return &Sink{cfg: cfg.WithDefaults(), subtask: subtask, parallelism: parallelism}, nil
}

func (s *Sink) errorf(doing string, err error) error {
	return explain("sink", s.cfg.Operator, s.cfg.Brokers, doing, err, &s.brokerErrs)
}

// fixedPartitioner is Flink's FlinkFixedPartitioner: subtask i writes to
// partition i mod the partition count.
type fixedPartitioner struct{ subtask int }

func (f fixedPartitioner) ForTopic(string) kgo.TopicPartitioner { return f }
func (f fixedPartitioner) RequiresConsistency(*kgo.Record) bool { return true }
func (f fixedPartitioner) Partition(_ *kgo.Record, n int) int   { return f.subtask % n }

// Open connects and checks the topic; exactly-once, after RestoreState, it
// also recovers (see Sink).
func (s *Sink) Open(ctx *runtime.OpenContext) error {
	if ctx != nil {
		s.reject = ctx.Reject
	}
	opts, err := s.cfg.clientOpts(&s.brokerErrs)
	if err != nil {
		return fmt.Errorf("sink %q (kafka): %w", s.cfg.Operator, err)
	}
	s.admin, err = kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("sink %q (kafka): %w", s.cfg.Operator, err)
	}
	if s.cfg.KeyGroups.MaxParallelism > 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner())) // record() sets the partition
	} else if s.cfg.Partitioner == PartitionerFixed {
		opts = append(opts, kgo.RecordPartitioner(fixedPartitioner{s.subtask}))
	} else {
		opts = append(opts, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil))) // murmur2 of the key, as Kafka's
	}
	opts = append(opts, kgo.UnknownTopicRetries(2))
	s.base = opts
	octx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout())
	defer cancel()
	if s.cfg.Topic != "" {
		details, err := kadm.NewClient(s.admin).ListTopics(octx, s.cfg.Topic)
		if err != nil {
			return s.errorf("listing topics", err)
		}
		if d, ok := details[s.cfg.Topic]; !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("sink %q (kafka, brokers %s): topic %q does not exist", s.cfg.Operator, joinBrokers(s.cfg.Brokers), s.cfg.Topic)
		} else if d.Err != nil {
			return s.errorf(fmt.Sprintf("reading topic %q", s.cfg.Topic), d.Err)
		}
	}
	if s.cfg.Delivery == DeliveryExactlyOnce {
		if s.wasRestore {
			return s.recover(octx)
		}
		return nil
	}
	s.cl, err = kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("sink %q (kafka): %w", s.cfg.Operator, err)
	}
	return nil
}

// Process writes count records. A record the sink cannot write (no key or
// topic field, a value its format cannot hold) goes through on-error.
//
// The batch's Kafka records are allocated at once: one array of records
// and one slab their keys and values are encoded into, both new for each
// batch (the producer holds them until the brokers acknowledge), and every
// record is handed to the producer without waiting (Produce with a
// promise); SnapshotState and Close flush.
func (s *Sink) Process(_ int, batch []byte, count int, _ runtime.Collector) error {
	if err := s.err(); err != nil {
		return err
	}
	if err := s.ensureRecovered(); err != nil {
		return err
	}
	if count <= 0 {
		return nil
	}
	recs := make([]kgo.Record, count)
	// sized as the last batch's keys and values were per batch byte, so
	// that it seldom grows (a grown slab is copied)
	if s.slabPerByte == 0 {
		s.slabPerByte = 1.5 // JSON text is longer than the msgpack it comes from
	}
	slab := make([]byte, 0, int(float64(len(batch))*s.slabPerByte)+64)
	n := 0
	rd := abi.NewReader(batch, count)
	for rd.Next() && n < len(recs) {
		r := rd.Record()
		kr := &recs[n]
		var err error
		if slab, err = s.record(kr, slab, r); err != nil {
			*kr = kgo.Record{}
			if s.reject == nil {
				return err
			}
			if err := s.reject(&runtime.RecordFailure{Record: append([]byte(nil), r.Raw...), Err: err}); err != nil {
				return err
			}
			continue
		}
		n++
		if err := s.produce(kr); err != nil {
			return err
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("sink %q (kafka): %w", s.cfg.Operator, err)
	}
	if len(batch) > 0 {
		// floored: a batch mostly rejected, or of nil values, must not
		// shrink the next one's slab to nothing (it would grow by copies)
		s.slabPerByte = min(max(1.1*float64(len(slab))/float64(len(batch))+0.01, 1), 16)
	}
	return nil
}

// record fills kr with the Kafka record of r, its key and value encoded
// at the end of slab, and returns slab grown by them.
func (s *Sink) record(kr *kgo.Record, slab []byte, r abi.Record) ([]byte, error) {
	kr.Topic = s.cfg.Topic
	if r.HasTime {
		kr.Timestamp = time.UnixMilli(r.Time)
	}
	field := func(name string) ([]byte, error) {
		v, ok, err := abi.MapField(r.Value, name)
		if err != nil || !ok {
			return nil, fmt.Errorf("sink %q (kafka): the record has no field %q", s.cfg.Operator, name)
		}
		return v, nil
	}
	if f := s.cfg.TopicField; f != "" {
		v, err := field(f)
		if err != nil {
			return slab, err
		}
		t, err := abi.ReadStr(v)
		if err != nil || len(t) == 0 {
			return slab, fmt.Errorf("sink %q (kafka): topic-field %q is not a topic name", s.cfg.Operator, f)
		}
		kr.Topic = string(t)
	}
	var err error
	if f := s.cfg.KeyField; f != "" {
		v, err := field(f)
		if err != nil {
			return slab, err
		}
		if slab, kr.Key, err = appendEncoded(slab, s.cfg.KeyFormat, v); err != nil {
			return slab, fmt.Errorf("sink %q (kafka): key field %q: %w", s.cfg.Operator, f, err)
		}
	}
	if kg := s.cfg.KeyGroups; kg.MaxParallelism > 0 {
		h, err := abi.KeyHash(r.Key)
		if err != nil {
			return slab, fmt.Errorf("sink %q (kafka): the record's key: %w", s.cfg.Operator, err)
		}
		kr.Partition = int32(partition.OperatorIndexForKeyGroup(kg.MaxParallelism, kg.Partitions, partition.KeyGroup(h, kg.MaxParallelism)))
	}
	if slab, kr.Value, err = appendEncoded(slab, s.cfg.ValueFormat, r.Value); err != nil {
		return slab, fmt.Errorf("sink %q (kafka): value: %w", s.cfg.Operator, err)
	}
	return slab, nil
}

// appendEncoded encodes v in format f at the end of slab and returns slab
// grown by it and the encoded bytes (a slice of slab that later appends
// cannot reach). A nil value is nil bytes (a tombstone, or no key); on an
// error slab is as it was.
func appendEncoded(slab []byte, f Format, v []byte) (grown, enc []byte, err error) {
	if abi.IsNil(v) {
		return slab, nil, nil
	}
	start := len(slab)
	out, err := encode(slab, f, v)
	if err != nil {
		return slab[:start], nil, err
	}
	return out, out[start:len(out):len(out)], nil
}

func (s *Sink) produce(kr *kgo.Record) error {
	if s.cfg.Delivery == DeliveryExactlyOnce && s.cl == nil {
		if err := s.beginTxn(); err != nil {
			return err
		}
	}
	s.txnRecords++
	s.cl.Produce(context.Background(), kr, s.promise)
	return nil
}

func (s *Sink) promise(r *kgo.Record, err error) {
	if err == nil {
		s.written.Add(1)
		return
	}
	s.errMu.Lock()
	if s.prodErr == nil {
		s.prodErr = s.errorf(fmt.Sprintf("writing to topic %q", r.Topic), err)
	}
	s.errMu.Unlock()
}

func (s *Sink) err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.prodErr
}

// beginTxn opens the transaction of the records after checkpoint s.last,
// on a producer of its own transactional id.
func (s *Sink) beginTxn() error {
	id := TransactionalID(s.cfg.TransactionalIDPrefix, s.subtask, s.last+1)
	cl, err := kgo.NewClient(append(s.base, kgo.TransactionalID(id), kgo.TransactionTimeout(s.cfg.TransactionTimeout))...)
	if err != nil {
		return fmt.Errorf("sink %q (kafka): %w", s.cfg.Operator, err)
	}
	if err := cl.BeginTransaction(); err != nil {
		cl.Close()
		return s.errorf(fmt.Sprintf("beginning transaction %s", id), err)
	}
	s.cl, s.txnID, s.txnRecords = cl, id, 0
	return nil
}

func (s *Sink) flush(ctx context.Context) error {
	if s.cl == nil {
		return s.err()
	}
	if err := s.cl.Flush(ctx); err != nil {
		return s.errorf("flushing", err)
	}
	return s.err()
}

// SnapshotState flushes (at-least-once, exactly-once) and, exactly-once,
// pre-commits the open transaction. Its split state holds the writer's
// state and every committable not committed yet (the checkpoint's own
// included): a restore commits them. An engine that keeps committables
// apart may move the elements that hold one to Restore.Committables:
// RestoreState reads both.
func (s *Sink) SnapshotState(id checkpoint.ID) (split, union [][]byte, err error) {
	if err := s.ensureRecovered(); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.TransactionTimeout)
	defer cancel()
	switch s.cfg.Delivery {
	case DeliveryAtLeastOnce:
		if err := s.flush(ctx); err != nil {
			return nil, nil, err
		}
	case DeliveryExactlyOnce:
		if s.cl != nil {
			if err := s.flush(ctx); err != nil {
				return nil, nil, err
			}
			pid, epoch, err := s.cl.ProducerID(ctx)
			if err != nil {
				return nil, nil, s.errorf(fmt.Sprintf("pre-committing transaction %s", s.txnID), err)
			}
			s.pending = append(s.pending, pendingTxn{cl: s.cl, c: Committable{TransactionalID: s.txnID, ProducerID: pid, Epoch: epoch, Checkpoint: uint64(id)}})
			s.cl = nil
		}
	default:
		if err := s.err(); err != nil {
			return nil, nil, err
		}
	}
	s.last = uint64(id)
	el, _ := json.Marshal(sinkElement{Prefix: s.cfg.TransactionalIDPrefix, Checkpoint: uint64(id)})
	split = append(split, el)
	for _, p := range s.pending {
		b, _ := json.Marshal(sinkElement{Committable: &p.c})
		split = append(split, b)
	}
	return split, nil, nil
}

// NotifyCheckpointComplete commits every pre-committed transaction of a
// checkpoint up to id (Flink's TwoPhaseCommitSinkFunction: a skipped or
// late notification commits the earlier ones too).
func (s *Sink) NotifyCheckpointComplete(id checkpoint.ID) error {
	if err := s.ensureRecovered(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.TransactionTimeout)
	defer cancel()
	kept := s.pending[:0]
	var err error
	for _, p := range s.pending {
		if p.c.Checkpoint > uint64(id) || err != nil {
			kept = append(kept, p)
			continue
		}
		if err = s.commit(ctx, p); err != nil {
			kept = append(kept, p)
		}
	}
	s.pending = kept
	return err
}

func (s *Sink) commit(ctx context.Context, p pendingTxn) error {
	if p.cl != nil {
		err := p.cl.EndTransaction(ctx, kgo.TryCommit)
		if err != nil {
			return s.errorf(fmt.Sprintf("committing transaction %s", p.c.TransactionalID), err)
		}
		p.cl.Close()
	} else if err := s.resumeCommit(ctx, p.c); errors.Is(err, errNotCommitted) {
		return nil // logged; neither committed by us nor an error
	} else if err != nil {
		return err
	}
	s.mu.Lock()
	s.commits++
	s.mu.Unlock()
	return nil
}

// resumeCommit commits a transaction another producer opened: a raw
// EndTxn with its producer id and epoch, what Flink's
// FlinkKafkaInternalProducer.resumeTransaction does by reflection. A
// transaction already committed is a success: a retry of our own raw
// EndTxn (EndTxn v5 detects it), or one whose state the broker describes
// as committed (the crashed run's client committed it, bumping its epoch,
// so the committable's epoch is stale). One the broker no longer holds
// open otherwise is reported and skipped (errNotCommitted), as Flink's
// KafkaCommitter does; when the broker says it aborted it (its timeout
// passed, or it was fenced), its records are lost and it counts as
// aborted.
func (s *Sink) resumeCommit(ctx context.Context, c Committable) error {
	err := retried(ctx, func() error {
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = c.TransactionalID, c.ProducerID, c.Epoch, true
		resp, err := req.RequestWith(ctx, s.admin)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		return err
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.InvalidTxnState), errors.Is(err, kerr.ProducerFenced),
		errors.Is(err, kerr.InvalidProducerEpoch), errors.Is(err, kerr.UnknownProducerID), errors.Is(err, kerr.InvalidProducerIDMapping):
		// the broker holds it open no more: committed already (the crashed
		// run's own client committed it, bumping the epoch, before the
		// crash), or aborted; its state says which when the broker still
		// keeps it
		state := ""
		if d, derr := kadm.NewClient(s.admin).DescribeTransactions(ctx, c.TransactionalID); derr == nil {
			if t, ok := d[c.TransactionalID]; ok && t.Err == nil {
				state = t.State
			}
		}
		if state == "CompleteCommit" || state == "PrepareCommit" {
			return nil // committed: the caller counts it
		}
		msg := "kafka sink: a restored transaction could not be committed: the broker no longer holds it open; if the crashed run had not committed it itself, it was aborted (its timeout passed, or a newer producer fenced it) and its records are not visible"
		if state == "CompleteAbort" || state == "PrepareAbort" {
			msg = "kafka sink: a restored transaction could not be committed: the broker aborted it (its timeout passed, or a newer producer fenced it); its records are not visible"
		}
		slog.Warn(msg, "operator", s.cfg.Operator, "subtask", s.subtask, "transactional-id", c.TransactionalID,
			"checkpoint", c.Checkpoint, "state", state, "error", err)
		if state == "CompleteAbort" || state == "PrepareAbort" {
			s.mu.Lock()
			s.aborted++
			s.mu.Unlock()
		}
		return errNotCommitted
	}
	return s.errorf(fmt.Sprintf("committing restored transaction %s of checkpoint %d", c.TransactionalID, c.Checkpoint), err)
}

// errNotCommitted: resumeCommit found the transaction no longer open and
// logged it (it is not the job's error).
var errNotCommitted = errors.New("the transaction is no longer open")

// retried runs do until it returns nil or an error that is not
// retriable, with a growing pause between attempts, at most 50 of them.
func retried(ctx context.Context, do func() error) error {
	for attempt := 0; ; attempt++ {
		err := do()
		if err == nil || !kerr.IsRetriable(err) || attempt >= 50 || ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Duration(min(attempt+1, 10)) * 20 * time.Millisecond)
	}
}

// RestoreState takes a checkpoint's state: the committables to commit and
// the checkpoint to continue after. Exactly-once, it recovers when the
// sink is open, or Open does.
func (s *Sink) RestoreState(r checkpoint.Restore) error {
	if s.recovered || s.txnRecords > 0 || len(s.pending) > 0 {
		return fmt.Errorf("sink %q (kafka): RestoreState after the sink began writing", s.cfg.Operator)
	}
	s.wasRestore = true
	for _, b := range append(append([][]byte(nil), r.Split...), r.Committables...) {
		var el sinkElement
		if err := json.Unmarshal(b, &el); err != nil {
			return fmt.Errorf("sink %q (kafka): a checkpointed element does not read: %w", s.cfg.Operator, err)
		}
		if el.Committable != nil {
			s.restored = append(s.restored, *el.Committable)
			s.last = max(s.last, el.Committable.Checkpoint)
		}
		if el.Prefix != "" && el.Prefix != s.cfg.TransactionalIDPrefix && !contains(s.prefixes, el.Prefix) {
			s.prefixes = append(s.prefixes, el.Prefix)
		}
		s.last = max(s.last, el.Checkpoint)
	}
	if s.admin != nil {
		return s.ensureRecovered()
	}
	return nil
}

// ensureRecovered recovers (exactly-once, once the sink is open) unless it
// has.
func (s *Sink) ensureRecovered() error {
	if s.recovered || s.admin == nil || s.cfg.Delivery != DeliveryExactlyOnce {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout())
	defer cancel()
	return s.recover(ctx)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// recover commits the restored committables, then aborts every open
// transaction of this job's prefixes that this subtask owns and no
// committable names: Flink's LISTING abort strategy. Subtask i owns the
// ids of old subtasks i, i+p, i+2p, ... (p the parallelism now), which
// covers a restore at a lower parallelism.
func (s *Sink) recover(ctx context.Context) error {
	committed := map[string]bool{}
	sort.Slice(s.restored, func(i, j int) bool { return s.restored[i].Checkpoint < s.restored[j].Checkpoint })
	for _, c := range s.restored {
		if err := s.commit(ctx, pendingTxn{c: c}); err != nil {
			return err
		}
		committed[c.TransactionalID] = true
	}
	s.restored = nil
	listed, err := kadm.NewClient(s.admin).ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil {
		return s.errorf("listing open transactions to abort those of a crashed run", err)
	}
	prefixes := append([]string{s.cfg.TransactionalIDPrefix}, s.prefixes...)
	var ids []string
	listed.Each(func(t kadm.ListedTransaction) {
		for _, pre := range prefixes {
			if sub, _, ok := parseTransactionalID(pre, t.TxnID); ok && sub%s.parallelism == s.subtask && !committed[t.TxnID] {
				ids = append(ids, t.TxnID)
				return
			}
		}
	})
	sort.Strings(ids)
	for _, id := range ids {
		if err := s.abort(ctx, id); err != nil {
			return err
		}
	}
	s.recovered = true
	return nil
}

// abort aborts the open transaction of id: an InitProducerId with it
// fences its producer and aborts what it left open.
func (s *Sink) abort(ctx context.Context, id string) error {
	err := retried(ctx, func() error {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &id
		req.TransactionTimeoutMillis = int32(s.cfg.TransactionTimeout.Milliseconds())
		req.ProducerID, req.ProducerEpoch = -1, -1
		resp, err := req.RequestWith(ctx, s.admin)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		return err
	})
	if err != nil {
		return s.errorf(fmt.Sprintf("aborting transaction %s of a crashed run", id), err)
	}
	s.mu.Lock()
	s.aborted++
	s.mu.Unlock()
	return nil
}

// Close ends the input (out non-nil): everything written is flushed and,
// exactly-once, committed, as Flink commits the last transaction at the
// end of a bounded input. With out nil (a teardown after an error) the
// open transaction is aborted and pre-committed ones are left for the
// restore to commit.
func (s *Sink) Close(out runtime.Collector) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.TransactionTimeout)
	defer cancel()
	var err error
	if out != nil {
		if err = s.ensureRecovered(); err == nil {
			err = s.flush(ctx)
		}
		if err == nil && s.cfg.Delivery == DeliveryExactlyOnce {
			if s.cl != nil {
				s.pending = append(s.pending, pendingTxn{cl: s.cl, c: Committable{TransactionalID: s.txnID, Checkpoint: s.last + 1}})
				s.cl = nil
			}
			err = s.NotifyCheckpointComplete(checkpoint.ID(s.last + 1))
		}
	} else if s.cl != nil && s.cfg.Delivery == DeliveryExactlyOnce {
		actx, acancel := context.WithTimeout(ctx, 5*time.Second)
		_ = s.cl.AbortBufferedRecords(actx)
		_ = s.cl.EndTransaction(actx, kgo.TryAbort)
		acancel()
	}
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
	for _, p := range s.pending {
		if p.cl != nil {
			p.cl.Close() // the transaction stays open: a restore commits it
		}
	}
	s.pending = nil
	if s.admin != nil {
		s.admin.Close()
		s.admin = nil
	}
	return err
}

// SinkMetrics are a sink subtask's figures.
type SinkMetrics struct {
	Written   int64 // records the brokers acknowledged
	Committed int64 // transactions committed
	Aborted   int64 // lingering transactions aborted, and restored ones the broker says it aborted
}

// Metrics returns the sink's figures; it may be called from any
// goroutine.
func (s *Sink) Metrics() SinkMetrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SinkMetrics{Written: s.written.Load(), Committed: s.commits, Aborted: s.aborted}
}
