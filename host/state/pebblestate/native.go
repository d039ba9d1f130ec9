package pebblestate

// Checkpoints in Pebble's own format (runtime.NativeCheckpointer), as
// Flink's RocksDB backend takes incremental checkpoints: the synchronous
// part flushes the memtable and takes a Pebble checkpoint, a folder of
// hard links to the database's sstables and a copy of its MANIFEST and
// OPTIONS; the checkpoint storage copies the folder afterwards, off the
// subtask's goroutine, skipping the sstables an earlier checkpoint copied
// (host/checkpoint/native.go). A restore at the same key-group range
// opens the copied database; at another one it clips: the database that
// overlaps the range most becomes the subtask's, its keys outside the
// range deleted by two range deletions (the key group is the key's
// prefix, so a range of key groups is a range of keys), and the keys of
// the range in the other databases are copied in.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/runtime"
)

// Format is the native format's name in checkpoint metadata.
const Format = "pebble-v2"

func newInstance() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// checkpoints is the folder of the store's local checkpoints, next to
// its database.
func (s *Store) checkpoints() string { return s.dir + ".chk" }

// dropCheckpoints removes the store's local checkpoints at Close but the
// newest: the checkpoint storage may not have copied it yet (the subtask
// ended just after acknowledging), and removes it once it has.
func (s *Store) dropCheckpoints() error {
	ents, err := os.ReadDir(s.checkpoints())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	newest := uint64(0)
	for _, e := range ents {
		if n, err := strconv.ParseUint(e.Name(), 10, 64); err == nil {
			newest = max(newest, n)
		}
	}
	for _, e := range ents {
		if n, err := strconv.ParseUint(e.Name(), 10, 64); err != nil || n != newest {
			if err := os.RemoveAll(filepath.Join(s.checkpoints(), e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropOrphans removes, in a job's state folder, the local checkpoints of
// databases closed before (dropCheckpoints leaves the newest, which a
// checkpoint of a run that ended or failed may never have copied).
func dropOrphans(parent string) {
	chks, _ := filepath.Glob(filepath.Join(parent, "*.chk"))
	for _, c := range chks {
		if _, err := os.Stat(strings.TrimSuffix(c, ".chk")); errors.Is(err, fs.ErrNotExist) {
			os.RemoveAll(c)
		}
	}
}

// NativeCheckpoint takes checkpoint id's synchronous part: the memtable
// is flushed (the database keeps no write-ahead log) and a Pebble
// checkpoint made in a folder the checkpoint storage takes over.
func (s *Store) NativeCheckpoint(id checkpoint.ID) (*checkpoint.NativeState, error) {
	if s.batch != nil {
		return nil, fmt.Errorf("Pebble state of %s: a checkpoint during a guest call", s.opt.who())
	}
	if err := s.db.Flush(); err != nil {
		return nil, s.wrap(err)
	}
	if err := os.MkdirAll(s.checkpoints(), 0o755); err != nil {
		return nil, s.wrap(err)
	}
	dir := filepath.Join(s.checkpoints(), strconv.FormatUint(uint64(id), 10))
	if err := os.RemoveAll(dir); err != nil {
		return nil, s.wrap(err)
	}
	if err := s.db.Checkpoint(dir); err != nil {
		return nil, s.wrap(err)
	}
	return &checkpoint.NativeState{Format: Format, Dir: dir, Instance: s.instance, Stored: s.stored,
		FirstKeyGroup: s.start, LastKeyGroup: s.end}, nil
}

// RestoreNative fills the empty store from the native states of the old
// subtasks whose ranges overlap its own, then from groups (canonical key
// groups: of an old subtask that had ended, say).
func (s *Store) RestoreNative(parts []checkpoint.NativePart, groups map[int][]byte) error {
	it, err := s.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		return s.wrap(err)
	}
	full := it.First()
	if err := it.Close(); err != nil {
		return s.wrap(err)
	}
	if full || s.batch != nil {
		return errors.New("restoring keyed state into a store that already holds state")
	}
	for _, p := range parts {
		if p.Format != Format {
			return fmt.Errorf("restoring keyed state: native state in format %q, the Pebble backend reads %q", p.Format, Format)
		}
	}
	for kg := range groups {
		if kg < s.start || kg > s.end {
			return fmt.Errorf("restoring keyed state: key group %d is outside this subtask's range [%d, %d]", kg, s.start, s.end)
		}
	}
	if len(parts) > 0 {
		base, most := 0, -1
		for i, p := range parts {
			if o := min(p.LastKeyGroup, s.end) - max(p.FirstKeyGroup, s.start); o > most {
				base, most = i, o
			}
		}
		if err := s.openBase(parts[base]); err != nil {
			return err
		}
		for i, p := range parts {
			if i != base {
				if err := s.copyIn(p); err != nil {
					return err
				}
			}
		}
	}
	for kg := s.start; kg <= s.end; kg++ {
		if b := groups[kg]; len(b) > 0 {
			if err := s.restoreGroup(kg, b); err != nil {
				return fmt.Errorf("restoring keyed state of key group %d: %w", kg, err)
			}
		}
	}
	return nil
}

// place puts p's files into dir: the shared sstables hard-linked where
// the file system allows (Pebble never writes one again), the rest (the
// MANIFEST Pebble appends to) copied.
func place(p checkpoint.NativePart, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range p.Files {
		dst := filepath.Join(dir, f.Name)
		if f.Stored != "" && os.Link(f.Path, dst) == nil { // an sstable: never written again
			continue
		}
		if err := copyPlain(f.Path, dst); err != nil {
			return fmt.Errorf("restoring keyed state from %s: %w", f.Path, err)
		}
	}
	return nil
}

func copyPlain(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// openBase makes p's database the store's, clipped to the store's range.
func (s *Store) openBase(p checkpoint.NativePart) error {
	if err := s.db.Close(); err != nil {
		return s.wrap(err)
	}
	s.db = nil
	if err := os.RemoveAll(s.dir); err != nil {
		return s.wrap(err)
	}
	if err := place(p, s.dir); err != nil {
		return err
	}
	db, err := openDB(s.dir, false)
	if err != nil {
		return s.wrap(fmt.Errorf("opening the restored database: %w", err))
	}
	s.db = db
	s.stored = map[string]string{}
	for _, f := range p.Files {
		if f.Stored != "" {
			s.stored[f.Name] = f.Stored
		}
	}
	if p.FirstKeyGroup < s.start {
		if err := db.DeleteRange(appendPrefix(nil, 0, 0), appendPrefix(nil, s.start, 0), pebble.NoSync); err != nil {
			return s.wrap(err)
		}
	}
	if p.LastKeyGroup > s.end {
		if err := db.DeleteRange(appendPrefix(nil, s.end+1, 0), []byte{0xff, 0xff, 0xff, 0xff, 0xff}, pebble.NoSync); err != nil {
			return s.wrap(err)
		}
	}
	return nil
}

// copyIn copies the keys of the store's range from p's database.
func (s *Store) copyIn(p checkpoint.NativePart) error {
	tmp, err := os.MkdirTemp(filepath.Dir(s.dir), "restore-*")
	if err != nil {
		return s.wrap(err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "db")
	if err := place(p, dir); err != nil {
		return err
	}
	src, err := openDB(dir, false)
	if err != nil {
		return s.wrap(fmt.Errorf("opening a restored database: %w", err))
	}
	defer src.Close()
	lo, hi := max(p.FirstKeyGroup, s.start), min(p.LastKeyGroup, s.end)
	it, err := src.NewIter(&pebble.IterOptions{LowerBound: appendPrefix(nil, lo, 0), UpperBound: appendPrefix(nil, hi+1, 0)})
	if err != nil {
		return s.wrap(err)
	}
	b := s.db.NewBatch()
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			b.Close()
			return s.wrap(err)
		}
		if err := b.Set(it.Key(), v, nil); err != nil {
			it.Close()
			b.Close()
			return s.wrap(err)
		}
		if b.Len() > 4<<20 {
			if err := b.Commit(pebble.NoSync); err != nil {
				it.Close()
				return s.wrap(err)
			}
			b = s.db.NewBatch()
		}
	}
	if err := it.Close(); err != nil {
		b.Close()
		return s.wrap(err)
	}
	return s.wrap(b.Commit(pebble.NoSync))
}

var _ runtime.NativeCheckpointer = (*Store)(nil)
