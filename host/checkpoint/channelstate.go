package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Channel state: the in-flight data an unaligned checkpoint persists
// (Flink's FLIP-76 input channel state). A task whose head operator has
// input channels acknowledges every checkpoint of a job with unaligned
// checkpoints with one more SubtaskState, under the operator id
// ChannelStateID(head): its Split elements are the data messages that were
// in flight at its snapshot, in the order it delivered them, one
// ChannelBatch each (docs/checkpoints.md, "Channel state"). It is stored
// like any operator state; only its restore differs (Reader.ChannelState).

// channelStateSuffix ends the pseudo operator id of channel state; "#" is
// not allowed in a pipeline's operator ids, so it names no operator.
const channelStateSuffix = "#channel-state"

// ChannelStateID is the id the channel state of operator head (the head
// of its task) is stored under.
func ChannelStateID(head string) string { return head + channelStateSuffix }

// ChannelStateOf reports which operator id names channel state of, if
// id is a channel state id.
func ChannelStateOf(id string) (head string, ok bool) {
	return strings.CutSuffix(id, channelStateSuffix)
}

// WithChannelState returns ids with the channel state id of each: the
// operators a job restoring from a checkpoint can take state for
// (Reader.CheckOperators).
func WithChannelState(ids []string) []string {
	out := make([]string, 0, 2*len(ids))
	for _, id := range ids {
		out = append(out, id, ChannelStateID(id))
	}
	return out
}

// channelBatchVersion starts every ChannelBatch element.
const channelBatchVersion = 1

// ChannelBatch is one data message of channel state: the input of the
// operator it was delivered to (0, or 1 for a two-input operator's
// second), how many records it holds, and the records in the abi wire
// format.
type ChannelBatch struct {
	Input int
	Count int
	Data  []byte
}

// AppendChannelBatch appends b's element to dst: a version byte (1), the
// input and the record count as uvarints, then the records.
func AppendChannelBatch(dst []byte, b ChannelBatch) []byte {
	dst = append(dst, channelBatchVersion)
	dst = binary.AppendUvarint(dst, uint64(b.Input))
	dst = binary.AppendUvarint(dst, uint64(b.Count))
	return append(dst, b.Data...)
}

// ParseChannelBatch reads an element AppendChannelBatch wrote; Data
// shares elem.
func ParseChannelBatch(elem []byte) (ChannelBatch, error) {
	if len(elem) == 0 || elem[0] != channelBatchVersion {
		return ChannelBatch{}, fmt.Errorf("channel state element of %d bytes: not version %d", len(elem), channelBatchVersion)
	}
	rest := elem[1:]
	input, n := binary.Uvarint(rest)
	if n <= 0 || input > 1 {
		return ChannelBatch{}, errors.New("channel state element: bad input index")
	}
	rest = rest[n:]
	count, n := binary.Uvarint(rest)
	if n <= 0 || count > uint64(len(rest)) {
		return ChannelBatch{}, errors.New("channel state element: bad record count")
	}
	return ChannelBatch{Input: int(input), Count: int(count), Data: rest[n:]}, nil
}

// ErrRescaleChannelState refuses to restore channel state at another
// parallelism.
var ErrRescaleChannelState = errors.New("an unaligned checkpoint with in-flight data cannot be restored at another parallelism")

// ChannelState returns the channel state subtask of operator head
// restores, decoded, in the order it is to be replayed. As in Flink's
// first unaligned checkpoints, in-flight data cannot be rescaled: at
// another parallelism than the checkpoint's it is refused
// (ErrRescaleChannelState) unless there is none, and the error says to
// take a savepoint (always aligned) first.
func (r *Reader) ChannelState(head string, subtask, parallelism, maxParallelism int) ([]ChannelBatch, error) {
	id := ChannelStateID(head)
	om, ok := r.Operator(id)
	if !ok || !om.hasState() {
		return nil, nil
	}
	if om.Parallelism != parallelism {
		return nil, fmt.Errorf("restoring operator %q subtask %d of %d from %s: %w: it was taken at parallelism %d; restore it at %d, or take a savepoint (savepoints are always aligned) and restore that",
			head, subtask, parallelism, r.Path, ErrRescaleChannelState, om.Parallelism, om.Parallelism)
	}
	st, err := r.Restore(id, subtask, parallelism, maxParallelism)
	if err != nil {
		return nil, err
	}
	out := make([]ChannelBatch, 0, len(st.Split))
	for i, e := range st.Split {
		b, err := ParseChannelBatch(e)
		if err != nil {
			return nil, fmt.Errorf("restoring operator %q subtask %d from %s: element %d: %w", head, subtask, r.Path, i, err)
		}
		out = append(out, b)
	}
	return out, nil
}
