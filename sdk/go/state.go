package sdk

import (
	"strconv"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
)

// State is one slot of the host-managed keyed state of a KeyedProcess,
// scoped to the key of the record being processed. The host stores the
// values per key group, so they survive rescaling and checkpoints; the
// guest keeps nothing. Slots number independent values (Reduce uses 0).
//
// Values read are views valid until the next read of the same slot or the
// end of the call.
type State struct{ slot int }

// maxSlots bounds the slot numbers a guest may use.
const maxSlots = 1024

// Get returns the stored value; ok is false when there is none.
func (s State) Get() (v Value, ok bool, err error) {
	key, err := stateKey(s.slot)
	if err != nil {
		return Value{}, false, err
	}
	raw, ok, err := eng.stateGet(s.slot, key)
	return Value{raw}, ok, err
}

// GetRecord returns the stored value, a map, as a Record that can be
// edited and emitted or put back with PutRecord.
func (s State) GetRecord() (r Record, ok bool, err error) {
	v, ok, err := s.Get()
	if err != nil || !ok {
		return Record{}, ok, err
	}
	if v.Type() != abi.TypeMap {
		return Record{}, false, errState("state slot " + strconv.Itoa(s.slot) + " does not hold a map")
	}
	w := eng.arena.get()
	w.value = v.raw
	return Record{w}, true, nil
}

// PutInt stores an integer.
func (s State) PutInt(v int64) error { return s.put(abi.AppendInt(eng.tmp[:0], v)) }

// PutFloat stores a float.
func (s State) PutFloat(v float64) error { return s.put(abi.AppendFloat(eng.tmp[:0], v)) }

// PutStr stores a string.
func (s State) PutStr(v string) error { return s.put(abi.AppendStr(eng.tmp[:0], v)) }

// PutBool stores a boolean.
func (s State) PutBool(v bool) error { return s.put(abi.AppendBool(eng.tmp[:0], v)) }

// PutRaw stores one pre-encoded msgpack value (copied by the host).
func (s State) PutRaw(raw []byte) error {
	if end, err := abi.Skip(raw, 0); err != nil || end != len(raw) {
		return errState("PutRaw: not exactly one msgpack value")
	}
	return s.put(append(eng.tmp[:0], raw...))
}

// PutRecord stores the fields of r (a map) with its edits applied.
func (s State) PutRecord(r Record) error {
	if r.v == nil {
		return errState("PutRecord of the zero Record")
	}
	b, err := appendValue(eng.tmp[:0], r.v)
	if err != nil {
		return err
	}
	return s.put(b)
}

// Delete removes the stored value.
func (s State) Delete() error {
	key, err := stateKey(s.slot)
	if err != nil {
		return err
	}
	return hostStatus("state_del", hostcall.StateDel(int32(s.slot), key))
}

func (s State) put(val []byte) error {
	eng.tmp = val[:0]
	key, err := stateKey(s.slot)
	if err != nil {
		return err
	}
	return hostStatus("state_put", hostcall.StatePut(int32(s.slot), key, val))
}

// stateKey checks that keyed state may be used now and returns the key.
func stateKey(slot int) ([]byte, error) {
	if reg.op == nil || !reg.op.keyed {
		return nil, errState("keyed state is only for KeyedProcess and Reduce")
	}
	if slot < 0 || slot >= maxSlots {
		return nil, errState("state slot " + strconv.Itoa(slot) + " outside [0, 1024)")
	}
	return currentKey()
}

func hostStatus(call string, st int32) error {
	if s := abi.Status(st); s != abi.StatusOK {
		return &Error{Status: s, Text: call + ": " + s.String()}
	}
	return nil
}

// stateGet reads (slot, key) into the slot's buffer, growing it when the
// host says the value is larger.
func (e *engine) stateGet(slot int, key []byte) ([]byte, bool, error) {
	for len(e.states) <= slot {
		e.states = append(e.states, make([]byte, 0, 256))
	}
	buf := e.states[slot]
	for try := 0; ; try++ {
		n := hostcall.StateGet(int32(slot), key, buf[:0])
		switch {
		case n == -1:
			return nil, false, nil
		case n < 0:
			return nil, false, hostStatus("state_get", n)
		case int(n) <= cap(buf):
			return buf[:n], true, nil
		case try > 0:
			return nil, false, errState("state_get: the value grew between two reads")
		}
		buf = make([]byte, 0, int(n))
		e.states[slot] = buf
	}
}
