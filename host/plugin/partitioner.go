package plugin

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// edgeAdapter is what a partitioner and a key selector share: an
// instance opened lazily, on the first call, for the upstream subtask of
// an edge.
type edgeAdapter struct {
	r       runner
	args    openArgs
	export  string
	closed  bool
	openErr error
}

func (m *Module) newEdge(ctx context.Context, from, to string, subtask, parallelism, maxParallelism int, config map[string]any, export string) (edgeAdapter, error) {
	e := edgeAdapter{
		r:      runner{m: m, ctx: ctx, who: target{edge: plan.EdgeKey(from, to), subtask: subtask, parallelism: parallelism}, logDropped: new(atomic.Int64)},
		export: export,
	}
	if _, ok := m.bin.export(export); !ok {
		return e, e.errorf("the plugin has no export %s", export)
	}
	b, err := encodeConfig(config)
	if err != nil {
		return e, e.errorf("%w", err)
	}
	e.args = openArgs{config: b, subtask: int32(subtask), parallelism: int32(parallelism), maxParallelism: int32(maxParallelism)}
	return e, nil
}

func (e *edgeAdapter) ready() error {
	if e.closed {
		return e.errorf("the plugin instance was %w", errClosed)
	}
	if !e.r.opened {
		return e.r.open(e.args)
	}
	return nil
}

func (e *edgeAdapter) Close() error {
	e.closed = true
	e.r.drop()
	return nil
}

func (e *edgeAdapter) errorf(format string, args ...any) error {
	return &PluginError{
		Plugin: e.r.m.name, Edge: e.r.who.edge, Subtask: e.r.who.subtask, Parallelism: e.r.who.parallelism,
		Export: e.export, Cause: fmt.Errorf(format, args...),
	}
}

// Partitioner adapts a plugin's sluice_partition to
// runtime.CustomPartitioner.
type Partitioner struct{ edgeAdapter }

var _ runtime.CustomPartitioner = (*Partitioner)(nil)

// NewPartitioner returns a custom partitioner over m for the upstream
// subtask of edge from->to. It opens on its first call with config,
// subtask, parallelism and max parallelism.
func (m *Module) NewPartitioner(ctx context.Context, from, to string, subtask, parallelism, maxParallelism int, config map[string]any) (*Partitioner, error) {
	e, err := m.newEdge(ctx, from, to, subtask, parallelism, maxParallelism, config, abi.ExportPartition)
	if err != nil {
		return nil, err
	}
	return &Partitioner{e}, nil
}

// Partition calls sluice_partition over count records and reads exactly
// count little-endian int32 channels into out. Values outside [0, n) are
// returned as they are: the engine reports them.
func (p *Partitioner) Partition(batch []byte, count, n int, out []int32) error {
	if err := p.ready(); err != nil {
		return err
	}
	if count == 0 {
		return nil
	}
	if len(out) < count {
		return p.errorf("out holds %d channels for %d records", len(out), count)
	}
	if count < 0 || count > 1<<31-1 || n <= 0 || n > 1<<31-1 {
		return p.errorf("count %d and channels %d out of range", count, n)
	}
	in, err := p.r.call(expPartition, outChannels, batch, func(s []uint64, ptr uint32) {
		s[0], s[1], s[2], s[3] = uint64(ptr), uint64(len(batch)), uint64(count), uint64(n)
	})
	if err != nil {
		return err
	}
	if in.c.count != count {
		return in.fail(p.export, fmt.Errorf("%w: emitted %d channel indices for %d records", ErrMalformedOutput, in.c.count, count))
	}
	for i := 0; i < count; i++ {
		out[i] = int32(binary.LittleEndian.Uint32(in.c.out[4*i:]))
	}
	return nil
}

// KeySelector adapts a key-selector plugin to runtime.KeySelector: the
// host calls sluice_process on port 0 and the guest emits, on port 0, the
// key of each record as count concatenated msgpack values.
type KeySelector struct{ edgeAdapter }

var _ runtime.KeySelector = (*KeySelector)(nil)

// NewKeySelector returns a key selector over m for the upstream subtask
// of edge from->to, opened on its first call.
func (m *Module) NewKeySelector(ctx context.Context, from, to string, subtask, parallelism, maxParallelism int, config map[string]any) (*KeySelector, error) {
	e, err := m.newEdge(ctx, from, to, subtask, parallelism, maxParallelism, config, abi.ExportProcess)
	if err != nil {
		return nil, err
	}
	return &KeySelector{e}, nil
}

// Keys appends the keys of count records to dst.
func (k *KeySelector) Keys(batch []byte, count int, dst []byte) ([]byte, error) {
	if err := k.ready(); err != nil {
		return dst, err
	}
	if count == 0 {
		return dst, nil
	}
	if count < 0 || count > 1<<31-1 {
		return dst, k.errorf("a batch count of %d", count)
	}
	in, err := k.r.call(expProcess, outValues, batch, func(s []uint64, ptr uint32) {
		s[0], s[1], s[2], s[3] = 0, uint64(ptr), uint64(len(batch)), uint64(count)
	})
	if err != nil {
		return dst, err
	}
	if in.c.count != count {
		return dst, in.fail(k.export, fmt.Errorf("%w: emitted %d keys for %d records", ErrMalformedOutput, in.c.count, count))
	}
	return append(dst, in.c.out...), nil
}
