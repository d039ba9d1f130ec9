package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
)

// Keyed state whose cell key is not the record key alone: a window
// operator's cells are (key, window) and (key, timer), Flink's
// (key, namespace). Their key group is the record key's, which the
// caller computes: KeyGroup of the whole cell key would hash the window
// in. The snapshot writes each cell under its key group, so these cells
// checkpoint and rescale with the key they belong to.

// putKG stores a copy of val under (slot, key) in key group kg.
func (s *KeyedStore) putKG(kg, slot int, key, val []byte) error {
	return s.put(kg, slot, key, val)
}

// deleteKG removes (slot, key) of key group kg.
func (s *KeyedStore) deleteKG(kg, slot int, key []byte) {
	c := s.lookup(slot, key)
	if c == nil {
		return
	}
	s.used -= int64(cap(c.val))
	c.dead, c.val = true, nil
	s.touch(c)
	sl := s.slot(kg, slot, false)
	sl.live--
	sl.dead++
	if sl.dead > sl.live+16 {
		s.compact(sl, slot)
	}
}

// appendRecords adds count records (envelopes) to the list cell (slot,
// key) of key group kg: a 4-byte big-endian count, then the records (a
// window's contents for a process-window function, Flink's
// ListState.add). It grows the cell's buffer in place (amortised: a
// window's contents grow by a record at a time) and marks the cell
// changed for an incremental checkpoint.
func (s *KeyedStore) appendRecords(kg, slot int, key, recs []byte, count int) error {
	c := s.lookup(slot, key)
	if c == nil {
		v := make([]byte, 4, 4+len(recs))
		binary.BigEndian.PutUint32(v, uint32(count))
		return s.put(kg, slot, key, append(v, recs...))
	}
	n := len(c.val) + len(recs)
	if n > abi.MaxStateValue {
		return fmt.Errorf("a window's contents of %d bytes would pass the state value limit of %d", n, abi.MaxStateValue)
	}
	if n > cap(c.val) {
		nc := max(2*cap(c.val), n, 64)
		if err := s.grow(int64(nc - cap(c.val))); err != nil {
			return err
		}
		v := make([]byte, len(c.val), nc)
		copy(v, c.val)
		c.val = v
	}
	s.touch(c)
	c.val = append(c.val, recs...)
	binary.BigEndian.PutUint32(c.val, binary.BigEndian.Uint32(c.val)+uint32(count))
	return nil
}

// cellStore is the keyed state the built-in aggregations and windows keep
// their cells in: the heap's KeyedStore itself, or a cellBackend over
// another backend (Pebble). A cell lookup returns may be changed in place
// until the next call on the store, which keeps the change.
type cellStore interface {
	KeyGroup(key []byte) (int, error)
	KeyGroups() (start, end int)
	lookup(slot int, key []byte) *cell
	insert(kg, slot int, key, val []byte) *cell
	putKG(kg, slot int, key, val []byte) error
	deleteKG(kg, slot int, key []byte)
	appendRecords(kg, slot int, key, recs []byte, count int) error
	Range(kg, slot int, fn func(key string, val []byte) bool)
	// touch marks a cell lookup returned as changed in place (the heap's
	// dirty tracking for incremental checkpoints)
	touch(c *cell)
}

var _ cellStore = (*KeyedStore)(nil)

// cellErr is the error a cellBackend kept (the heap keeps none).
func cellErr(s cellStore) error {
	if c, ok := s.(*cellBackend); ok {
		return c.err
	}
	return nil
}

// cellBackend gives the built-in operators' cells a home on a backend
// that keeps copies (KeyGroupCells): lookup reads the cell into memory,
// and the next call on the store writes it back if it was changed in
// place (as the heap's cells are). A snapshot writes it back first. The
// key group of a cell is that of the record key its key starts with.
// An error of the backend in a call that returns none (lookup, deleteKG)
// is kept and returned by the next one that can (putKG, insert's, a
// snapshot).
type cellBackend struct {
	StateBackend
	kgc KeyGroupCells
	// the cell lookup or insert returned last, where it lives, and its
	// value then
	last             *cell
	lastKG, lastSlot int
	lastVal          []byte
	err              error
}

// newCellBackend wraps b for a built-in operator: nil when b is the heap
// or keeps no such cells.
func newCellBackend(b StateBackend) *cellBackend {
	if _, heap := b.(*KeyedStore); heap {
		return nil
	}
	kgc, ok := b.(KeyGroupCells)
	if !ok {
		return nil
	}
	return &cellBackend{StateBackend: b, kgc: kgc}
}

// sync writes back the cell handed out last, if it was changed.
func (c *cellBackend) sync() error {
	l := c.last
	if l == nil {
		return c.err
	}
	c.last = nil
	if !bytes.Equal(l.val, c.lastVal) {
		if err := c.kgc.PutKG(c.lastKG, c.lastSlot, []byte(l.key), l.val); err != nil && c.err == nil {
			c.err = err
		}
	}
	return c.err
}

func (c *cellBackend) handOut(kg, slot int, key, val []byte) *cell {
	cl := &cell{key: string(key), val: val}
	c.last, c.lastKG, c.lastSlot = cl, kg, slot
	c.lastVal = append(c.lastVal[:0], val...)
	return cl
}

func (c *cellBackend) cellKeyGroup(key []byte) (int, error) {
	n, err := abi.Skip(key, 0)
	if err != nil {
		return 0, err
	}
	return c.KeyGroup(key[:n])
}

func (c *cellBackend) lookup(slot int, key []byte) *cell {
	if c.sync() != nil {
		return nil
	}
	kg, err := c.cellKeyGroup(key)
	if err != nil {
		return nil // not a key of this subtask: none stored
	}
	v, ok, err := c.kgc.GetKG(kg, slot, key, nil)
	if err != nil {
		c.err = err
		return nil
	}
	if !ok {
		return nil
	}
	return c.handOut(kg, slot, key, v)
}

// touch does nothing: the next call on the store writes a changed cell
// back (sync), and Pebble's checkpoints are incremental by file.
func (c *cellBackend) touch(*cell) {}

func (c *cellBackend) insert(kg, slot int, key, val []byte) *cell {
	if c.putKG(kg, slot, key, val) != nil {
		return &cell{key: string(key), val: bytes.Clone(val)} // the error comes with the next call
	}
	return c.handOut(kg, slot, key, bytes.Clone(val))
}

func (c *cellBackend) putKG(kg, slot int, key, val []byte) error {
	if err := c.sync(); err != nil {
		return err
	}
	if err := c.kgc.PutKG(kg, slot, key, val); err != nil {
		c.err = err
		return err
	}
	return nil
}

// appendRecords adds count records to the list cell (slot, key), as the
// heap's: the backend's value read, grown and written back.
func (c *cellBackend) appendRecords(kg, slot int, key, recs []byte, count int) error {
	if err := c.sync(); err != nil {
		return err
	}
	v, ok, err := c.kgc.GetKG(kg, slot, key, nil)
	if err != nil {
		c.err = err
		return err
	}
	if !ok {
		v = binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(recs)), 0)
	}
	if n := len(v) + len(recs); n > abi.MaxStateValue {
		return fmt.Errorf("a window's contents of %d bytes would pass the state value limit of %d", n, abi.MaxStateValue)
	}
	v = append(v, recs...)
	binary.BigEndian.PutUint32(v, binary.BigEndian.Uint32(v)+uint32(count))
	return c.putKG(kg, slot, key, v)
}

func (c *cellBackend) deleteKG(kg, slot int, key []byte) {
	if c.sync() != nil {
		return
	}
	if err := c.kgc.DeleteKG(kg, slot, key); err != nil {
		c.err = err
	}
}

func (c *cellBackend) Range(kg, slot int, fn func(key string, val []byte) bool) {
	if c.sync() != nil {
		return
	}
	if err := c.StateBackend.Scan(kg, slot, func(k, v []byte) bool { return fn(string(k), v) }); err != nil {
		c.err = err
	}
}

// Snapshot writes back the last cell and snapshots the backend.
func (c *cellBackend) Snapshot() (int, [][]byte, error) {
	if err := c.sync(); err != nil {
		return 0, nil, err
	}
	return c.StateBackend.Snapshot()
}

// errNotNative says a wrapped backend takes no native checkpoints.
var errNotNative = errors.New("the backend takes no native checkpoints")

// NativeCheckpoint writes back the last cell and checkpoints the backend
// in its own format.
func (c *cellBackend) NativeCheckpoint(id checkpoint.ID) (*checkpoint.NativeState, error) {
	nc, ok := c.StateBackend.(NativeCheckpointer)
	if !ok {
		return nil, errNotNative
	}
	if err := c.sync(); err != nil {
		return nil, err
	}
	return nc.NativeCheckpoint(id)
}

// RestoreNative restores the backend from native state.
func (c *cellBackend) RestoreNative(parts []checkpoint.NativePart, groups map[int][]byte) error {
	nc, ok := c.StateBackend.(NativeCheckpointer)
	if !ok {
		return fmt.Errorf("native state in format %q: the backend restores none", parts[0].Format)
	}
	return nc.RestoreNative(parts, groups)
}
