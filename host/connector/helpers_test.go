package connector

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

// record is one emitted record, decoded for assertions.
type record struct {
	time    int64
	hasTime bool
	key     []byte
	value   []byte // raw msgpack
	json    string // the value as JSON
}

// collector keeps every batch it is given, checking each one.
type collector struct {
	t       testing.TB
	mu      sync.Mutex
	records []record
	batches int
	// onEmit, when set, runs after each batch (e.g. to cancel).
	onEmit func(c *collector)
}

func (c *collector) Emit(port int, buf []byte, count int) error {
	c.t.Helper()
	if port != 0 {
		c.t.Errorf("emit on port %d, want 0", port)
	}
	if count > maxBatchRecords {
		c.t.Errorf("batch of %d records, limit %d", count, maxBatchRecords)
	}
	rd := abi.NewReader(buf, count)
	c.mu.Lock()
	for rd.Next() {
		r := rd.Record()
		j, err := codec.MsgpackToJSON(nil, r.Value)
		if err != nil {
			c.t.Fatalf("record value is not valid msgpack: %v", err)
		}
		c.records = append(c.records, record{time: r.Time, hasTime: r.HasTime, key: r.Key,
			value: append([]byte(nil), r.Value...), json: string(j)})
	}
	c.batches++
	c.mu.Unlock()
	if err := rd.Err(); err != nil {
		c.t.Fatalf("bad batch: %v", err)
	}
	if c.onEmit != nil {
		c.onEmit(c)
	}
	return nil
}

func (c *collector) jsons() []string {
	out := make([]string, len(c.records))
	for i, r := range c.records {
		out[i] = r.json
	}
	return out
}

func sourceSpec(id, typ string, opts map[string]any) *pipeline.Operator {
	return &pipeline.Operator{ID: id, Kind: pipeline.KindSource, Source: &pipeline.Connector{Type: typ, Options: opts}}
}

func sinkSpec(id, typ string, opts map[string]any) *pipeline.Operator {
	return &pipeline.Operator{ID: id, Kind: pipeline.KindSink, Sink: &pipeline.Connector{Type: typ, Options: opts}}
}

// runSource opens, runs and closes one subtask of a source and returns
// what it emitted.
func runSource(t testing.TB, b *Builtin, spec *pipeline.Operator, subtask, parallelism int) (*collector, runtime.Source) {
	t.Helper()
	src, err := b.Source(spec, subtask, parallelism)
	if err != nil {
		t.Fatalf("Source: %v", err)
	}
	c := &collector{t: t}
	if err := src.Open(&runtime.OpenContext{Operator: spec.ID, Subtask: subtask, Parallelism: parallelism}); err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := src.Run(context.Background(), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := src.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return c, src
}

// runSourceErr runs a source that must fail and returns its error.
func runSourceErr(t *testing.T, b *Builtin, spec *pipeline.Operator, subtask, parallelism int) (*collector, error) {
	t.Helper()
	src, err := b.Source(spec, subtask, parallelism)
	if err != nil {
		return nil, err
	}
	c := &collector{t: t}
	if err := src.Open(&runtime.OpenContext{Operator: spec.ID, Subtask: subtask, Parallelism: parallelism}); err != nil {
		return c, err
	}
	defer src.Close()
	return c, src.Run(context.Background(), c)
}

// batchOf encodes JSON values as one batch of records without time or key.
func batchOf(t testing.TB, values ...string) ([]byte, int) {
	t.Helper()
	var w abi.Writer
	for _, v := range values {
		b, err := codec.JSONToMsgpack(appendNoTimeNoKey(w.Buf), []byte(v))
		if err != nil {
			t.Fatalf("JSONToMsgpack(%s): %v", v, err)
		}
		w.Buf = b
		w.Count++
	}
	return w.Buf, w.Count
}

func wantErrContaining(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}
