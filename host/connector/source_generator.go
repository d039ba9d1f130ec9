package connector

import (
	"context"
	"encoding/binary"
	"math"
	"time"

	"github.com/sluicehq/sluice/abi"
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
// downstream takes them).
//
// Its options, their defaults and ranges are spec.Generator's.
type generatorSource struct {
	preset      preset
	subtask     int
	parallelism int
	bounded     bool
	total       uint64 // records of this subtask when bounded
	rate        float64
	w           abi.Writer
	ends        []byte // where each record of w ends (runtime.EndsCollector)
	ctx         *runtime.OpenContext
}

func newGenerator(o *options, subtask, parallelism int) (*generatorSource, error) {
	name := o.specEnum("preset", "")
	g := &generatorSource{subtask: subtask, parallelism: parallelism}
	if o.has("count") {
		g.bounded = true
		g.total = splitCount(uint64(o.specInt("count")), subtask, parallelism)
	}
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
	}
	if err := o.finish(); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *generatorSource) Open(ctx *runtime.OpenContext) error { g.ctx = ctx; return nil }

func (g *generatorSource) Total() int64 {
	if !g.bounded {
		return -1
	}
	return int64(g.total)
}

func (g *generatorSource) Close() error { return nil }

// Run emits batches until the count is reached or ctx is cancelled.
func (g *generatorSource) Run(ctx context.Context, out runtime.Collector) error {
	limit := uint64(math.MaxUint64) // unbounded
	if g.bounded {
		limit = g.total
	}
	if g.rate > 0 {
		return g.runPaced(ctx, out, limit)
	}
	done := ctx.Done()
	for k := uint64(0); k < limit; {
		select {
		case <-done:
			return ctx.Err()
		default:
		}
		if err := g.emit(out, &k, limit-k); err != nil {
			return err
		}
	}
	return nil
}

// runPaced emits what the pacer allows at each tick of a ticker.
func (g *generatorSource) runPaced(ctx context.Context, out runtime.Collector, limit uint64) error {
	p := newPacer(time.Now(), g.rate, g.subtask, g.parallelism)
	ticker := time.NewTicker(p.tick())
	defer ticker.Stop()
	k := uint64(0)
	for now := p.start; ; {
		due := min(p.due(now, k), limit-k)
		for end := k + due; k < end; {
			if err := g.emit(out, &k, end-k); err != nil {
				return err
			}
		}
		if k >= limit {
			return nil
		}
		waited := time.Now()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case now = <-ticker.C:
		}
		g.ctx.AddIdle(time.Since(waited)) // waiting for the rate limit is idle, as in Flink
	}
}

// emit generates one batch of at most n records starting at the subtask's
// k-th record, advances k and hands the batch downstream.
func (g *generatorSource) emit(out runtime.Collector, k *uint64, n uint64) error {
	g.w.Reset()
	step := uint64(g.parallelism)
	seq := uint64(g.subtask) + *k*step
	n = min(n, maxBatchRecords)
	buf, ends := g.w.Buf, g.ends[:0]
	i := uint64(0)
	for ; i < n && len(buf) < maxBatchBytes; i++ {
		buf = g.preset.appendRecord(buf, seq)
		ends = binary.LittleEndian.AppendUint32(ends, uint32(len(buf))) // a key-by need not walk them again
		seq += step
	}
	g.w.Buf, g.w.Count, g.ends = buf, int(i), ends
	*k += i
	return runtime.EmitWithEnds(out, 0, g.w.Buf, g.w.Count, ends)
}
