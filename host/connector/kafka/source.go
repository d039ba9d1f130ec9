package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/runtime"
)

// Batches a source hands downstream hold at most this many records or
// bytes (as the file source's).
const (
	maxBatchRecords = 1024
	maxBatchBytes   = 1 << 20
)

type topicPartition struct {
	topic     string
	partition int32
}

// splitID names the partition as Flink's KafkaPartitionSplit.splitId does.
func (tp topicPartition) splitID() string { return fmt.Sprintf("%s-%d", tp.topic, tp.partition) }

// position is one partition's entry in a checkpoint: the next offset to
// read and, for a bounded source, the offset it stops before.
type position struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Next      int64  `json:"next"`
	Stop      int64  `json:"stop"` // -1: unbounded
}

// part is a partition this subtask reads.
type part struct {
	next      int64 // the next offset to emit
	stop      int64 // bounded: stop before it; -1 unbounded
	last      int64 // the offset of the last record read, -1 before one (Flink's currentOffset)
	committed int64 // the offset last committed to the group, -1 before one
	hw        int64 // the high watermark the last fetch saw, -1 before one
}

func (p *part) done() bool { return p.stop >= 0 && p.next >= p.stop }

// Source is one subtask of a Kafka source: a runtime.Source that reads the
// partitions SplitOwner gives it with a franz-go client consuming them
// directly (no group balancing), from its checkpointed positions when it
// was restored and from the configured start otherwise.
//
// The engine calls RestoreState (when restoring) before Run, SnapshotState
// inside Run's Emit once the batch is handed on, or between two Emit calls
// (its positions cover every batch Emit was called with), both on Run's
// goroutine (runtime/checkpoint.go: a source is snapshotted on its own
// goroutine, which is why offsets are recorded before Emit), and
// NotifyCheckpointComplete when a checkpoint completes, which may come
// from another goroutine.
type Source struct {
	brokerErrs           brokerErrs // the last failed broker connection, for errors
	cfg                  SourceConfig
	subtask, parallelism int
	pattern              *regexp.Regexp
	cl                   *kgo.Client
	adm                  *kadm.Client
	reject               func(*runtime.RecordFailure) error
	open                 *runtime.OpenContext // AddIdle: the time spent waiting for fetches
	w                    abi.Writer
	scratch              []byte // the decoded key
	valScratch           []byte // the decoded value, when the envelope needs it first
	// splits, when the engine generates watermarks, takes each
	// partition's records apart, for per-partition watermarks (Flink's
	// KafkaSource); set by Run, used on its goroutine
	splits     runtime.SplitCollector
	registered map[topicPartition]bool // the partitions splits holds

	mu          sync.Mutex
	started     bool
	parts       map[topicPartition]*part
	restored    map[topicPartition]position // from RestoreState
	wasRestored bool
	initialDone bool                                               // later partitions start at the earliest offset, as Flink's
	snapshots   map[checkpoint.ID]map[string]map[int32]kadm.Offset // offsets to commit when the checkpoint completes
	records     int64
	rejected    int64
	commitErr   error // the last failed commit, for Metrics
}

// NewSource returns subtask (0-based) of parallelism of the source cfg.
func NewSource(cfg SourceConfig, subtask, parallelism int) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("source %q (kafka): subtask %d of parallelism %d", cfg.Operator, subtask, parallelism)
	}
	s := &Source{cfg: cfg.WithDefaults(), subtask: subtask, parallelism: parallelism,
		parts: map[topicPartition]*part{}, snapshots: map[checkpoint.ID]map[string]map[int32]kadm.Offset{}}
	if s.cfg.TopicPattern != "" {
		s.pattern = regexp.MustCompile("^(?:" + s.cfg.TopicPattern + ")$")
	}
	return s, nil
}

func (s *Source) errorf(doing string, err error) error {
	return explain("source", s.cfg.Operator, s.cfg.Brokers, doing, err, &s.brokerErrs)
}

// Open creates the client and checks that the brokers answer and the
// topics exist, so that a wrong broker or topic fails the job at once.
func (s *Source) Open(ctx *runtime.OpenContext) error {
	if ctx != nil {
		s.reject = ctx.Reject
	}
	s.open = ctx
	opts, err := s.cfg.clientOpts(&s.brokerErrs)
	if err != nil {
		return fmt.Errorf("source %q (kafka): %w", s.cfg.Operator, err)
	}
	if s.cfg.Isolation == ReadCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	opts = append(opts, s.cfg.fetchOpts()...)
	// a direct consumer with nothing to read yet: partitions are added as
	// they are assigned
	opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{}),
		// transaction markers come back as control records, which move a
		// partition's position on (to a bounded end that is a marker)
		kgo.KeepControlRecords())
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("source %q (kafka): %w", s.cfg.Operator, err)
	}
	s.cl, s.adm = cl, kadm.NewClient(cl)
	octx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout())
	defer cancel()
	_, err = s.listPartitions(octx)
	return err
}

// listPartitions lists the partition count of every topic the source
// reads: a listed topic that does not exist is an error, a pattern that
// matches nothing is not.
func (s *Source) listPartitions(ctx context.Context) (map[string]int32, error) {
	var details kadm.TopicDetails
	var err error
	if s.pattern != nil {
		details, err = s.adm.ListTopics(ctx)
	} else {
		details, err = s.adm.ListTopics(ctx, s.cfg.Topics...)
	}
	if err != nil {
		return nil, s.errorf("listing topics", err)
	}
	out := map[string]int32{}
	for _, d := range details.Sorted() {
		if s.pattern != nil && (d.IsInternal || !s.pattern.MatchString(d.Topic)) {
			continue
		}
		if d.Err != nil {
			if errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
				return nil, fmt.Errorf("source %q (kafka, brokers %s): topic %q does not exist", s.cfg.Operator, joinBrokers(s.cfg.Brokers), d.Topic)
			}
			return nil, s.errorf(fmt.Sprintf("reading topic %q", d.Topic), d.Err)
		}
		out[d.Topic] = int32(len(d.Partitions))
	}
	return out, nil
}

// discover assigns the partitions this subtask owns that it does not read
// yet, and returns how many it added.
func (s *Source) discover(ctx context.Context) (int, error) {
	counts, err := s.listPartitions(ctx)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	var fresh []topicPartition
	for topic, n := range counts {
		for p := int32(0); p < n; p++ {
			tp := topicPartition{topic, p}
			if _, ok := s.parts[tp]; !ok && SplitOwner(topic, p, s.parallelism) == s.subtask {
				fresh = append(fresh, tp)
			}
		}
	}
	initial := !s.initialDone && !s.wasRestored
	s.mu.Unlock()
	if len(fresh) == 0 {
		s.setInitialDone()
		return 0, nil
	}
	sort.Slice(fresh, func(i, j int) bool {
		if fresh[i].topic != fresh[j].topic {
			return fresh[i].topic < fresh[j].topic
		}
		return fresh[i].partition < fresh[j].partition
	})
	starts, stops, ends, err := s.resolve(ctx, fresh, initial)
	if err != nil {
		return 0, err
	}
	add := map[string]map[int32]kgo.Offset{}
	s.mu.Lock()
	for i, tp := range fresh {
		p := &part{next: starts[i], stop: stops[i], last: -1, committed: -1, hw: ends[i]}
		s.parts[tp] = p
		if p.done() {
			continue
		}
		if add[tp.topic] == nil {
			add[tp.topic] = map[int32]kgo.Offset{}
		}
		add[tp.topic][tp.partition] = kgo.NewOffset().At(p.next)
	}
	s.initialDone = true
	s.mu.Unlock()
	if s.splits != nil {
		// each partition's watermark holds the subtask's back from its
		// assignment on (Flink's SourceOperator.createOutputForSplits)
		for _, tp := range fresh {
			if add[tp.topic] != nil {
				if _, ok := add[tp.topic][tp.partition]; ok {
					s.splits.AddSplit(tp.splitID())
					if s.registered == nil {
						s.registered = map[topicPartition]bool{}
					}
					s.registered[tp] = true
				}
			}
		}
	}
	s.cl.AddConsumePartitions(add)
	return len(fresh), nil
}

func (s *Source) setInitialDone() {
	s.mu.Lock()
	s.initialDone = true
	s.mu.Unlock()
}

// resolve finds where each new partition starts (and, bounded, stops): its
// restored position; else, at the first discovery of a fresh start, the
// configured start; else (a partition that appeared later) the earliest
// offset, as Flink's enumerator does. It also gives each partition's end
// offset now (the last stable offset with read-committed), so that its
// records-lag is known before a fetch returns it (an empty partition's
// fetches return nothing).
func (s *Source) resolve(ctx context.Context, tps []topicPartition, initial bool) (starts, stops, endsNow []int64, err error) {
	starts, stops, endsNow = make([]int64, len(tps)), make([]int64, len(tps)), make([]int64, len(tps))
	topics := map[string]bool{}
	s.mu.Lock()
	for i, tp := range tps {
		if pos, ok := s.restored[tp]; ok {
			// restored from an unbounded run into a bounded one (Stop
			// -1), it stops at the end offset it has now
			starts[i], stops[i] = pos.Next, pos.Stop
		} else {
			starts[i], stops[i] = -1, -1
		}
		topics[tp.topic] = true
	}
	s.mu.Unlock()
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	sort.Strings(names)
	var ends kadm.ListedOffsets
	listEnds := func() error {
		if ends != nil {
			return nil
		}
		var e error
		if s.cfg.Isolation == ReadCommitted {
			ends, e = s.adm.ListCommittedOffsets(ctx, names...) // the last stable offsets
		} else {
			ends, e = s.adm.ListEndOffsets(ctx, names...)
		}
		if e == nil {
			e = ends.Error()
		}
		if e != nil {
			return s.errorf("listing end offsets", e)
		}
		return nil
	}
	// the end offsets for records-lag: a partition's failure (a leader
	// election, a topic just created) leaves its lag unknown (-1) until a
	// fetch gives it, and is no reason to fail; listed again below when a
	// start or stop needs them
	if err := listEnds(); err != nil {
		ends = nil
	}
	for i, tp := range tps {
		endsNow[i] = -1
		if e, ok := ends.Lookup(tp.topic, tp.partition); ok && e.Err == nil {
			endsNow[i] = e.Offset
		}
	}
	need := false
	for i := range tps {
		if starts[i] < 0 || stops[i] < 0 && s.cfg.Bounded {
			need = true
		}
	}
	if !need {
		return starts, stops, endsNow, nil
	}
	var listed kadm.ListedOffsets
	mode := StartEarliest
	if initial {
		mode = s.cfg.Start
	}
	var committed kadm.OffsetResponses
	switch mode {
	case StartEarliest:
		listed, err = s.adm.ListStartOffsets(ctx, names...)
	case StartLatest:
		if err = listEnds(); err == nil {
			listed = ends
		}
	case StartTimestamp:
		listed, err = s.adm.ListOffsetsAfterMilli(ctx, s.cfg.StartTimestamp, names...)
	case StartCommitted:
		committed, err = s.adm.FetchOffsets(ctx, s.cfg.GroupID)
		if err == nil {
			err = committed.Error()
		}
		if err != nil {
			return nil, nil, nil, s.errorf(fmt.Sprintf("reading the committed offsets of group %q", s.cfg.GroupID), err)
		}
		switch s.cfg.CommittedFallback {
		case FallbackEarliest:
			listed, err = s.adm.ListStartOffsets(ctx, names...)
		case FallbackLatest:
			if err = listEnds(); err == nil {
				listed = ends
			}
		}
	}
	if err == nil && listed != nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, nil, nil, s.errorf("listing offsets", err)
	}
	for i, tp := range tps {
		if starts[i] >= 0 {
			continue
		}
		if committed != nil {
			if o, ok := committed.Lookup(tp.topic, tp.partition); ok && o.At >= 0 {
				starts[i] = o.At
			} else if s.cfg.CommittedFallback == FallbackNone {
				return nil, nil, nil, fmt.Errorf("source %q (kafka): group %q has no committed offset for topic %q partition %d, and committed-fallback is none: set it to earliest or latest",
					s.cfg.Operator, s.cfg.GroupID, tp.topic, tp.partition)
			}
		}
		if starts[i] < 0 {
			o, ok := listed.Lookup(tp.topic, tp.partition)
			if !ok {
				return nil, nil, nil, fmt.Errorf("source %q (kafka): no offset listed for topic %q partition %d", s.cfg.Operator, tp.topic, tp.partition)
			}
			starts[i] = o.Offset
			if starts[i] < 0 { // after every record's timestamp: the end
				e, _ := ends.Lookup(tp.topic, tp.partition)
				starts[i] = e.Offset
			}
		}
	}
	if s.cfg.Bounded {
		for i, tp := range tps {
			if stops[i] < 0 {
				e, _ := ends.Lookup(tp.topic, tp.partition)
				stops[i] = e.Offset
			}
		}
	}
	return starts, stops, endsNow, nil
}

// Total is -1: the record count is not known ahead.
func (s *Source) Total() int64 { return -1 }

// Run reads until the context is cancelled or, bounded, until every
// partition reached the end offset it had when the source started.
func (s *Source) Run(ctx context.Context, out runtime.Collector) error {
	if s.cl == nil {
		return fmt.Errorf("source %q (kafka): Run before Open", s.cfg.Operator)
	}
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	s.splits, _ = out.(runtime.SplitCollector)
	if _, err := s.discover(ctx); err != nil {
		return err
	}
	interval := s.cfg.DiscoveryInterval
	next := time.Now().Add(interval)
	mb, _ := out.(runtime.SourceMailbox) // set while the job checkpoints
	for {
		if s.cfg.Bounded && s.allDone() {
			return nil
		}
		// a poll waits at most pollSlice, so that its waiting shows as
		// idle time while it waits, not only once records come
		deadline := time.Now().Add(pollSlice)
		if interval > 0 && next.Before(deadline) {
			deadline = next
		}
		pctx, cancel := context.WithDeadline(ctx, deadline)
		// mail (a barrier to inject) ends the wait at once, as Flink's
		// mailbox does, so an idle source's checkpoints take no longer
		// than a busy one's
		var mail, watched chan struct{}
		if mb != nil {
			mail, watched = make(chan struct{}), make(chan struct{})
			go func() {
				defer close(watched)
				select {
				case <-mb.Pending():
					close(mail)
					cancel()
				case <-pctx.Done():
				}
			}()
		}
		waited := time.Now()
		fetches := s.cl.PollFetches(pctx)
		s.open.AddIdle(time.Since(waited)) // waiting for the broker is idle time, as Flink counts it
		cancel()
		if watched != nil {
			<-watched
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if mb != nil {
			woke := false
			select {
			case <-mail:
				woke = true
			case <-mb.Pending():
				woke = true
			default:
			}
			if woke {
				if err := mb.Yield(); err != nil {
					return err
				}
			}
		}
		if err := s.fetchErr(fetches); err != nil {
			return err
		}
		if err := s.emit(fetches, out); err != nil {
			return err
		}
		if interval > 0 && !time.Now().Before(next) {
			if _, err := s.discover(ctx); err != nil {
				return err
			}
			next = time.Now().Add(interval)
		}
	}
}

// pollSlice is the longest one poll of the brokers waits.
const pollSlice = 100 * time.Millisecond

// fetchErr is the first error of a poll that is not a timeout of the poll
// itself; franz-go retries what can be retried before it reports it.
func (s *Source) fetchErr(fs kgo.Fetches) error {
	for _, e := range fs.Errors() {
		if errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, context.Canceled) {
			continue
		}
		if e.Topic == "" {
			return s.errorf("fetching", e.Err)
		}
		return s.errorf(fmt.Sprintf("fetching topic %q partition %d", e.Topic, e.Partition), e.Err)
	}
	return nil
}

func (s *Source) allDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.parts {
		if !p.done() {
			return false
		}
	}
	return true
}

// emit decodes the records of a poll into batches and hands them on. The
// positions a batch reaches are recorded before its Emit: the engine
// snapshots the source inside Emit, once the batch is handed on, and that
// snapshot must be past the batch (else a restore reads it again).
func (s *Source) emit(fs kgo.Fetches, out runtime.Collector) error {
	s.w.Reset()
	reached := map[topicPartition]int64{} // next offsets of what s.w holds
	var hws []kgo.FetchTopicPartition
	var cur topicPartition // the partition s.w holds, per partition
	flush := func() error {
		s.mu.Lock()
		for tp, next := range reached {
			if p := s.parts[tp]; p != nil && next > p.next {
				p.next, p.last = next, next-1
			}
		}
		s.records += int64(s.w.Count)
		s.mu.Unlock()
		if s.w.Count > 0 {
			var err error
			if s.splits != nil {
				err = s.splits.EmitSplit(cur.splitID(), 0, s.w.Buf, s.w.Count)
			} else {
				err = out.Emit(0, s.w.Buf, s.w.Count)
			}
			if err != nil {
				return err
			}
		}
		s.w.Reset()
		clear(reached)
		return nil
	}
	var err error
	fs.EachPartition(func(fp kgo.FetchTopicPartition) {
		if err != nil {
			return
		}
		hws = append(hws, fp)
		tp := topicPartition{fp.Topic, fp.Partition}
		s.mu.Lock()
		p := s.parts[tp]
		var next, stop int64 = -1, -1
		if p != nil {
			next, stop = p.next, p.stop
		}
		s.mu.Unlock()
		if p == nil {
			return
		}
		if n, ok := reached[tp]; ok {
			next = n
		}
		if s.splits != nil && tp != cur {
			// one partition's records per batch: its watermark sees them
			if err = flush(); err != nil {
				return
			}
			cur = tp
		}
		for _, r := range fp.Records {
			if r.Offset < next || stop >= 0 && r.Offset >= stop {
				continue // read again after a retry, or past a bounded end
			}
			reached[tp] = r.Offset + 1
			if r.Attrs.IsControl() {
				continue
			}
			if err = s.appendRecord(r); err != nil {
				return
			}
			if s.w.Count >= maxBatchRecords || len(s.w.Buf) >= maxBatchBytes {
				if err = flush(); err != nil {
					return
				}
			}
		}
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	s.mu.Lock()
	for _, fp := range hws {
		if p := s.parts[topicPartition{fp.Topic, fp.Partition}]; p != nil {
			p.hw = fp.HighWatermark
			if fp.LastStableOffset >= 0 && s.cfg.Isolation == ReadCommitted {
				p.hw = fp.LastStableOffset
			}
		}
	}
	s.mu.Unlock()
	s.pauseDone()
	return nil
}

// pauseDone stops fetching the partitions a bounded source finished.
func (s *Source) pauseDone() {
	if !s.cfg.Bounded {
		return
	}
	s.mu.Lock()
	done := map[string][]int32{}
	for tp, p := range s.parts {
		if p.done() {
			done[tp.topic] = append(done[tp.topic], tp.partition)
		}
	}
	s.mu.Unlock()
	if len(done) > 0 {
		s.cl.RemoveConsumePartitions(done)
	}
	if s.splits != nil {
		// a finished partition holds nothing back (Flink's
		// releaseOutputForSplit)
		for topic, ps := range done {
			for _, p := range ps {
				if tp := (topicPartition{topic, p}); s.registered[tp] {
					delete(s.registered, tp)
					s.splits.ReleaseSplit(tp.splitID())
				}
			}
		}
	}
}

// appendRecord appends one Kafka record as a sluice record, or applies the
// operator's on-error to it when it does not decode.
func (s *Source) appendRecord(r *kgo.Record) error {
	start := len(s.w.Buf)
	b, err := s.appendEnvelope(s.w.Buf, r)
	if err == nil {
		s.w.Buf = b
		s.w.Count++
		return nil
	}
	s.w.Buf = s.w.Buf[:start]
	de := &DecodeError{Operator: s.cfg.Operator, Subtask: s.subtask, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Err: err}
	s.mu.Lock()
	s.rejected++
	s.mu.Unlock()
	if s.reject == nil {
		return de
	}
	return s.reject(&runtime.RecordFailure{Raw: append([]byte(nil), r.Value...), Input: de.Input(), Err: de, Cause: err.Error()})
}

func (s *Source) appendEnvelope(dst []byte, r *kgo.Record) ([]byte, error) {
	var key []byte
	var err error
	if s.cfg.KeyFormat != "" {
		if key, err = decode(s.scratch[:0], s.cfg.KeyFormat, r.Key, nil); err != nil {
			return dst, fmt.Errorf("key: %w", err)
		}
		s.scratch = key
	}
	ts := r.Timestamp.UnixMilli()
	if s.cfg.EventTimeField == "" && s.cfg.HeadersField == "" {
		// the value is the envelope's last element: decode it into place,
		// after the header and the key (no copy, no allocation)
		start := len(dst)
		out, err := decode(abi.AppendEnvelope(dst, ts, true, key, nil), s.cfg.ValueFormat, r.Value, s.cfg.CSVColumns)
		if err != nil {
			return dst[:start], err
		}
		return out, nil
	}
	// the time or the headers come from the value: decode it first, into
	// a buffer the source keeps
	val, err := decode(s.valScratch[:0], s.cfg.ValueFormat, r.Value, s.cfg.CSVColumns)
	if err != nil {
		return dst, err
	}
	s.valScratch = val
	if f := s.cfg.EventTimeField; f != "" {
		raw, ok, err := abi.MapField(val, f)
		if err != nil || !ok {
			return dst, fmt.Errorf("event-time-field %q: the value has no such field", f)
		}
		if ts, err = abi.ReadInt(raw); err != nil {
			return dst, fmt.Errorf("event-time-field %q: not an int of milliseconds: %w", f, err)
		}
	}
	if f := s.cfg.HeadersField; f != "" {
		if val, err = withHeaders(val, f, r.Headers); err != nil {
			return dst, err
		}
	}
	return abi.AppendEnvelope(dst, ts, true, key, val), nil
}

// withHeaders returns the map val with the field name set to the headers,
// an array of {"key": string, "value": string or binary or nil}, in the
// record's order (a key may repeat).
func withHeaders(val []byte, name string, hs []kgo.RecordHeader) ([]byte, error) {
	if abi.TypeOf(val) != abi.TypeMap {
		return nil, fmt.Errorf("headers-field %q: the value is %s, not a map", name, abi.TypeOf(val).Phrase())
	}
	n, body, err := abi.Len(val)
	if err != nil {
		return nil, err
	}
	if _, ok, _ := abi.MapField(val, name); ok {
		return nil, fmt.Errorf("headers-field %q: the value has a field of that name already", name)
	}
	out := abi.AppendMapHeader(make([]byte, 0, len(val)+32*len(hs)+16), n+1)
	out = append(out, val[body:]...)
	out = abi.AppendArrayHeader(abi.AppendStr(out, name), len(hs))
	for _, h := range hs {
		out = abi.AppendStr(abi.AppendStr(abi.AppendMapHeader(out, 2), "key"), h.Key)
		out = abi.AppendStr(out, "value")
		if h.Value == nil {
			out = abi.AppendNil(out)
		} else {
			out, _ = decode(out, FormatRaw, h.Value, nil)
		}
	}
	return out, nil
}

// DecodeError is a Kafka record a source could not read into a record.
type DecodeError struct {
	Operator  string
	Subtask   int
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

// Input is where the record is, as a dead letter's "input" says it.
func (e *DecodeError) Input() string {
	return fmt.Sprintf("kafka topic %s partition %d offset %d", e.Topic, e.Partition, e.Offset)
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("source %q: %s: %v", e.Operator, e.Input(), e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// SnapshotState returns the source's positions for checkpoint id: one
// union element per partition this subtask reads (every subtask of a
// restored job gets them all and takes the partitions SplitOwner gives it
// at the new parallelism). It keeps them to commit to the group when the
// checkpoint completes.
func (s *Source) SnapshotState(id checkpoint.ID) (split, union [][]byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	offs := map[string]map[int32]kadm.Offset{}
	for _, tp := range s.sortedParts() {
		p := s.parts[tp]
		b, err := json.Marshal(position{Topic: tp.topic, Partition: tp.partition, Next: p.next, Stop: p.stop})
		if err != nil {
			return nil, nil, err
		}
		union = append(union, b)
		if offs[tp.topic] == nil {
			offs[tp.topic] = map[int32]kadm.Offset{}
		}
		offs[tp.topic][tp.partition] = kadm.Offset{Topic: tp.topic, Partition: tp.partition, At: p.next, LeaderEpoch: -1}
	}
	// partitions restored but not yet assigned keep their positions
	for tp, pos := range s.restored {
		if _, ok := s.parts[tp]; !ok && SplitOwner(tp.topic, tp.partition, s.parallelism) == s.subtask {
			b, _ := json.Marshal(pos)
			union = append(union, b)
		}
	}
	if *s.cfg.CommitOffsets {
		s.snapshots[id] = offs
	}
	return nil, union, nil
}

func (s *Source) sortedParts() []topicPartition {
	tps := make([]topicPartition, 0, len(s.parts))
	for tp := range s.parts {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].topic != tps[j].topic {
			return tps[i].topic < tps[j].topic
		}
		return tps[i].partition < tps[j].partition
	})
	return tps
}

// RestoreState takes the positions of a checkpoint: partitions it holds
// start at their position, and partitions it does not hold (created
// since) at their earliest offset. It must come before Run.
func (s *Source) RestoreState(r checkpoint.Restore) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("source %q (kafka): RestoreState after Run started", s.cfg.Operator)
	}
	s.restored = map[topicPartition]position{}
	s.wasRestored = true
	for _, b := range append(append([][]byte(nil), r.Union...), r.Split...) {
		var pos position
		if err := json.Unmarshal(b, &pos); err != nil {
			return fmt.Errorf("source %q (kafka): a checkpointed position does not read: %w", s.cfg.Operator, err)
		}
		s.restored[topicPartition{pos.Topic, pos.Partition}] = pos
	}
	return nil
}

// NotifyCheckpointComplete commits the positions of checkpoint id to the
// group (Flink's commit.offsets.on.checkpoint), for monitoring: a failed
// commit is kept for Metrics, not returned, as Flink only logs it.
func (s *Source) NotifyCheckpointComplete(id checkpoint.ID) error {
	s.mu.Lock()
	offs, ok := s.snapshots[id]
	for old := range s.snapshots {
		if old <= id {
			delete(s.snapshots, old)
		}
	}
	s.mu.Unlock()
	if !ok || len(offs) == 0 || s.adm == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout())
	defer cancel()
	resp, err := s.adm.CommitOffsets(ctx, s.cfg.GroupID, offs)
	if err == nil {
		err = resp.Error()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.commitErr = s.errorf(fmt.Sprintf("committing offsets of checkpoint %d to group %q", id, s.cfg.GroupID), err)
		return nil
	}
	s.commitErr = nil
	for t, ps := range offs {
		for pn, o := range ps {
			if p := s.parts[topicPartition{t, pn}]; p != nil {
				p.committed = o.At
			}
		}
	}
	return nil
}

// Close closes the client.
func (s *Source) Close() error {
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
	return nil
}

// PartitionMetrics are one partition's figures, named as Flink's Kafka
// source metrics.
type PartitionMetrics struct {
	Topic     string
	Partition int32
	// CurrentOffset is the offset of the last record read (Flink's
	// currentOffset); -1 before one.
	CurrentOffset int64
	// CommittedOffset is the offset last committed to the group (Flink's
	// committedOffset); -1 before one.
	CommittedOffset int64
	// RecordsLag is how many records the partition holds past the
	// source's position (Flink's records-lag: the end offset minus the
	// position): from the end offset listed when the partition was
	// assigned until a fetch brings a newer one, so a partition not
	// fetched yet, or empty (its fetches return nothing), has its lag
	// too; -1 only when the brokers listed no end offset for it.
	RecordsLag int64
}

// SourceMetrics are a source subtask's figures.
type SourceMetrics struct {
	Partitions []PartitionMetrics // sorted by topic and partition
	Records    int64              // records emitted
	Rejected   int64              // records that did not decode
	CommitErr  error              // the last offset commit's failure; nil once one succeeds
}

// Metrics returns the source's figures; it may be called from any
// goroutine.
func (s *Source) Metrics() SourceMetrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := SourceMetrics{Records: s.records, Rejected: s.rejected, CommitErr: s.commitErr}
	for _, tp := range s.sortedParts() {
		p := s.parts[tp]
		lag := int64(-1)
		if p.hw >= 0 {
			lag = max(p.hw-p.next, 0)
		}
		m.Partitions = append(m.Partitions, PartitionMetrics{Topic: tp.topic, Partition: tp.partition,
			CurrentOffset: p.last, CommittedOffset: p.committed, RecordsLag: lag})
	}
	return m
}

func joinBrokers(b []string) string { return strings.Join(b, ",") }
