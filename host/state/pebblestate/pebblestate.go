// Package pebblestate is a keyed-state backend (runtime.StateBackend) on
// Pebble, for keyed state larger than memory: one database per keyed
// subtask, in a folder of its own that the backend removes when it
// closes. It is the only package that imports Pebble.
//
// Keys follow Flink's RocksDB backend: the key group first, so that a key
// group is one contiguous range of the database, then the state slot (in
// place of Flink's column family per state), then the record key:
//
//	uint16 key group (big-endian) | uint16 slot (big-endian) | msgpack key
//
// The value is stored as it is. A guest call's writes go into one indexed
// pebble.Batch (reads see them), applied at once when the call stands and
// dropped when it fails: the batch is the call's undo journal
// (runtime.CallBatcher). Writes outside a call go straight to the
// database. The database keeps no write-ahead log: state outlives a run
// only through checkpoints, which take the canonical per-key-group format
// (runtime's state_snapshot.go) from a Pebble snapshot, so a savepoint
// taken on Pebble restores on the heap and the other way round.
package pebblestate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/partition"
)

// Options open one subtask's database.
type Options struct {
	Dir      string // the database's folder: created, and removed at Close
	Operator string // for errors
	Subtask  int    // from 0, shown from 1 as the engine shows it
	// Parallelism is the operator's, for errors ("subtask 2/3"); 0:
	// unknown.
	Parallelism int
	DiskQuota   int64 // bytes the database may hold (0: no limit)
}

// Store is the keyed state of one subtask in a Pebble database.
type Store struct {
	db               *pebble.DB
	dir              string
	opt              Options
	maxP, start, end int
	batch            *pebble.Batch // the call in progress, or nil
	// written holds the call's writes by database key (nil value: a
	// delete): a read of a key the call wrote is served from it, others
	// from the database: the indexed batch would serve both, at the
	// cost of a read merging batch and database on every Get.
	written     map[string][]byte
	kbuf, kbuf2 []byte
	measured    int64 // the database's bytes when last measured
	since       int64 // bytes written since
	// filters, by slot: what a snapshot applies to each value (TTL
	// cleanup: runtime.StateKinds.SnapshotFilter), as the heap's.
	filters []runtime.SnapshotFilter
	// instance names this database in the checkpoint storage's shared
	// files; stored names the files a restore brought, by their stored
	// names (checkpoint.NativeState).
	instance string
	stored   map[string]string
}

// SetSnapshotFilter makes Snapshot apply f to the values of slot
// (runtime.SnapshotFilterer): expired TTL state stays out of checkpoints
// on Pebble as on the heap.
func (s *Store) SetSnapshotFilter(slot int, f runtime.SnapshotFilter) {
	if slot < 0 {
		return
	}
	for len(s.filters) <= slot {
		s.filters = append(s.filters, nil)
	}
	s.filters[slot] = f
}

const prefixLen = 4

// The block cache and the memtable of one subtask's database: state past
// them lives on disk.
const (
	cacheBytes    = 32 << 20
	memTableBytes = 32 << 20
)

// Open creates the database of the subtask owning key groups [start, end]
// of maxParallelism in o.Dir, which must not hold one: a subtask's state
// comes from a checkpoint (RestoreKeyGroups), never from what a previous
// run left on disk.
func Open(o Options, maxParallelism, start, end int) (*Store, error) {
	if maxParallelism > 1<<16 {
		return nil, fmt.Errorf("max parallelism %d: the Pebble backend keys key groups in 2 bytes", maxParallelism)
	}
	if err := os.MkdirAll(filepath.Dir(o.Dir), 0o755); err != nil {
		return nil, fmt.Errorf("Pebble state of %s: %w", o.who(), err)
	}
	db, err := openDB(o.Dir, true)
	if err != nil {
		return nil, fmt.Errorf("Pebble state of %s in %s: %w", o.who(), o.Dir, err)
	}
	return &Store{db: db, dir: o.Dir, opt: o, maxP: maxParallelism, start: start, end: end, instance: newInstance()}, nil
}

// openDB opens the database in dir: a new one (fresh), or the one a
// restore put there.
func openDB(dir string, fresh bool) (*pebble.DB, error) {
	cache := pebble.NewCache(cacheBytes)
	defer cache.Unref() // the database holds its own reference
	o := &pebble.Options{
		FS:            noSyncFS{vfs.Default},
		DisableWAL:    true,
		ErrorIfExists: fresh,
		Logger:        quiet{},
		Cache:         cache,
		MemTableSize:  memTableBytes,
		// a read-modify-write workload rewrites its keys: more L0 files
		// before compactions kick in and writes stall
		L0CompactionThreshold: 4,
		L0StopWritesThreshold: 24,
	}
	// a bloom filter per sstable (every level takes L0's): a Get of a key
	// reads no block of a file that cannot hold it, which is most of
	// them when the state is larger than the block cache
	o.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	return pebble.Open(dir, o)
}

// quiet drops Pebble's informational log lines; errors reach the caller.
type quiet struct{}

func (quiet) Infof(string, ...any)  {}
func (quiet) Errorf(string, ...any) {}
func (quiet) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
	os.Exit(2)
}

// KeyGroup returns the key group of key, checking that the subtask owns
// it (the message is the heap store's).
func (s *Store) KeyGroup(key []byte) (int, error) {
	h, err := abi.KeyHash(key)
	if err != nil {
		return 0, err
	}
	kg := partition.KeyGroup(h, s.maxP)
	if kg < s.start || kg > s.end {
		return 0, fmt.Errorf("key group %d of the key is not in this subtask's range [%d, %d]: keyed state is scoped to the keys a subtask receives (the current record's key, as Flink scopes it); another key's state is out of reach, or within reach only at some parallelisms", kg, s.start, s.end)
	}
	return kg, nil
}

// KeyGroups returns the inclusive key-group range of the store.
func (s *Store) KeyGroups() (start, end int) { return s.start, s.end }

// checkSlot is the heap's check: a plugin's slots and the host's timers.
func checkSlot(slot int) error { return runtime.CheckStoreSlot(slot) }

func appendPrefix(b []byte, kg, slot int) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(b, uint16(kg)), uint16(slot))
}

// dbKey is the database key of (slot, key), checked.
func (s *Store) dbKey(slot int, key []byte) ([]byte, error) {
	if err := checkSlot(slot); err != nil {
		return nil, err
	}
	kg, err := s.KeyGroup(key)
	if err != nil {
		return nil, err
	}
	s.kbuf = append(appendPrefix(s.kbuf[:0], kg, slot), key...)
	return s.kbuf, nil
}

// Get copies the value of (slot, key) into dst[:0] and returns it.
func (s *Store) Get(slot int, key []byte, dst []byte) ([]byte, bool, error) {
	k, err := s.dbKey(slot, key)
	if err != nil {
		return nil, false, err
	}
	if s.batch != nil {
		if v, ok := s.written[string(k)]; ok {
			if v == nil {
				return nil, false, nil
			}
			return append(dst[:0], v...), true, nil
		}
	}
	v, closer, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.wrap(err)
	}
	out := append(dst[:0], v...)
	return out, true, s.wrap(closer.Close())
}

// Put stores a copy of val under (slot, key).
func (s *Store) Put(slot int, key, val []byte) error {
	if len(val) > abi.MaxStateValue {
		return fmt.Errorf("a state value of %d bytes is longer than the limit of %d", len(val), abi.MaxStateValue)
	}
	k, err := s.dbKey(slot, key)
	if err != nil {
		return err
	}
	n := int64(len(k) + len(val))
	if s.batch != nil {
		s.since += n
		s.written[string(k)] = append(make([]byte, 0, max(len(val), 1)), val...)
		return s.wrap(s.batch.Set(k, val, nil))
	}
	if err := s.quota(n); err != nil {
		return err
	}
	return s.wrap(s.db.Set(k, val, pebble.NoSync))
}

// Delete removes (slot, key).
func (s *Store) Delete(slot int, key []byte) error {
	k, err := s.dbKey(slot, key)
	if err != nil {
		return err
	}
	if s.batch != nil {
		s.written[string(k)] = nil
		return s.wrap(s.batch.Delete(k, nil))
	}
	return s.wrap(s.db.Delete(k, pebble.NoSync))
}

// BeginCall starts collecting a guest call's writes in one batch.
func (s *Store) BeginCall() {
	if s.batch != nil {
		s.batch.Close()
	}
	s.batch = s.db.NewIndexedBatch() // scans in the call see its writes
	if len(s.written) > 4096 {
		s.written = nil
	}
	if s.written == nil {
		s.written = map[string][]byte{}
	}
	clear(s.written)
}

// CommitCall applies the call's writes at once, unless they would take
// the database past its disk quota: then none is applied and the call
// fails.
func (s *Store) CommitCall() error {
	b := s.batch
	if b == nil {
		return nil
	}
	s.batch = nil
	defer b.Close()
	if b.Empty() {
		return nil
	}
	s.since -= int64(b.Len()) // counted by quota now
	if s.since < 0 {
		s.since = 0
	}
	if err := s.quota(int64(b.Len())); err != nil {
		return err
	}
	return s.wrap(b.Commit(pebble.NoSync))
}

// AbortCall drops the call's writes: the call is undone.
func (s *Store) AbortCall() {
	if s.batch != nil {
		s.batch.Close()
		s.batch = nil
	}
}

// measureEvery is how many bytes may be written between two measurements
// of the database's size for the quota.
const measureEvery = 1 << 20

// quota refuses n more bytes when they take the database past its disk
// quota. The size is measured (sstables, write-ahead log and memtables)
// every measureEvery bytes written, and before a refusal.
func (s *Store) quota(n int64) error {
	if s.opt.DiskQuota <= 0 {
		return nil
	}
	s.since += n
	if s.since < measureEvery && s.measured+s.since <= s.opt.DiskQuota {
		return nil
	}
	s.measured, s.since = s.size(), n
	if s.measured+n > s.opt.DiskQuota {
		s.since = 0
		return fmt.Errorf("%s: Pebble keyed state would hold %d bytes, past its disk quota of %d bytes (state: disk-quota)", s.opt.who(), s.measured+n, s.opt.DiskQuota)
	}
	return nil
}

// size is the bytes the database holds, on disk and in its memtables.
func (s *Store) size() int64 {
	m := s.db.Metrics()
	return int64(m.DiskSpaceUsage()) + int64(m.MemTable.Size)
}

// Size is the bytes the database holds now, on disk and in memtables.
func (s *Store) Size() int64 { return s.size() }

// who names the store's operator and subtask, as the engine does.
func (o Options) who() string {
	if o.Parallelism > 0 {
		return fmt.Sprintf("operator %q subtask %d/%d", o.Operator, o.Subtask+1, o.Parallelism)
	}
	return fmt.Sprintf("operator %q subtask %d", o.Operator, o.Subtask+1)
}

func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("Pebble state of %s: %w", s.opt.who(), err)
}

type iterable interface {
	NewIter(*pebble.IterOptions) (*pebble.Iterator, error)
}

// bounds are the database keys of key group kg's slot (slot < 0: every
// slot of kg).
func (s *Store) bounds(kg, slot int) (lo, hi []byte) {
	if slot < 0 {
		lo = binary.BigEndian.AppendUint16(s.kbuf[:0], uint16(kg))
		hi = binary.BigEndian.AppendUint16(s.kbuf2[:0], uint16(kg+1))
		if kg+1 > 0xffff {
			hi = []byte{0xff, 0xff, 0xff, 0xff, 0xff}
		}
	} else {
		lo = appendPrefix(s.kbuf[:0], kg, slot)
		hi = appendPrefix(s.kbuf2[:0], kg, slot+1)
	}
	s.kbuf, s.kbuf2 = lo, hi
	return lo, hi
}

// scan calls fn for each entry of key group kg (slot < 0: every slot) in
// key order of r.
func (s *Store) scan(r iterable, kg, slot int, fn func(slot int, key, val []byte) bool) error {
	lo, hi := s.bounds(kg, slot)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: bytes.Clone(lo), UpperBound: bytes.Clone(hi)})
	if err != nil {
		return s.wrap(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return s.wrap(err)
		}
		if !fn(int(binary.BigEndian.Uint16(k[2:])), k[prefixLen:], v) {
			break
		}
	}
	return s.wrap(it.Close())
}

// reads is where reads go: the call's batch, which reads through to the
// database, or the database.
func (s *Store) reads() iterable {
	if s.batch != nil {
		return s.batch
	}
	return s.db
}

// Count is the number of keys stored in slot: a scan of the slot in every
// key group.
func (s *Store) Count(slot int) (int, error) {
	if err := checkSlot(slot); err != nil {
		return 0, err
	}
	n := 0
	for kg := s.start; kg <= s.end; kg++ {
		if err := s.scan(s.reads(), kg, slot, func(int, []byte, []byte) bool { n++; return true }); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// Scan calls fn for each key of slot in key group kg, in key order.
func (s *Store) Scan(kg, slot int, fn func(key, val []byte) bool) error {
	if kg < s.start || kg > s.end {
		return nil
	}
	if err := checkSlot(slot); err != nil {
		return err
	}
	return s.scan(s.reads(), kg, slot, func(_ int, k, v []byte) bool { return fn(k, v) })
}

// Snapshot encodes every key group of the range in the canonical format
// (slot by slot, keys in byte order within a slot), read from one Pebble
// snapshot of the database: the writes of a call in progress are not in
// it.
func (s *Store) Snapshot() (int, [][]byte, error) {
	snap := s.db.NewSnapshot()
	defer snap.Close()
	groups := make([][]byte, s.end-s.start+1)
	for kg := s.start; kg <= s.end; kg++ {
		var b []byte
		err := s.scan(snap, kg, -1, func(slot int, k, v []byte) bool {
			if slot < len(s.filters) && s.filters[slot] != nil {
				var keep bool
				if v, keep = s.filters[slot](v); !keep {
					return true // expired: left out, as the heap's snapshot does
				}
			}
			b = runtime.AppendKeyGroupEntry(b, slot, k, v)
			return true
		})
		if err != nil {
			return 0, nil, err
		}
		groups[kg-s.start] = b
	}
	return s.start, groups, nil
}

// RestoreKeyGroups fills the empty store with key groups of a snapshot
// (key group -> canonical bytes), one batch per key group. A key group
// outside the range, an entry whose key belongs to another key group and
// a key stored twice are refused.
func (s *Store) RestoreKeyGroups(groups map[int][]byte) error {
	for kg := range groups {
		if kg < s.start || kg > s.end {
			return fmt.Errorf("restoring keyed state: key group %d is outside this subtask's range [%d, %d]", kg, s.start, s.end)
		}
	}
	empty := true
	lo, hi := appendPrefix(nil, s.start, 0), appendPrefix(nil, s.end+1, 0)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return s.wrap(err)
	}
	empty = !it.First()
	if err := it.Close(); err != nil {
		return s.wrap(err)
	}
	if !empty {
		return fmt.Errorf("restoring keyed state into a store that already holds state")
	}
	for kg := s.start; kg <= s.end; kg++ {
		b, ok := groups[kg]
		if !ok || len(b) == 0 {
			continue
		}
		if err := s.restoreGroup(kg, b); err != nil {
			return fmt.Errorf("restoring keyed state of key group %d: %w", kg, err)
		}
	}
	return nil
}

func (s *Store) restoreGroup(kg int, b []byte) error {
	batch := s.db.NewIndexedBatch()
	defer batch.Close()
	var k []byte
	err := runtime.ScanKeyGroupEntries(b, func(n, slot int, key, val []byte) error {
		if g, err := s.cellKeyGroup(key); err != nil || g != kg {
			return fmt.Errorf("entry %d: the key is not of key group %d", n, kg)
		}
		k = append(appendPrefix(k[:0], kg, slot), key...)
		if _, c, err := batch.Get(k); err == nil {
			c.Close()
			return fmt.Errorf("entry %d: a key of slot %d is there twice", n, slot)
		}
		return s.wrap(batch.Set(k, val, nil))
	})
	if err != nil {
		return err
	}
	return s.wrap(batch.Commit(pebble.NoSync))
}

// Close closes the database and removes its folder.
func (s *Store) Close() error {
	if s.db == nil {
		return nil
	}
	s.AbortCall()
	err := s.db.Close()
	s.db = nil
	if rerr := os.RemoveAll(s.dir); err == nil && rerr != nil {
		err = rerr
	}
	if rerr := s.dropCheckpoints(); err == nil && rerr != nil {
		err = rerr
	}
	return s.wrap(err)
}

// Backends opens Pebble stores for the engine (runtime.StateBackends):
// each keyed subtask in a new folder under the operator's state dir, else
// under Root, named after the job, the operator and the subtask.
type Backends struct {
	Root string // the host's folder for state ("": the system's temporary folder)
}

// Open implements runtime.StateBackends.
func (b Backends) Open(r runtime.BackendRequest) (runtime.StateBackend, error) {
	if r.State.Backend != "pebble" {
		return nil, fmt.Errorf("operator %q: unknown state backend %q", r.Operator, r.State.Backend)
	}
	root := r.State.Dir
	if root == "" {
		root = b.Root
	}
	if root == "" {
		root = filepath.Join(os.TempDir(), "sluice-state")
	}
	job := r.Job
	if job == "" {
		job = "job"
	}
	parent := filepath.Join(root, job)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("operator %q subtask %d/%d: the Pebble state folder: %w", r.Operator, r.Subtask+1, r.Parallelism, err)
	}
	dropOrphans(parent)
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("%s-%d-*", r.Operator, r.Subtask))
	if err != nil {
		return nil, fmt.Errorf("operator %q subtask %d/%d: the Pebble state folder: %w", r.Operator, r.Subtask+1, r.Parallelism, err)
	}
	if err := os.Remove(dir); err != nil { // Pebble creates it, and refuses one that holds a database
		return nil, err
	}
	return Open(Options{Dir: dir, Operator: r.Operator, Subtask: r.Subtask, Parallelism: r.Parallelism, DiskQuota: r.State.DiskQuota}, r.MaxParallelism, r.Start, r.End)
}

var (
	_ runtime.StateBackend  = (*Store)(nil)
	_ runtime.CallBatcher   = (*Store)(nil)
	_ runtime.StateBackends = Backends{}
)
