package sdk

import "github.com/sluicehq/sluice/abi"

// Snapshotter is operator state (Flink's operator list state): what an
// operator keeps in its own variables beyond keyed state (a running count,
// a buffer), declared with Operator.State. At each checkpoint the host
// calls Snapshot, which returns the state as bytes (it must not change
// it); when the job starts from a checkpoint the host calls Restore after
// OnOpen and before the first record, once per snapshot the subtask gets.
// At the same parallelism that is its own snapshot; after a rescale it
// may be several (from several old subtasks) or none, so Restore merges
// what it is given into the state (a count adds). An error from Snapshot
// declines the checkpoint (the job goes on); one from Restore fails the
// job's start. The bytes Restore is given are the SDK's until it returns:
// copy what it keeps.
type Snapshotter interface {
	Snapshot() ([]byte, error)
	Restore(snapshot []byte) error
}

// State declares the operator's operator state: s's Snapshot and Restore
// are called at checkpoints and restores (abi.ExportSnapshot). Keyed
// state (KeyedProcess, Reduce) is checkpointed by the host without it.
func (o *Operator) State(s Snapshotter) *Operator {
	o.state = s
	return o
}

// noState answers snapshot and restore for an operator that declared no
// operator state: the host then checkpoints none for it.
var noState = &Error{Status: abi.StatusUnsupported, Text: "the operator declares no operator state (sdk.Operator.State)"}

// snapshot implements sluice_snapshot: the state as one msgpack bin on
// port 0.
func (e *engine) snapshot() error {
	state, err := declaredState()
	if err != nil {
		return err
	}
	b, err := state.Snapshot()
	if err != nil {
		return err
	}
	e.beginCall()
	e.outs[0].w.Buf = abi.AppendBin(e.outs[0].w.Buf, b)
	e.outs[0].w.Count++
	return e.flush()
}

// restore implements sluice_restore: element is a bin that snapshot
// emitted.
func (e *engine) restore(element []byte) error {
	state, err := declaredState()
	if err != nil {
		return err
	}
	b, err := abi.ReadBin(element)
	if err != nil {
		return &Error{Status: abi.StatusMalformed, Text: "sluice_restore: the element is not the msgpack bin the SDK snapshots: " + err.Error()}
	}
	return state.Restore(b)
}

// declaredState is the registered operator's Snapshotter.
func declaredState() (Snapshotter, error) {
	switch {
	case reg.op == nil:
		return nil, errNoOperator
	case reg.op.state == nil:
		return nil, noState
	}
	return reg.op.state, nil
}
