package connector

import (
	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
)

// What each built-in connector guarantees when the job checkpoints, for
// `host plan`. TestGuaranteesMatchTheConnectors holds the table to the
// code: a source said to replay is a CheckpointedSource, a sink said to be
// exactly-once a Snapshotter and CheckpointListener.

// Replay says how a source comes back after a restore.
type Replay struct {
	// Replayable: its position is in the checkpoint and a restore goes on
	// from it, so nothing is read twice or lost.
	Replayable bool
	// Lossy: what it read since the checkpoint cannot be read again (its
	// input is gone): records in flight at a failure are lost.
	Lossy bool
	Why   string
}

// SourceReplay describes a source connector of type typ, from its spec
// (spec.Connector.Replayable).
func SourceReplay(typ string) Replay {
	c := Set().Lookup(spec.Source, typ)
	switch {
	case c == nil:
		return Replay{Why: "not a built-in source: its position is not known to be checkpointed (at-least-once at best)"}
	case c.Replayable:
		why := "its position is checkpointed; a restore goes on from it"
		if w, ok := replayWhy[typ]; ok {
			why = w
		}
		return Replay{Replayable: true, Why: why}
	}
	return Replay{Lossy: true, Why: typ + " cannot replay: a checkpointed job reading it is at-least-once at best, and what it read since the last checkpoint is lost on a failure"}
}

// replayWhy says how a replayable built-in source keeps its position.
var replayWhy = map[string]string{
	"file":      "its position (byte offset, line) is checkpointed; a restore seeks back to it",
	"generator": "its sequence numbers are checkpointed; a restore, at any parallelism, goes on with the records not yet emitted",
	"elements":  "its position in the list is checkpointed; a restore goes on from it",
}

// SinkGuarantee is what a sink connector of type typ delivers when the
// job checkpoints in exactly-once mode, from its spec
// (spec.Connector.Guarantee): exactly-once or not, and why.
func SinkGuarantee(typ string) (exactlyOnce bool, why string) {
	c := Set().Lookup(spec.Sink, typ)
	if c != nil && c.Guarantee == spec.ExactlyOnce {
		switch typ {
		case "file":
			return true, "two-phase commit: part files are renamed to their final names when a checkpoint completes"
		case "discard":
			return true, "writes nothing"
		}
		return true, "transactional: what it wrote commits with the checkpoint"
	}
	if typ == "print" {
		return false, "not transactional: what it printed since the last checkpoint is printed again after a restore"
	}
	return false, "not transactional: what it wrote since the last checkpoint is written again after a restore"
}

// JobGuarantee is what a checkpointed job delivers end to end: the mode's
// guarantee when every source replays and every sink is exactly-once,
// else at-least-once; at best, since a lossy source (stdin) can lose what
// was in flight at a failure. reasons name the connectors that lower it.
func JobGuarantee(p *pipeline.Pipeline, exactlyOnceMode bool) (guarantee string, reasons []string) {
	exact, lossy := exactlyOnceMode, false
	if !exactlyOnceMode {
		reasons = append(reasons, "checkpointing mode at-least-once")
	}
	for _, op := range p.Operators {
		switch {
		case op.Source != nil:
			r := SourceReplay(op.Source.Type)
			if !r.Replayable {
				exact = false
				reasons = append(reasons, "source "+op.ID+" ("+op.Source.Type+") does not replay")
			}
			lossy = lossy || r.Lossy
		case op.Sink != nil:
			if ok, _ := SinkGuarantee(op.Sink.Type); !ok {
				exact = false
				reasons = append(reasons, "sink "+op.ID+" ("+op.Sink.Type+") is not transactional")
			}
		}
	}
	switch {
	case exact:
		return "exactly-once", nil
	case lossy:
		return "at-least-once at best", reasons
	}
	return "at-least-once", reasons
}
