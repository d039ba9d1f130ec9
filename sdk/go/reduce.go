package sdk

import (
	"errors"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
)

// reduceSlot is the keyed-state slot where Reduce keeps its accumulator.
const reduceSlot = 0

// reduce runs a keyed reduce step: read the accumulator of r's key, combine,
// store the result and emit it. The first record of a key is the
// accumulator as it is.
func (e *engine) reduce(op *Operator, r Record) error {
	key := r.v.keyRaw()
	if key == nil {
		return errState("reduce needs a keyed input: the record has no key")
	}
	res := r
	stored, found, err := e.stateGet(reduceSlot, key)
	if err != nil {
		return err
	}
	if found {
		if abi.TypeOf(stored) != abi.TypeMap {
			return errState("reduce: the stored accumulator is not a msgpack map")
		}
		acc := e.arena.get()
		acc.value, acc.key = stored, key
		acc.time, acc.hasTime = r.v.timeOf()
		if res, err = op.reduceFn(Record{acc}, r); err != nil {
			return err
		}
		if res.v == nil {
			return errors.New("reduce returned the zero Record")
		}
	}
	time, hasTime := r.v.timeOf()
	resTime, resHasTime := res.v.timeOf()
	if resHasTime {
		time = resTime
	}
	if k := res.v.keyRaw(); k != nil {
		key = k
	}
	w := &e.outs[0].w
	buf, start, err := appendEnvelope(w.Buf, res.v, time, hasTime || resHasTime, key)
	if err != nil {
		return err
	}
	if st := abi.Status(hostcall.StatePut(reduceSlot, r.v.keyRaw(), buf[start:])); st != abi.StatusOK {
		return &Error{Status: st, Text: "state_put: " + st.String()}
	}
	w.Buf = buf
	w.Count++
	return nil
}
