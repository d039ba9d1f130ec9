package runtime

// This file adds Flink's ListState and MapState, and StateTtlConfig, to
// keyed state. They are built over the value cells of any KeyedState: the
// list or map of (slot, key) is one cell whose value this file encodes,
// as Flink's heap backend keeps a key's list or map as one state value.
// So everything a value cell has, list and map state have too: key groups
// (checkpoints and rescale move them whole), the state-memory limit, the
// undo journal of a failed call (host/plugin), and any backend that
// implements KeyedState. The cost is that one list or map operation reads
// and rewrites the key's whole list or map, which is fine for the small
// per-key collections keyed plugins keep (the last N events, a few
// counters) and is what a backend with a native layout may improve.
//
// A cell of list or map state is
//
//	'L' or 'M', flags (bit 0: each entry carries a timestamp)
//	list entry: [i64 LE ms timestamp], uvarint len, element
//	map entry:  uvarint len, user key, [i64 LE ms timestamp], uvarint len, value
//
// with map entries in ascending byte order of their user keys, so that a
// map iterates deterministically. A value slot with a TTL keeps
// [i64 LE ms timestamp][value]; without one, the value as it is (ABI v1).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/abi"
)

// StateKind is what a slot holds: Flink's ValueState, ListState or
// MapState. A slot holds one kind.
type StateKind uint8

// State kinds; KindUnset is a slot not used yet.
const (
	KindUnset StateKind = iota
	KindValue
	KindList
	KindMap
)

func (k StateKind) String() string {
	switch k {
	case KindValue:
		return "value"
	case KindList:
		return "list"
	case KindMap:
		return "map"
	}
	return "unset"
}

// ParseStateKind reads "value", "list" or "map".
func ParseStateKind(s string) (StateKind, error) {
	switch s {
	case "value":
		return KindValue, nil
	case "list":
		return KindList, nil
	case "map":
		return KindMap, nil
	}
	return KindUnset, fmt.Errorf("state kind %q is not one of value, list, map", s)
}

// TTLUpdate is when a value's time to live starts again: Flink's
// StateTtlConfig.UpdateType.
type TTLUpdate uint8

// TTL update types, as Flink's OnCreateAndWrite and OnReadAndWrite.
const (
	TTLOnCreateAndWrite TTLUpdate = iota
	TTLOnReadAndWrite
)

// ParseTTLUpdate reads "on-create-and-write" (also "") or
// "on-read-and-write".
func ParseTTLUpdate(s string) (TTLUpdate, error) {
	switch s {
	case "", "on-create-and-write":
		return TTLOnCreateAndWrite, nil
	case "on-read-and-write":
		return TTLOnReadAndWrite, nil
	}
	return 0, fmt.Errorf("ttl update %q is not one of on-create-and-write, on-read-and-write", s)
}

func (u TTLUpdate) String() string {
	if u == TTLOnReadAndWrite {
		return "on-read-and-write"
	}
	return "on-create-and-write"
}

// SlotSpec declares a slot: its kind (KindUnset: whatever it is first
// used as) and its time to live (0: none). Expired values are never
// returned (Flink's NeverReturnExpired, the only visibility sluice has).
type SlotSpec struct {
	Slot   int
	Kind   StateKind
	TTL    time.Duration
	Update TTLUpdate
}

// KindedState is keyed state with list and map state besides values: what
// the host's state_list_* and state_map_* calls reach. StateKinds
// implements it over any KeyedState; a backend may implement it natively.
// Every method works under one (slot, key), key being the msgpack record
// key. List and map contents cross in the ABI's wire layouts
// (abi.ImportStateListGet, abi.ImportStateMapEntries).
type KindedState interface {
	ListGet(slot int, key, dst []byte) (wire []byte, ok bool, err error)
	ListAppend(slot int, key, val []byte) error
	ListUpdate(slot int, key, wire []byte) error
	MapGet(slot int, key, ukey, dst []byte) (val []byte, ok bool, err error)
	MapPut(slot int, key, ukey, val []byte) error
	MapDelete(slot int, key, ukey []byte) error
	MapContains(slot int, key, ukey []byte) (bool, error)
	MapEntries(slot int, key, dst []byte) (wire []byte, ok bool, err error)
	Clear(slot int, key []byte) error
}

// StateKinds serves list and map state and TTL over the value cells of
// inner. It remembers the kind of each slot (declared, or the first use)
// and refuses a slot used as another kind. Now is the TTL clock in
// milliseconds; it is read only for slots with a TTL. Not safe for
// concurrent use, except SnapshotFilter's functions, which read only the
// specs fixed before the first call and Now.
type StateKinds struct {
	inner KeyedState
	specs []SlotSpec // by slot; Kind KindUnset: not used yet
	Now   func() int64
	buf   []byte
	out   []byte
	ents  []entry
}

// noTS marks an entry stored without a timestamp (written before its slot
// had a TTL): it does not expire until written again.
const noTS = math.MinInt64

type entry struct {
	ukey, val []byte
	ts        int64 // noTS: none stored
}

var _ KindedState = (*StateKinds)(nil)

// NewStateKinds returns list and map state over inner with the slots
// declared in specs (others take the kind of their first use, no TTL).
func NewStateKinds(inner KeyedState, specs []SlotSpec, now func() int64) (*StateKinds, error) {
	s := &StateKinds{inner: inner, Now: now}
	for _, sp := range specs {
		if err := checkSlot(sp.Slot); err != nil {
			return nil, err
		}
		if sp.TTL < 0 {
			return nil, fmt.Errorf("state slot %d: a negative ttl %s", sp.Slot, sp.TTL)
		}
		if sp.TTL > 0 && sp.TTL < time.Millisecond {
			return nil, fmt.Errorf("state slot %d: a ttl of %s is below the clock's millisecond", sp.Slot, sp.TTL)
		}
		old := s.spec(sp.Slot)
		if old.Kind != KindUnset && sp.Kind != KindUnset && old.Kind != sp.Kind {
			return nil, fmt.Errorf("state slot %d is declared twice, as %s and as %s state", sp.Slot, old.Kind, sp.Kind)
		}
		if sp.Kind == KindUnset {
			sp.Kind = old.Kind
		}
		if sp.TTL == 0 {
			sp.TTL, sp.Update = old.TTL, old.Update
		}
		s.specs[sp.Slot] = sp
	}
	if now == nil && s.hasTTL() {
		return nil, errors.New("state with a ttl needs a clock")
	}
	return s, nil
}

// Specs returns the declared and used slots.
func (s *StateKinds) Specs() []SlotSpec {
	var out []SlotSpec
	for _, sp := range s.specs {
		if sp.Kind != KindUnset || sp.TTL > 0 {
			out = append(out, sp)
		}
	}
	return out
}

func (s *StateKinds) hasTTL() bool {
	for _, sp := range s.specs {
		if sp.TTL > 0 {
			return true
		}
	}
	return false
}

// HasTTL reports whether slot has a time to live.
func (s *StateKinds) HasTTL(slot int) bool {
	return slot >= 0 && slot < len(s.specs) && s.specs[slot].TTL > 0
}

// spec returns slot's spec, growing the table (slot was checked).
func (s *StateKinds) spec(slot int) *SlotSpec {
	for len(s.specs) <= slot {
		s.specs = append(s.specs, SlotSpec{Slot: len(s.specs)})
	}
	return &s.specs[slot]
}

// Claim checks that slot may be used as kind by the call fn (an ABI
// import name, for the error), recording the kind on the slot's first use.
func (s *StateKinds) Claim(fn string, slot int, kind StateKind) error {
	if err := checkSlot(slot); err != nil {
		return err
	}
	sp := s.spec(slot)
	switch sp.Kind {
	case KindUnset:
		sp.Kind = kind
	case kind:
	default:
		return fmt.Errorf("%s uses state slot %d as %s state, but the slot holds %s state (%s): a slot holds one kind of state, as a Flink state descriptor does; give the %s state its own slot",
			fn, slot, kind, sp.Kind, kindCalls(sp.Kind), kind)
	}
	return nil
}

func kindCalls(k StateKind) string {
	switch k {
	case KindList:
		return "state_list_*"
	case KindMap:
		return "state_map_*"
	}
	return "state_get, state_put, state_del"
}

// expired is Flink's TtlUtils.expired: ts + ttl (without overflow) <= now.
func expired(ts, ttl, now int64) bool {
	if ts == noTS {
		return false // stored without a timestamp (before the ttl was set)
	}
	if ts > 0 {
		ttl = min(math.MaxInt64-ts, ttl)
	}
	return ts+ttl <= now
}

func (s *StateKinds) ttl(slot int) (ttlMs int64, update TTLUpdate) {
	if slot < len(s.specs) && s.specs[slot].TTL > 0 {
		return s.specs[slot].TTL.Milliseconds(), s.specs[slot].Update
	}
	return 0, 0
}

// ValueGet is KeyedState.Get for a value slot with a TTL: an expired value
// is deleted and not returned; on-read-and-write starts its time again.
func (s *StateKinds) ValueGet(slot int, key, dst []byte) ([]byte, bool, error) {
	ttl, upd := s.ttl(slot)
	v, ok, err := s.inner.Get(slot, key, dst)
	if err != nil || !ok || ttl == 0 {
		return v, ok, err
	}
	if len(v) < 8 {
		return nil, false, fmt.Errorf("state slot %d has a ttl, and a value of %d bytes holds no timestamp", slot, len(v))
	}
	now := s.Now()
	if expired(int64(binary.LittleEndian.Uint64(v)), ttl, now) {
		return nil, false, s.inner.Delete(slot, key)
	}
	if upd == TTLOnReadAndWrite {
		binary.LittleEndian.PutUint64(v, uint64(now))
		if err := s.inner.Put(slot, key, v); err != nil {
			return nil, false, err
		}
	}
	return append(v[:0], v[8:]...), true, nil
}

// ValuePut is KeyedState.Put for a value slot with a TTL.
func (s *StateKinds) ValuePut(slot int, key, val []byte) error {
	if ttl, _ := s.ttl(slot); ttl == 0 {
		return s.inner.Put(slot, key, val)
	}
	s.buf = binary.LittleEndian.AppendUint64(s.buf[:0], uint64(s.Now()))
	s.buf = append(s.buf, val...)
	return s.inner.Put(slot, key, s.buf)
}

// Clear removes the state of (slot, key), whatever its kind: Flink's
// State.clear.
func (s *StateKinds) Clear(slot int, key []byte) error {
	if err := checkSlot(slot); err != nil {
		return err
	}
	return s.inner.Delete(slot, key)
}

// load decodes the list or map cell of (slot, key) into s.ents.
func (s *StateKinds) load(fn string, slot int, key []byte, kind StateKind) (bool, error) {
	s.ents = s.ents[:0]
	if err := s.Claim(fn, slot, kind); err != nil {
		return false, err
	}
	v, ok, err := s.inner.Get(slot, key, s.buf[:0])
	if err != nil || !ok {
		return false, err
	}
	s.buf = v[:0]
	s.ents, err = decodeCell(s.ents, v, kind)
	if err != nil {
		return false, fmt.Errorf("%s: state slot %d: %w", fn, slot, err)
	}
	return true, nil
}

// decodeCell appends the entries of cell v (kind) to ents; they alias v.
func decodeCell(ents []entry, v []byte, kind StateKind) ([]entry, error) {
	want := byte('L')
	if kind == KindMap {
		want = 'M'
	}
	if len(v) < 2 || v[0] != want || v[1] > 1 {
		return ents, fmt.Errorf("the stored value is not %s state (it was written as another kind of state, or by state_put)", kind)
	}
	stamped := v[1] == 1
	b := v[2:]
	for len(b) > 0 {
		var e entry
		var err error
		e.ts = noTS
		if kind == KindMap {
			if e.ukey, b, err = lengthPrefixed(b); err != nil {
				return ents, fmt.Errorf("%s state entry %d: key: %w", kind, len(ents), err)
			}
		}
		if stamped {
			if len(b) < 8 {
				return ents, fmt.Errorf("%s state entry %d: truncated timestamp", kind, len(ents))
			}
			e.ts = int64(binary.LittleEndian.Uint64(b))
			b = b[8:]
		}
		if e.val, b, err = lengthPrefixed(b); err != nil {
			return ents, fmt.Errorf("%s state entry %d: %w", kind, len(ents), err)
		}
		ents = append(ents, e)
	}
	return ents, nil
}

// encodeCell appends the cell of ents to dst; stamped entries without a
// timestamp get now.
func encodeCell(dst []byte, ents []entry, kind StateKind, stamped bool, now int64) []byte {
	h := byte('L')
	if kind == KindMap {
		h = 'M'
	}
	flags := byte(0)
	if stamped {
		flags = 1
	}
	dst = append(dst, h, flags)
	for _, e := range ents {
		if kind == KindMap {
			dst = binary.AppendUvarint(dst, uint64(len(e.ukey)))
			dst = append(dst, e.ukey...)
		}
		if stamped {
			ts := e.ts
			if ts == noTS {
				ts = now
			}
			dst = binary.LittleEndian.AppendUint64(dst, uint64(ts))
		}
		dst = binary.AppendUvarint(dst, uint64(len(e.val)))
		dst = append(dst, e.val...)
	}
	return dst
}

// dropExpired removes the expired entries of s.ents, reporting whether any
// went.
func (s *StateKinds) dropExpired(ttl, now int64) bool {
	if ttl == 0 {
		return false
	}
	keep := s.ents[:0]
	for _, e := range s.ents {
		if !expired(e.ts, ttl, now) {
			keep = append(keep, e)
		}
	}
	dropped := len(keep) < len(s.ents)
	s.ents = keep
	return dropped
}

// store writes s.ents back as the cell of (slot, key), deleting it when
// empty (Flink clears a list or map that holds nothing).
func (s *StateKinds) store(fn string, slot int, key []byte, kind StateKind, now int64) error {
	if len(s.ents) == 0 {
		return s.inner.Delete(slot, key)
	}
	ttl, _ := s.ttl(slot)
	s.out = encodeCell(s.out[:0], s.ents, kind, ttl > 0, now)
	if len(s.out) > abi.MaxStateValue {
		return fmt.Errorf("%s: the %s state of slot %d under this key would take %d bytes, past the limit of %d for one key's state in a slot", fn, kind, slot, len(s.out), abi.MaxStateValue)
	}
	return s.inner.Put(slot, key, s.out)
}

// now reads the clock for a slot with a TTL, else noTS (not read).
func (s *StateKinds) now(slot int) int64 {
	if ttl, _ := s.ttl(slot); ttl > 0 {
		return s.Now()
	}
	return noTS
}

// read loads (slot, key) for a read, drops what expired and, when entries
// went or the update is on-read-and-write, writes the cell back (with
// refreshed timestamps for the latter): Flink's cleanup on read.
func (s *StateKinds) read(fn string, slot int, key []byte, kind StateKind, touch func(i int) bool) (bool, error) {
	ok, err := s.load(fn, slot, key, kind)
	if err != nil || !ok {
		return false, err
	}
	ttl, upd := s.ttl(slot)
	if ttl == 0 {
		return true, nil
	}
	now := s.Now()
	dirty := s.dropExpired(ttl, now)
	if upd == TTLOnReadAndWrite {
		for i := range s.ents {
			if touch == nil || touch(i) {
				s.ents[i].ts = now
				dirty = true
			}
		}
	}
	if dirty {
		// the entries alias s.buf, which store does not write
		if err := s.store(fn, slot, key, kind, now); err != nil {
			return false, err
		}
	}
	return len(s.ents) > 0, nil
}

// ListGet returns the list of (slot, key) in the wire layout of
// abi.ImportStateListGet (u32 LE length, element; repeated), appended to
// dst[:0]; ok is false when there is no list.
func (s *StateKinds) ListGet(slot int, key, dst []byte) ([]byte, bool, error) {
	ok, err := s.read(abi.ImportStateListGet, slot, key, KindList, nil)
	if err != nil || !ok {
		return dst[:0], false, err
	}
	dst = dst[:0]
	for _, e := range s.ents {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.val)))
		dst = append(dst, e.val...)
	}
	return dst, true, nil
}

// ListAppend adds val at the end of the list of (slot, key): Flink's
// ListState.add.
func (s *StateKinds) ListAppend(slot int, key, val []byte) error {
	fn := abi.ImportStateListAppend
	if _, err := s.load(fn, slot, key, KindList); err != nil {
		return err
	}
	now := s.now(slot)
	if ttl, _ := s.ttl(slot); ttl > 0 {
		s.dropExpired(ttl, now)
	}
	s.ents = append(s.ents, entry{val: val, ts: now})
	return s.store(fn, slot, key, KindList, now)
}

// ListUpdate replaces the list of (slot, key) with the elements of wire
// (abi.ImportStateListGet's layout): Flink's ListState.update; an empty
// wire clears it.
func (s *StateKinds) ListUpdate(slot int, key, wire []byte) error {
	fn := abi.ImportStateListUpdate
	if err := s.Claim(fn, slot, KindList); err != nil {
		return err
	}
	s.ents = s.ents[:0]
	for b := wire; len(b) > 0; {
		if len(b) < 4 {
			return fmt.Errorf("%s: element %d: %d bytes left, too few for its u32 length", fn, len(s.ents), len(b))
		}
		n := binary.LittleEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			return fmt.Errorf("%s: element %d says %d bytes, %d left", fn, len(s.ents), n, len(b)-4)
		}
		s.ents = append(s.ents, entry{val: b[4 : 4+n], ts: noTS})
		b = b[4+n:]
	}
	return s.store(fn, slot, key, KindList, s.now(slot))
}

// find returns the index of ukey in the sorted s.ents, and whether it is
// there.
func (s *StateKinds) find(ukey []byte) (int, bool) {
	i := sort.Search(len(s.ents), func(i int) bool { return bytes.Compare(s.ents[i].ukey, ukey) >= 0 })
	return i, i < len(s.ents) && bytes.Equal(s.ents[i].ukey, ukey)
}

// MapGet returns the value of user key ukey in the map of (slot, key),
// appended to dst[:0]: Flink's MapState.get.
func (s *StateKinds) MapGet(slot int, key, ukey, dst []byte) ([]byte, bool, error) {
	return s.mapGet(abi.ImportStateMapGet, slot, key, ukey, dst)
}

func (s *StateKinds) mapGet(fn string, slot int, key, ukey, dst []byte) ([]byte, bool, error) {
	ok, err := s.load(fn, slot, key, KindMap)
	if err != nil || !ok {
		return dst[:0], false, err
	}
	ttl, upd := s.ttl(slot)
	var now int64
	dirty := false
	if ttl > 0 {
		now = s.Now()
		dirty = s.dropExpired(ttl, now) // cleanup on read
	}
	i, found := s.find(ukey)
	if found && ttl > 0 && upd == TTLOnReadAndWrite {
		s.ents[i].ts, dirty = now, true
	}
	if found {
		dst = append(dst[:0], s.ents[i].val...) // before store: entries alias s.buf
	}
	if dirty {
		if err := s.store(fn, slot, key, KindMap, now); err != nil {
			return dst[:0], false, err
		}
	}
	if !found {
		return dst[:0], false, nil
	}
	return dst, true, nil
}

// MapContains reports whether the map of (slot, key) holds ukey: Flink's
// MapState.contains (a read: on-read-and-write starts its time again).
func (s *StateKinds) MapContains(slot int, key, ukey []byte) (bool, error) {
	_, ok, err := s.mapGet(abi.ImportStateMapContains, slot, key, ukey, nil)
	return ok, err
}

// MapPut sets ukey to val in the map of (slot, key): Flink's MapState.put.
func (s *StateKinds) MapPut(slot int, key, ukey, val []byte) error {
	fn := abi.ImportStateMapPut
	if _, err := s.load(fn, slot, key, KindMap); err != nil {
		return err
	}
	now := s.now(slot)
	if ttl, _ := s.ttl(slot); ttl > 0 {
		s.dropExpired(ttl, now)
	}
	if i, found := s.find(ukey); found {
		s.ents[i].val, s.ents[i].ts = val, now
	} else {
		s.ents = append(s.ents, entry{})
		copy(s.ents[i+1:], s.ents[i:])
		s.ents[i] = entry{ukey: ukey, val: val, ts: now}
	}
	return s.store(fn, slot, key, KindMap, now)
}

// MapDelete removes ukey from the map of (slot, key): Flink's
// MapState.remove.
func (s *StateKinds) MapDelete(slot int, key, ukey []byte) error {
	fn := abi.ImportStateMapDel
	ok, err := s.load(fn, slot, key, KindMap)
	if err != nil || !ok {
		return err
	}
	now := s.now(slot)
	dirty := false
	if ttl, _ := s.ttl(slot); ttl > 0 {
		dirty = s.dropExpired(ttl, now)
	}
	if i, found := s.find(ukey); found {
		s.ents = append(s.ents[:i], s.ents[i+1:]...)
		dirty = true
	}
	if !dirty {
		return nil
	}
	return s.store(fn, slot, key, KindMap, now)
}

// MapEntries returns the entries of the map of (slot, key), in ascending
// byte order of the user keys, in the wire layout of
// abi.ImportStateMapEntries (u32 LE key length, key, u32 LE value length,
// value; repeated), appended to dst[:0]: Flink's MapState.entries.
func (s *StateKinds) MapEntries(slot int, key, dst []byte) ([]byte, bool, error) {
	ok, err := s.read(abi.ImportStateMapEntries, slot, key, KindMap, nil)
	if err != nil || !ok {
		return dst[:0], false, err
	}
	dst = dst[:0]
	for _, e := range s.ents {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.ukey)))
		dst = append(dst, e.ukey...)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.val)))
		dst = append(dst, e.val...)
	}
	return dst, true, nil
}

// SnapshotFilter returns what a snapshot applies to each value of slot, or
// nil when the slot has no TTL: it drops expired values, list elements and
// map entries (Flink's cleanupFullSnapshot), keep false when nothing is
// left. It reads the slot's kind when it runs (a slot whose TTL comes from
// the pipeline takes its kind on first use, after the filter was set), on
// the subtask's goroutine as every call, and the clock. A slot no call has
// used yet (a restored subtask's cells before any record) is kept as it
// is: its kind is not known, and a read cleans it later.
func (s *StateKinds) SnapshotFilter(slot int) SnapshotFilter {
	if !s.HasTTL(slot) {
		return nil
	}
	ttl, now := s.specs[slot].TTL.Milliseconds(), s.Now
	return func(val []byte) ([]byte, bool) {
		t := now()
		kind := s.specs[slot].Kind
		switch kind {
		case KindList, KindMap:
			ents, err := decodeCell(nil, val, kind)
			if err != nil {
				return val, true // not this file's to judge: the restore reads it as it was
			}
			keep := ents[:0]
			for _, e := range ents {
				if !expired(e.ts, ttl, t) {
					keep = append(keep, e)
				}
			}
			if len(keep) == len(ents) {
				return val, true
			}
			if len(keep) == 0 {
				return nil, false
			}
			return encodeCell(nil, keep, kind, true, t), true
		case KindValue:
			if len(val) >= 8 && expired(int64(binary.LittleEndian.Uint64(val)), ttl, t) {
				return nil, false
			}
			return val, true
		default:
			return val, true
		}
	}
}

// ParseStateTTL reads an operator's state-ttl setting: a list (or one) of
// maps {slot: N, ttl: duration, update: on-create-and-write |
// on-read-and-write}, ttl as a Go or pipeline duration ("1h", "30s") or a
// number of milliseconds.
func ParseStateTTL(v any) ([]SlotSpec, error) {
	var items []any
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		items = t
	case map[string]any:
		items = []any{t}
	default:
		return nil, fmt.Errorf("state-ttl: want a list of {slot, ttl, update}, got %T", v)
	}
	var out []SlotSpec
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("state-ttl[%d]: want a map {slot, ttl, update}, got %T", i, it)
		}
		var sp SlotSpec
		slot, ok := toInt(m["slot"])
		if !ok {
			return nil, fmt.Errorf("state-ttl[%d]: slot: want a number 0 to %d, got %v", i, abi.MaxStateSlots-1, m["slot"])
		}
		sp.Slot = int(slot)
		if err := checkSlot(sp.Slot); err != nil {
			return nil, fmt.Errorf("state-ttl[%d]: %w", i, err)
		}
		d, err := toDuration(m["ttl"])
		if err != nil {
			return nil, fmt.Errorf("state-ttl[%d] (slot %d): ttl: %w", i, sp.Slot, err)
		}
		if d < time.Millisecond {
			return nil, fmt.Errorf("state-ttl[%d] (slot %d): ttl %s: want at least 1ms", i, sp.Slot, d)
		}
		sp.TTL = d
		u, _ := m["update"].(string)
		if sp.Update, err = ParseTTLUpdate(u); err != nil {
			return nil, fmt.Errorf("state-ttl[%d] (slot %d): %w", i, sp.Slot, err)
		}
		for k := range m {
			if k != "slot" && k != "ttl" && k != "update" {
				return nil, fmt.Errorf("state-ttl[%d]: unknown key %q (known: slot, ttl, update)", i, k)
			}
		}
		out = append(out, sp)
	}
	return out, nil
}

func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}

func toDuration(v any) (time.Duration, error) {
	if ms, ok := toInt(v); ok {
		return time.Duration(ms) * time.Millisecond, nil
	}
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("want a duration such as 1h or 30s, or milliseconds, got %v", v)
	}
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	if strings.HasSuffix(s, "d") { // days, as pipeline durations allow
		if n, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64); err == nil {
			return time.Duration(n * float64(24*time.Hour)), nil
		}
	}
	return 0, fmt.Errorf("%q is not a duration such as 1h or 30s", s)
}

// SnapshotFilter maps a stored value of a slot to what a snapshot writes
// of it; keep false leaves the entry out (StateKinds.SnapshotFilter).
type SnapshotFilter func(val []byte) (out []byte, keep bool)

// SnapshotFilterer is a store whose snapshots can apply a SnapshotFilter
// per slot: KeyedStore.
type SnapshotFilterer interface {
	SetSnapshotFilter(slot int, f SnapshotFilter)
}

// SetSnapshotFilter makes SnapshotKeyGroups apply f to the values of slot
// (nil: none): TTL cleanup in snapshots, as Flink's cleanupFullSnapshot.
func (s *KeyedStore) SetSnapshotFilter(slot int, f SnapshotFilter) {
	if checkSlot(slot) != nil {
		return
	}
	for len(s.filters) <= slot {
		s.filters = append(s.filters, nil)
	}
	s.filters[slot] = f
}
