package runtime

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
)

// This file holds in-memory fakes of the connectors and plugins, so the
// engine is tested on its own: sources built from the pipeline's options,
// sinks that keep every record with its subtask, and small plugins.

// enc encodes a record value: a map of the given key/value pairs, in order.
func enc(kv ...any) []byte {
	b := abi.AppendMapHeader(nil, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		b = abi.AppendStr(b, kv[i].(string))
		b = encValue(b, kv[i+1])
	}
	return b
}

func encValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return abi.AppendNil(b)
	case bool:
		return abi.AppendBool(b, x)
	case int:
		return abi.AppendInt(b, int64(x))
	case int64:
		return abi.AppendInt(b, x)
	case float64:
		return abi.AppendFloat(b, x)
	case string:
		return abi.AppendStr(b, x)
	case []any:
		b = abi.AppendArrayHeader(b, len(x))
		for _, e := range x {
			b = encValue(b, e)
		}
		return b
	case pipeline.Map: // from YAML, keys in file order
		b = abi.AppendMapHeader(b, len(x.Keys))
		for _, k := range x.Keys {
			b = encValue(abi.AppendStr(b, k), x.Values[k])
		}
		return b
	case *pipeline.Map:
		return encValue(b, *x)
	case map[string]any: // keys sorted, for determinism
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = abi.AppendMapHeader(b, len(keys))
		for _, k := range keys {
			b = encValue(abi.AppendStr(b, k), x[k])
		}
		return b
	}
	panic(fmt.Sprintf("enc: %T", v))
}

// setField returns value with field name set to the msgpack raw (appended
// when absent).
func setField(value []byte, name string, raw []byte) []byte {
	n, off, _ := abi.Len(value)
	var body []byte
	found := false
	for i := 0; i < n; i++ {
		kEnd, _ := abi.Skip(value, off)
		vEnd, _ := abi.Skip(value, kEnd)
		k, _ := abi.ReadStr(value[off:kEnd])
		body = append(body, value[off:kEnd]...)
		if string(k) == name {
			body = append(body, raw...)
			found = true
		} else {
			body = append(body, value[kEnd:vEnd]...)
		}
		off = vEnd
	}
	if !found {
		body = append(abi.AppendStr(body, name), raw...)
		n++
	}
	return append(abi.AppendMapHeader(nil, n), body...)
}

func intField(value []byte, name string) int64 {
	raw, ok, err := abi.MapField(value, name)
	if err != nil || !ok {
		panic(fmt.Sprintf("no int field %q in %s", name, preview(value)))
	}
	n, err := abi.ReadInt(raw)
	if err != nil {
		panic(err)
	}
	return n
}

// outRec is a record a fake sink received.
type outRec struct {
	Subtask int
	JSON    string
	Value   []byte
	Key     string // the envelope key as JSON, "" when nil
}

// fakeConnectors makes sources from "elements" (values, split across
// subtasks by index mod parallelism) and "generator" (preset sequence:
// {"n": i}, unbounded without count), and sinks that keep what they get.
type fakeConnectors struct {
	mu      sync.Mutex
	out     map[string][]outRec
	before  map[string]func(count int) // sink op -> called before each batch
	open    atomic.Int64               // instances not closed yet
	fail    map[string]error           // sink op -> Open error
	emitted atomic.Int64               // records the sources emitted
}

func newFakeConnectors() *fakeConnectors {
	return &fakeConnectors{out: map[string][]outRec{}, before: map[string]func(int){}, fail: map[string]error{}}
}

func (f *fakeConnectors) Bounded(c *pipeline.Connector) bool { return c.Bounded() }

func (f *fakeConnectors) Source(spec *pipeline.Operator, subtask, parallelism int) (Source, error) {
	s := &fakeSource{f: f, count: -1}
	switch spec.Source.Type {
	case "elements":
		for i, v := range spec.Source.Options["values"].([]any) {
			if i%parallelism == subtask {
				s.values = append(s.values, encValue(nil, v))
			}
		}
		s.count = int64(len(s.values))
	case "generator":
		s.seq, s.step = int64(subtask), int64(parallelism)
		if c, ok := spec.Source.Options["count"]; ok {
			n := int64(c.(int))
			s.count = (n - int64(subtask) + int64(parallelism) - 1) / int64(parallelism)
		}
	default:
		return nil, fmt.Errorf("fake: source type %q", spec.Source.Type)
	}
	f.open.Add(1)
	return s, nil
}

func (f *fakeConnectors) Sink(spec *pipeline.Operator, subtask, parallelism int) (Operator, error) {
	f.open.Add(1)
	return &fakeSink{f: f, id: spec.ID}, nil
}

func (f *fakeConnectors) records(id string) []outRec {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]outRec(nil), f.out[id]...)
}

// jsons returns the records sink id got, as sorted JSON lines (a multiset).
func (f *fakeConnectors) jsons(id string) []string {
	var out []string
	for _, r := range f.records(id) {
		out = append(out, r.JSON)
	}
	sort.Strings(out)
	return out
}

type fakeSource struct {
	f         *fakeConnectors
	values    [][]byte
	seq, step int64
	count     int64 // -1: unbounded
	closed    bool
}

func (s *fakeSource) Open(*OpenContext) error { return nil }
func (s *fakeSource) Total() int64            { return s.count }
func (s *fakeSource) Close() error {
	if s.closed {
		return errors.New("fake source closed twice")
	}
	s.closed = true
	s.f.open.Add(-1)
	return nil
}

func (s *fakeSource) Run(ctx context.Context, out Collector) error {
	var w abi.Writer
	var ends []byte
	batches := 0
	emit := func() error {
		if w.Count == 0 {
			return nil
		}
		s.f.emitted.Add(int64(w.Count))
		var err error
		if batches++; batches%2 == 0 { // every other batch with its ends, as the generator sends them
			err = EmitWithEnds(out, 0, w.Buf, w.Count, ends)
		} else {
			err = out.Emit(0, w.Buf, w.Count)
		}
		w.Reset()
		ends = ends[:0]
		return err
	}
	for i := int64(0); s.count < 0 || i < s.count; i++ {
		if s.values != nil {
			w.Append(0, false, nil, s.values[i])
		} else {
			w.Append(0, false, nil, enc("n", s.seq+i*s.step))
		}
		ends = binary.LittleEndian.AppendUint32(ends, uint32(len(w.Buf)))
		if w.Count == 100 {
			if err := emit(); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return emit()
}

type fakeSink struct {
	f      *fakeConnectors
	id     string
	sub    int
	closed bool
}

func (s *fakeSink) Open(ctx *OpenContext) error {
	s.sub = ctx.Subtask
	return s.f.fail[s.id]
}

func (s *fakeSink) Process(_ int, b []byte, count int, _ Collector) error {
	if hook := s.f.before[s.id]; hook != nil {
		hook(count)
	}
	rd := abi.NewReader(b, count)
	var got []outRec
	for rd.Next() {
		r := rd.Record()
		v := append([]byte(nil), r.Value...)
		o := outRec{Subtask: s.sub, JSON: renderJSON(v, 0), Value: v}
		if r.Key != nil {
			o.Key = renderJSON(r.Key, 0)
		}
		got = append(got, o)
	}
	s.f.mu.Lock()
	s.f.out[s.id] = append(s.f.out[s.id], got...)
	s.f.mu.Unlock()
	return rd.Err()
}

func (s *fakeSink) Close(Collector) error {
	if s.closed {
		return errors.New("fake sink closed twice")
	}
	s.closed = true
	s.f.open.Add(-1)
	return nil
}

// planYAML parses and plans a pipeline written inline.
func planYAML(t testing.TB, src string, edit func(*pipeline.Pipeline)) *plan.JobGraph {
	t.Helper()
	p, err := pipeline.Parse("test.yaml", []byte(strings.TrimSpace(src)+"\n"), pipeline.ParseOptions{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if edit != nil {
		edit(p)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return g
}

// runYAML plans and runs src with fakes and returns them and the result.
func runYAML(t testing.TB, src string, edit func(*pipeline.Pipeline), opts Options) (*fakeConnectors, *fakePlugins, *Result, error) {
	t.Helper()
	return runWith(t, context.Background(), newFakeConnectors(), src, edit, opts)
}

// runWith is runYAML with a context and prepared connectors; it also
// checks that every instance was closed.
func runWith(t testing.TB, ctx context.Context, conn *fakeConnectors, src string, edit func(*pipeline.Pipeline), opts Options) (*fakeConnectors, *fakePlugins, *Result, error) {
	t.Helper()
	plug := newFakePlugins()
	res, err := Run(ctx, planYAML(t, src, edit), Deps{Plugins: plug, Connectors: conn, Options: opts})
	if n := conn.open.Load(); n != 0 {
		t.Errorf("%d source/sink instances left open", n)
	}
	if n := plug.open.Load(); n != 0 {
		t.Errorf("%d plugin instances left open", n)
	}
	return conn, plug, res, err
}

func decodeJSON(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}
