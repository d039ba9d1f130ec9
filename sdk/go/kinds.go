package sdk

import (
	"encoding/binary"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
)

// ListState is one slot of keyed list state for the current key, as
// Flink's ListState: elements (msgpack values) in the order they were
// added. The host keeps it, per key group, like State.
type ListState struct{ slot int }

// MapState is one slot of keyed map state for the current key, as Flink's
// MapState<String, V>: string user keys to msgpack values, iterated in
// ascending byte order of the keys.
type MapState struct{ slot int }

// MapEntry is one entry of a MapState; Value is a view like Get's.
type MapEntry struct {
	Key   string
	Value Value
}

// ListState returns list-state slot slot for the current key (KeyedProcess
// only). A slot holds one kind of state: the host refuses a slot used as a
// value and as a list.
func (Context) ListState(slot int) ListState { return ListState{slot: slot} }

// MapState returns map-state slot slot for the current key (KeyedProcess
// only).
func (Context) MapState(slot int) MapState { return MapState{slot: slot} }

// kindBufs are the read buffers of list and map slots: a read's views are
// valid until the next read of the same slot or the end of the call.
var kindBufs [][]byte

// readAll calls get until the buffer holds the whole result.
func readAll(call string, slot int, get func(buf []byte) int32) ([]byte, bool, error) {
	for len(kindBufs) <= slot {
		kindBufs = append(kindBufs, make([]byte, 0, 256))
	}
	buf := kindBufs[slot]
	for try := 0; ; try++ {
		n := get(buf[:0])
		switch {
		case n == -1:
			return nil, false, nil
		case n < 0:
			return nil, false, hostStatus(call, n)
		case int(n) <= cap(buf):
			return buf[:n], true, nil
		case try > 0:
			return nil, false, errState(call + ": the state grew between two reads")
		}
		buf = make([]byte, 0, int(n))
		kindBufs[slot] = buf
	}
}

// wireNext reads one u32-prefixed item of a list or map wire layout.
func wireNext(call string, b []byte) (item, rest []byte, err error) {
	if len(b) < 4 || uint64(binary.LittleEndian.Uint32(b)) > uint64(len(b)-4) {
		return nil, nil, errState(call + ": malformed answer from the host")
	}
	n := binary.LittleEndian.Uint32(b)
	return b[4 : 4+n], b[4+n:], nil
}

// Get returns the elements, nil when the list is empty.
func (l ListState) Get() ([]Value, error) {
	key, err := stateKey(l.slot)
	if err != nil {
		return nil, err
	}
	b, ok, err := readAll("state_list_get", l.slot, func(buf []byte) int32 { return hostcall.ListGet(int32(l.slot), key, buf) })
	if err != nil || !ok {
		return nil, err
	}
	var out []Value
	for len(b) > 0 {
		var v []byte
		if v, b, err = wireNext("state_list_get", b); err != nil {
			return nil, err
		}
		out = append(out, Value{v})
	}
	return out, nil
}

// AddInt appends an integer.
func (l ListState) AddInt(v int64) error { return l.add(abi.AppendInt(eng.tmp[:0], v)) }

// AddStr appends a string.
func (l ListState) AddStr(v string) error { return l.add(abi.AppendStr(eng.tmp[:0], v)) }

// AddFloat appends a float.
func (l ListState) AddFloat(v float64) error { return l.add(abi.AppendFloat(eng.tmp[:0], v)) }

// AddRaw appends one pre-encoded msgpack value.
func (l ListState) AddRaw(raw []byte) error {
	if end, err := abi.Skip(raw, 0); err != nil || end != len(raw) {
		return errState("ListState.AddRaw: not exactly one msgpack value")
	}
	return l.add(append(eng.tmp[:0], raw...))
}

// AddRecord appends the fields of r (a map) with its edits applied.
func (l ListState) AddRecord(r Record) error {
	if r.v == nil {
		return errState("ListState.AddRecord of the zero Record")
	}
	b, err := appendValue(eng.tmp[:0], r.v)
	if err != nil {
		return err
	}
	return l.add(b)
}

func (l ListState) add(val []byte) error {
	eng.tmp = val[:0]
	key, err := stateKey(l.slot)
	if err != nil {
		return err
	}
	return hostStatus("state_list_append", hostcall.ListAppend(int32(l.slot), key, val))
}

// Update replaces the list with vals (Flink's ListState.update); none
// clears it. vals may be views from Get of this slot.
func (l ListState) Update(vals []Value) error {
	key, err := stateKey(l.slot)
	if err != nil {
		return err
	}
	var wire []byte
	for _, v := range vals {
		wire = binary.LittleEndian.AppendUint32(wire, uint32(len(v.raw)))
		wire = append(wire, v.raw...)
	}
	return hostStatus("state_list_update", hostcall.ListUpdate(int32(l.slot), key, wire))
}

// Clear removes the list.
func (l ListState) Clear() error { return clearSlot(l.slot) }

func clearSlot(slot int) error {
	key, err := stateKey(slot)
	if err != nil {
		return err
	}
	return hostStatus("state_clear", hostcall.Clear(int32(slot), key))
}

// Get returns the value of user key k; ok is false when absent.
func (m MapState) Get(k string) (Value, bool, error) {
	key, err := stateKey(m.slot)
	if err != nil {
		return Value{}, false, err
	}
	b, ok, err := readAll("state_map_get", m.slot, func(buf []byte) int32 { return hostcall.MapGet(int32(m.slot), key, k, buf) })
	return Value{b}, ok, err
}

// PutInt sets k to an integer.
func (m MapState) PutInt(k string, v int64) error { return m.put(k, abi.AppendInt(eng.tmp[:0], v)) }

// PutStr sets k to a string.
func (m MapState) PutStr(k, v string) error { return m.put(k, abi.AppendStr(eng.tmp[:0], v)) }

// PutFloat sets k to a float.
func (m MapState) PutFloat(k string, v float64) error {
	return m.put(k, abi.AppendFloat(eng.tmp[:0], v))
}

// PutRaw sets k to one pre-encoded msgpack value.
func (m MapState) PutRaw(k string, raw []byte) error {
	if end, err := abi.Skip(raw, 0); err != nil || end != len(raw) {
		return errState("MapState.PutRaw: not exactly one msgpack value")
	}
	return m.put(k, append(eng.tmp[:0], raw...))
}

func (m MapState) put(k string, val []byte) error {
	eng.tmp = val[:0]
	key, err := stateKey(m.slot)
	if err != nil {
		return err
	}
	return hostStatus("state_map_put", hostcall.MapPut(int32(m.slot), key, k, val))
}

// Delete removes user key k (absent is not an error).
func (m MapState) Delete(k string) error {
	key, err := stateKey(m.slot)
	if err != nil {
		return err
	}
	return hostStatus("state_map_del", hostcall.MapDel(int32(m.slot), key, k))
}

// Contains reports whether the map holds user key k.
func (m MapState) Contains(k string) (bool, error) {
	key, err := stateKey(m.slot)
	if err != nil {
		return false, err
	}
	switch n := hostcall.MapContains(int32(m.slot), key, k); n {
	case 0, 1:
		return n == 1, nil
	default:
		return false, hostStatus("state_map_contains", n)
	}
}

// Entries returns every entry, user keys ascending (bytewise).
func (m MapState) Entries() ([]MapEntry, error) {
	key, err := stateKey(m.slot)
	if err != nil {
		return nil, err
	}
	b, ok, err := readAll("state_map_entries", m.slot, func(buf []byte) int32 { return hostcall.MapEntries(int32(m.slot), key, buf) })
	if err != nil || !ok {
		return nil, err
	}
	var out []MapEntry
	for len(b) > 0 {
		var k, v []byte
		if k, b, err = wireNext("state_map_entries", b); err != nil {
			return nil, err
		}
		if v, b, err = wireNext("state_map_entries", b); err != nil {
			return nil, err
		}
		out = append(out, MapEntry{Key: string(k), Value: Value{v}})
	}
	return out, nil
}

// Clear removes the whole map.
func (m MapState) Clear() error { return clearSlot(m.slot) }

// StateDecl declares a state slot to the host in describe (abi.Describe
// "state"): its kind ("value", "list" or "map") and, optionally, a time to
// live, as Flink's state descriptor with a StateTtlConfig. Expired values
// are never returned. UpdateOnRead starts a value's time again when it is
// read (on-read-and-write) besides when it is written.
type StateDecl struct {
	Slot         int
	Kind         string
	TTL          time.Duration
	UpdateOnRead bool
}

// Declare declares state slots to the host.
func (o *Operator) Declare(decls ...StateDecl) *Operator {
	o.decls = append(o.decls, decls...)
	return o
}

// appendDecls appends describe's "state" value.
func appendDecls(b []byte, decls []StateDecl) []byte {
	b = abi.AppendArrayHeader(b, len(decls))
	for _, d := range decls {
		n := 2
		if d.TTL > 0 {
			n += 2
		}
		b = abi.AppendMapHeader(b, n)
		b = abi.AppendInt(abi.AppendStr(b, "slot"), int64(d.Slot))
		b = abi.AppendStr(abi.AppendStr(b, "kind"), d.Kind)
		if d.TTL > 0 {
			b = abi.AppendInt(abi.AppendStr(b, "ttl-ms"), d.TTL.Milliseconds())
			u := "on-create-and-write"
			if d.UpdateOnRead {
				u = "on-read-and-write"
			}
			b = abi.AppendStr(abi.AppendStr(b, "update"), u)
		}
	}
	return b
}
