package sdk

import (
	"encoding/binary"
	"math"

	"github.com/sluicehq/sluice/abi"
)

// partition implements sluice_partition: one little-endian i32 channel per
// record, computed from its envelope key, emitted on port 0.
func (e *engine) partition(batch []byte, count, n int32) error {
	op := reg.op
	if op == nil {
		return errNoOperator
	}
	if op.kind != abi.KindPartitioner {
		return unsupported("sluice_partition: the plugin is a " + string(op.kind) + ", not a partitioner")
	}
	if count < 0 || n <= 0 {
		return &Error{Status: abi.StatusMalformed, Text: "sluice_partition: count must be >= 0 and n > 0"}
	}
	e.beginCall()
	w := &e.outs[0].w
	rd := abi.NewReader(batch, int(count))
	for rd.Next() {
		c := op.partFn(Key{Value{rd.Record().Key}}, int(n))
		if c < math.MinInt32 || c > math.MaxInt32 {
			c = -1 // still out of range, as the host will report
		}
		w.Buf = binary.LittleEndian.AppendUint32(w.Buf, uint32(int32(c)))
		w.Count++
	}
	if err := rd.Err(); err != nil {
		return &Error{Status: abi.StatusMalformed, Text: "sluice_partition: " + err.Error()}
	}
	return e.flush()
}
