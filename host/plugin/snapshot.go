package plugin

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/runtime"
)

// StatefulOperator is the Operator of a plugin that exports
// abi.ExportSnapshot and abi.ExportRestore: it keeps operator state in its
// own memory, which checkpoints take as Split elements (Flink's operator
// ListState). Set.Operator returns one for such a plugin, a plain
// *Operator otherwise, so a plugin without the exports is checkpointed as
// before: its keyed state only.
type StatefulOperator struct{ *Operator }

var _ runtime.Snapshotter = StatefulOperator{}

// Stateful returns o as a runtime.Snapshotter when its plugin exports the
// operator-state calls, else o itself.
func (o *Operator) Stateful() runtime.Operator {
	if o.r.m.keepsOperatorState() {
		return StatefulOperator{o}
	}
	return o
}

// keepsOperatorState reports whether the module exports both
// operator-state calls (the ABI checks refuse one without the other).
func (m *Module) keepsOperatorState() bool {
	_, s := m.bin.export(abi.ExportSnapshot)
	_, r := m.bin.export(abi.ExportRestore)
	return s && r
}

// snapshotLimit is how many bytes a snapshot may emit: the instance's
// memory limit, since operator state lives in guest memory.
func (in *instance) snapshotLimit() int64 {
	return int64(in.m.host.cfg.MemoryLimitPages) * 65536
}

// SnapshotState calls sluice_snapshot, under the call limits of every
// call, and returns each msgpack value it emitted as one Split element. A
// failed call (an error status, a trap, a spent budget, a snapshot past
// the limit) is an error naming the plugin, operator and subtask: the
// engine declines the checkpoint with it. A guest that answers
// StatusUnsupported keeps no operator state: runtime.ErrNoOperatorState.
func (o StatefulOperator) SnapshotState(id checkpoint.ID) (checkpoint.SubtaskState, error) {
	var st checkpoint.SubtaskState
	if o.closed || !o.r.opened {
		return st, o.errorf(abi.ExportSnapshot, "checkpoint %d: the operator is not open", id)
	}
	in, err := o.r.get()
	if err != nil {
		return st, err
	}
	status, err := in.invoke(expSnapshot, outState)
	if err != nil {
		o.r.settle()
		if status == abi.StatusUnsupported && in.c.refusal == nil {
			return st, runtime.ErrNoOperatorState
		}
		return st, err
	}
	out := in.c.out
	st.Split = make([][]byte, 0, in.c.count)
	for off := 0; off < len(out); {
		end, err := abi.Skip(out, off) // checked by the emit already
		if err != nil {
			return checkpoint.SubtaskState{}, in.fail(abi.ExportSnapshot, fmt.Errorf("%w: %w", ErrMalformedOutput, err))
		}
		st.Split = append(st.Split, append([]byte(nil), out[off:end]...))
		off = end
	}
	return st, nil
}

// RestoreState calls sluice_restore once per Split element, in the order
// the checkpoint gives them, after open and before the first batch. Union
// elements and committables are not a plugin's: a checkpoint that holds
// them for it is refused.
func (o StatefulOperator) RestoreState(r checkpoint.Restore) error {
	if len(r.Union)+len(r.Committables) > 0 {
		return o.errorf(abi.ExportRestore, "the checkpoint holds %d union elements and %d committables for a plugin, which keeps only split operator state", len(r.Union), len(r.Committables))
	}
	for i, e := range r.Split {
		if _, err := o.r.call(expRestore, outNone, e, func(s []uint64, ptr uint32) {
			s[0], s[1] = uint64(ptr), uint64(len(e))
		}); err != nil {
			var pe *PluginError
			if errors.As(err, &pe) && pe.Status == abi.StatusUnsupported {
				return fmt.Errorf("element %d of %d: the checkpoint holds operator state for the plugin, whose operator keeps none now: %w", i+1, len(r.Split), err)
			}
			return fmt.Errorf("element %d of %d: %w", i+1, len(r.Split), err)
		}
	}
	return nil
}
