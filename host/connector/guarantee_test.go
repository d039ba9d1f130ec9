package connector

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

// TestGuaranteesMatchTheConnectors: host plan's claims are the code's: a
// source said to replay is a CheckpointedSource and one not said to is
// not; a sink said to be exactly-once commits on checkpoints (but discard,
// which writes nothing).
func TestGuaranteesMatchTheConnectors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "in.jsonl", "{}\n")
	b := &Builtin{Root: dir, Checkpointed: true}
	sourceOpts := map[string]map[string]any{
		"generator": {"preset": "sequence", "count": 1},
		"elements":  {"values": []any{1}},
		"file":      {"path": "in.jsonl"},
		"stdin":     {},
		"kafka":     {"brokers": "127.0.0.1:1", "topics": []any{"t"}}, // built, not opened
	}
	for _, typ := range Set().Names(spec.Source) {
		src, err := b.Source(sourceSpec("s", typ, sourceOpts[typ]), 0, 1)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		_, implements := src.(runtime.CheckpointedSource)
		if r := SourceReplay(typ); r.Replayable != implements {
			t.Errorf("source %s: replayable %v, but CheckpointedSource %v", typ, r.Replayable, implements)
		}
	}
	sinkOpts := map[string]map[string]any{"file": {"path": "out.jsonl"},
		"kafka": {"brokers": "127.0.0.1:1", "topic": "t"}}
	for _, typ := range Set().Names(spec.Sink) {
		s, err := b.Sink(sinkSpec("k", typ, sinkOpts[typ]), 0, 1)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		_, snap := s.(runtime.Snapshotter)
		_, listen := s.(runtime.CheckpointListener)
		if exact, _ := SinkGuarantee(typ); exact != (snap && listen) && typ != "discard" {
			t.Errorf("sink %s: exactly-once %v, but Snapshotter %v, CheckpointListener %v", typ, exact, snap, listen)
		}
	}
}

func TestJobGuarantee(t *testing.T) {
	job := func(src, sink string) *pipeline.Pipeline {
		return &pipeline.Pipeline{Operators: []*pipeline.Operator{sourceSpec("in", src, nil), sinkSpec("out", sink, nil)}}
	}
	for _, c := range []struct {
		p      *pipeline.Pipeline
		exact  bool
		want   string
		reason string
	}{
		{job("file", "file"), true, "exactly-once", ""},
		{job("file", "file"), false, "at-least-once", "mode at-least-once"},
		{job("file", "print"), true, "at-least-once", "sink out (print) is not transactional"},
		{job("generator", "file"), true, "exactly-once", ""},
		{job("generator", "print"), true, "at-least-once", "sink out (print) is not transactional"},
		{job("stdin", "file"), true, "at-least-once at best", "source in (stdin) does not replay"},
	} {
		got, reasons := JobGuarantee(c.p, c.exact)
		if got != c.want || !strings.Contains(strings.Join(reasons, "; "), c.reason) {
			t.Errorf("%s → %s, exactly-once mode %v: %q %v, want %q (%s)", c.p.Operators[0].Source.Type, c.p.Operators[1].Sink.Type, c.exact, got, reasons, c.want, c.reason)
		}
	}
}
