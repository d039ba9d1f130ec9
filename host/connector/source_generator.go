package connector

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

func init() {
	registerSource(spec.Generator, func(_ *Builtin, o *options, _ *pipeline.Operator, subtask, parallelism int) (runtime.Source, error) {
		return newGenerator(o, subtask, parallelism)
	})
}

// generatorSource is one subtask of a generator: it produces the records
// whose sequence number n satisfies n % parallelism == subtask, in
// increasing n, up to count records for the whole source (none: forever),
// paced to rate records per second for the whole source (0: as fast as
// downstream takes them). A record is a function of its sequence number
// alone, so a subtask is the streams of sequence numbers it still has to
// produce: one at a fresh start, more after a restore at another
// parallelism (see RestoreState).
//
// Its options, their defaults and ranges are spec.Generator's.
type generatorSource struct {
	preset      preset
	subtask     int
	parallelism int
	bounded     bool
	count       uint64 // records of the whole source when bounded
	rate        float64
	streams     []genStream
	emitted     uint64 // records this run emitted, for the pacer
	total       uint64 // records this run emits when bounded
	w           abi.Writer
	ends        []byte // where each record of w ends (runtime.EndsCollector)
	ctx         *runtime.OpenContext
}

// genStream is the sequence numbers start, start+step, start+2*step, ...
// of which the first next were emitted and limit exist (the source's
// count bounds them; MaxUint64 when unbounded).
type genStream struct {
	start, step, next, limit uint64
}

func (st *genStream) nextSeq() uint64 { return st.start + st.next*st.step }

func newGenerator(o *options, subtask, parallelism int) (*generatorSource, error) {
	name := o.specEnum("preset", "")
	g := &generatorSource{subtask: subtask, parallelism: parallelism}
	if o.has("count") {
		g.bounded = true
		g.count = uint64(o.specInt("count"))
	}
	g.streams = []genStream{g.stream(uint64(subtask), uint64(parallelism), 0)}
	g.total = g.left()
	g.rate = o.specNumber("rate")
	seed := o.specInt("seed")
	switch name {
	case presetTransactions:
		g.preset = newTransactions(seed, o.specInt("accounts"), newHotKey(o.specString("hot-key"), o.specNumber("skew")))
	case presetSensors:
		g.preset = newSensors(seed, o.specInt("devices"), newHotKey(o.specString("hot-key"), o.specNumber("skew")))
	case presetWords:
		g.preset = &words{seed: seedFor(seed, presetWords)}
	case presetSequence:
		g.preset = sequence{}
	case presetBids:
		g.preset = &bids{seed: seedFor(seed, presetBids)}
	case presetAuctions:
		g.preset = &auctions{seed: seedFor(seed, presetAuctions)}
	}
	if err := o.finish(); err != nil {
		return nil, err
	}
	return g, nil
}

// stream is the stream start, start+step, ... with next of them emitted.
func (g *generatorSource) stream(start, step, next uint64) genStream {
	st := genStream{start: start, step: step, next: next, limit: math.MaxUint64}
	if g.bounded {
		st.limit = 0
		if start < g.count {
			st.limit = (g.count-start-1)/step + 1
		}
	}
	return st
}

func (g *generatorSource) Open(ctx *runtime.OpenContext) error { g.ctx = ctx; return nil }

// Total is what this run of the subtask emits: all of its share, or what
// was left of it at the checkpoint it was restored from.
func (g *generatorSource) Total() int64 {
	if !g.bounded {
		return -1
	}
	return int64(g.total)
}

// left is what the streams have still to emit.
func (g *generatorSource) left() uint64 {
	n := uint64(0)
	for _, st := range g.streams {
		n += st.limit - min(st.next, st.limit)
	}
	return n
}

func (g *generatorSource) Close() error { return nil }

// current is the stream with the lowest next sequence number among those
// not exhausted, or nil when every one is.
func (g *generatorSource) current() *genStream {
	var cur *genStream
	for i := range g.streams {
		st := &g.streams[i]
		if st.next < st.limit && (cur == nil || st.nextSeq() < cur.nextSeq()) {
			cur = st
		}
	}
	return cur
}

// Run emits batches until the count is reached or ctx is cancelled.
func (g *generatorSource) Run(ctx context.Context, out runtime.Collector) error {
	if g.rate > 0 {
		return g.runPaced(ctx, out)
	}
	done := ctx.Done()
	for st := g.current(); st != nil; st = g.current() {
		select {
		case <-done:
			return ctx.Err()
		default:
		}
		if err := g.emit(out, st, maxBatchRecords); err != nil {
			return err
		}
	}
	return nil
}

// runPaced emits what the pacer allows at each tick of a ticker. While
// checkpointing, it also wakes for its mailbox (a barrier to inject),
// however long the ticks.
func (g *generatorSource) runPaced(ctx context.Context, out runtime.Collector) error {
	p := newPacer(time.Now(), g.rate, g.subtask, g.parallelism)
	ticker := time.NewTicker(p.tick())
	defer ticker.Stop()
	var pending <-chan struct{} // never ready without a mailbox
	mb, _ := out.(runtime.SourceMailbox)
	if mb != nil {
		pending = mb.Pending()
	}
	for now := p.start; ; {
		for due := p.due(now, g.emitted); due > 0; {
			st := g.current()
			if st == nil {
				return nil
			}
			n := g.emitted
			if err := g.emit(out, st, due); err != nil {
				return err
			}
			due -= g.emitted - n
		}
		if g.current() == nil {
			return nil
		}
		waited := time.Now()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case now = <-ticker.C:
		case <-pending:
			if err := mb.Yield(); err != nil {
				return err
			}
			now = time.Now()
		}
		g.ctx.AddIdle(time.Since(waited)) // waiting for the rate limit is idle, as in Flink
	}
}

// emit generates one batch of at most n records of stream st, advances
// it and hands the batch downstream: the position is past the batch
// before Emit, which may snapshot it.
func (g *generatorSource) emit(out runtime.Collector, st *genStream, n uint64) error {
	g.w.Reset()
	step := st.step
	seq := st.nextSeq()
	n = min(n, maxBatchRecords, st.limit-st.next)
	buf, ends := g.w.Buf, g.ends[:0]
	i := uint64(0)
	for ; i < n && len(buf) < maxBatchBytes; i++ {
		buf = g.preset.appendRecord(buf, seq)
		ends = binary.LittleEndian.AppendUint32(ends, uint32(len(buf))) // a key-by need not walk them again
		seq += step
	}
	g.w.Buf, g.w.Count, g.ends = buf, int(i), ends
	st.next += i
	g.emitted += i
	return runtime.EmitWithEnds(out, 0, g.w.Buf, g.w.Count, ends)
}

// The generator's checkpointed position is one union element per stream
// of each subtask: a version byte (1), then as uvarints the subtask and
// parallelism that wrote it and the stream's start, step and next. Every
// new subtask gets every element (union state) and takes its share:
//
//   - at the parallelism that wrote them, subtask i takes the streams
//     subtask i wrote, as they are;
//   - at another parallelism p, every stream still to run is cut into p
//     (its remaining numbers, dealt round robin) and subtask i takes the
//     i-th part of each: together the new subtasks produce exactly the
//     numbers the old ones had still to produce, each once.
const genStateVersion = 1

// SnapshotState implements runtime.CheckpointedSource.
func (g *generatorSource) SnapshotState(checkpoint.ID) (split, union [][]byte, err error) {
	for _, st := range g.streams {
		b := []byte{genStateVersion}
		for _, v := range []uint64{uint64(g.subtask), uint64(g.parallelism), st.start, st.step, st.next} {
			b = binary.AppendUvarint(b, v)
		}
		union = append(union, b)
	}
	return nil, union, nil
}

// RestoreState implements runtime.CheckpointedSource.
func (g *generatorSource) RestoreState(r checkpoint.Restore) error {
	if len(r.Split) > 0 {
		return fmt.Errorf("generator subtask %d: the checkpoint holds %d split elements, a generator writes none", g.subtask+1, len(r.Split))
	}
	if len(r.Union) == 0 {
		return nil // the source had no state: a fresh start
	}
	var streams []genStream
	for i, b := range r.Union {
		v, err := decodeGenState(b)
		if err != nil {
			return fmt.Errorf("generator subtask %d: position %d of the checkpoint: %w", g.subtask+1, i+1, err)
		}
		writer, oldP, start, step, next := v[0], v[1], v[2], v[3], v[4]
		st := g.stream(start, step, next)
		switch {
		case oldP == uint64(g.parallelism):
			if writer == uint64(g.subtask) {
				streams = append(streams, st)
			}
		case st.next < st.limit:
			// the remaining numbers of st dealt over the new subtasks
			q := uint64(g.parallelism)
			part := g.stream(st.nextSeq()+uint64(g.subtask)*step, q*step, 0)
			if part.limit > 0 {
				streams = append(streams, part)
			}
		}
	}
	g.streams = streams
	g.total = g.left()
	return nil
}

func decodeGenState(b []byte) ([5]uint64, error) {
	var v [5]uint64
	if len(b) == 0 || b[0] != genStateVersion {
		return v, fmt.Errorf("not a generator position of version %d", genStateVersion)
	}
	b = b[1:]
	for i := range v {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return v, fmt.Errorf("truncated")
		}
		v[i], b = x, b[n:]
	}
	if len(b) != 0 || v[3] == 0 || v[0] >= v[1] {
		return v, fmt.Errorf("malformed")
	}
	return v, nil
}
