package checkpoint

import (
	"bufio"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sluicehq/sluice/partition"
)

// CheckpointDir is the directory of checkpoint id of job under storage.
func CheckpointDir(storage, job string, id ID) string {
	return filepath.Join(storage, job, checkpointDirName(id))
}

func checkpointDirName(id ID) string { return "chk-" + strconv.FormatUint(uint64(id), 10) }

// Writer writes one checkpoint or savepoint: the state files of its
// subtasks as they come (Write, safe for concurrent use), then its
// _metadata (Publish). Until Publish has returned, the directory is not a
// checkpoint.
type Writer struct {
	dir  string
	job  string
	id   ID
	kind Kind

	mu    sync.Mutex
	names map[string]bool
	done  bool
	bases map[ID]*Metadata // the base checkpoints incremental states named
	refs  map[string]bool  // chk-<id>/<file> of older checkpoints this one references
}

// CreateCheckpoint starts checkpoint id of job in <storage>/<job>/chk-<id>/.
// A directory of that name without _metadata (left by a crash) is emptied;
// one with _metadata is a completed checkpoint and is never overwritten.
func CreateCheckpoint(storage, job string, id ID) (*Writer, error) {
	if job == "" || job != filepath.Base(job) || job == "." || job == ".." {
		return nil, fmt.Errorf("checkpoint storage: job name %q is not a plain directory name", job)
	}
	dir := CheckpointDir(storage, job, id)
	if _, err := os.Stat(filepath.Join(dir, MetadataFile)); err == nil {
		return nil, fmt.Errorf("checkpoint %d: %s is already a completed checkpoint", id, dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("checkpoint %d: clearing an unfinished %s: %w", id, dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint %d: %w", id, err)
	}
	return &Writer{dir: dir, job: job, id: id, kind: KindCheckpoint, names: map[string]bool{}}, nil
}

// CreateSavepoint starts savepoint id of job in a new directory
// <dir>/savepoint-<id>-<random>/. A savepoint holds every file it needs and
// names them relative to itself, so it can be moved or copied anywhere.
func CreateSavepoint(dir, job string, id ID) (*Writer, error) {
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil, fmt.Errorf("savepoint %d: %w", id, err)
	}
	sp := filepath.Join(dir, fmt.Sprintf("savepoint-%d-%s", id, hex.EncodeToString(r[:])))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("savepoint %d: %w", id, err)
	}
	if err := os.Mkdir(sp, 0o755); err != nil {
		return nil, fmt.Errorf("savepoint %d: %w", id, err)
	}
	return &Writer{dir: sp, job: job, id: id, kind: KindSavepoint, names: map[string]bool{}}, nil
}

// Dir is the checkpoint's directory.
func (w *Writer) Dir() string { return w.dir }

// Write writes the state file of one subtask of one operator and fsyncs it,
// and returns the handle the subtask acknowledges the checkpoint with.
func (w *Writer) Write(s SubtaskState) (SubtaskFile, error) {
	where := fmt.Sprintf("%s %d: operator %q subtask %d", w.kind, w.id, s.Operator, s.Subtask)
	if s.Operator == "" {
		return SubtaskFile{}, fmt.Errorf("%s %d: a subtask state without an operator id", w.kind, w.id)
	}
	if err := checkParallelism(s.Parallelism, s.MaxParallelism); err != nil {
		return SubtaskFile{}, fmt.Errorf("%s: %w", where, err)
	}
	if s.Subtask < 0 || s.Subtask >= s.Parallelism {
		return SubtaskFile{}, fmt.Errorf("%s: subtask outside [0, parallelism %d)", where, s.Parallelism)
	}
	if n := len(s.KeyGroups); n > 0 {
		start, end := partition.KeyGroupRange(s.MaxParallelism, s.Parallelism, s.Subtask)
		if s.FirstKeyGroup != start || n != end-start+1 {
			return SubtaskFile{}, fmt.Errorf("%s: key groups %d..%d, but the subtask owns %d..%d",
				where, s.FirstKeyGroup, s.FirstKeyGroup+n-1, start, end)
		}
	}
	name := stateFileName(s.Operator, s.Subtask)
	w.mu.Lock()
	dup, done := w.names[name], w.done
	w.names[name] = true
	w.mu.Unlock()
	if done {
		return SubtaskFile{}, fmt.Errorf("%s: the checkpoint is already published", where)
	}
	if dup {
		return SubtaskFile{}, fmt.Errorf("%s: written twice (or its file name %s clashes with another operator's)", where, name)
	}
	path := filepath.Join(w.dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return SubtaskFile{}, fmt.Errorf("%s: %w", where, err)
	}
	meta, err := writeState(f, &s)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return SubtaskFile{}, fmt.Errorf("%s: writing %s: %w", where, path, err)
	}
	meta.Subtask = s.Subtask
	meta.File = name
	if s.Native != nil {
		if meta.Native, err = w.native(name, &s); err != nil {
			os.Remove(path)
			return SubtaskFile{}, fmt.Errorf("%s: %w", where, err)
		}
	}
	if s.Base != 0 {
		if err := w.chain(&s, &meta); err != nil {
			os.Remove(path)
			return SubtaskFile{}, fmt.Errorf("%s: %w", where, err)
		}
	}
	return SubtaskFile{Operator: s.Operator, Parallelism: s.Parallelism, MaxParallelism: s.MaxParallelism, SubtaskMeta: meta}, nil
}

// chain makes the key-group chains of an incremental subtask state s,
// whose file meta describes: each key group's chain in base checkpoint
// s.Base, followed by its delta in this file (ChangeDelta), replaced by
// its full state in this file (ChangeFull) or as it is (ChangeSame). The
// files of older checkpoints it references are recorded in _refs, so that
// Retain keeps them while this checkpoint is unfinished.
func (w *Writer) chain(s *SubtaskState, meta *SubtaskMeta) error {
	if w.kind != KindCheckpoint {
		return fmt.Errorf("a %s is self-contained: incremental state (on checkpoint %d) cannot go in one", w.kind, s.Base)
	}
	if len(s.Changes) != len(s.KeyGroups) {
		return fmt.Errorf("%d key-group changes for %d key groups", len(s.Changes), len(s.KeyGroups))
	}
	if s.Base >= w.id {
		return fmt.Errorf("incremental on checkpoint %d, which is not older than %d", s.Base, w.id)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	base, err := w.base(s.Base)
	if err != nil {
		return err
	}
	bs, err := base.subtask(s)
	if err != nil {
		return fmt.Errorf("base checkpoint %d: %w", s.Base, err)
	}
	meta.Chains = make([][]Link, len(s.KeyGroups))
	added := false
	for i, ch := range s.Changes {
		own := Link{Checkpoint: w.id, File: meta.File, Offset: meta.KeyGroups[i].Offset, Length: meta.KeyGroups[i].Length, CRC: meta.KeyGroups[i].CRC}
		var c []Link
		switch ch {
		case ChangeFull:
			c = []Link{own}
		case ChangeDelta, ChangeSame:
			c = bs.chain(base.ID, i)
			if ch == ChangeDelta {
				if len(c) >= maxChain {
					return fmt.Errorf("key group %d: its chain would have %d links, past the bound of %d (the backend must compact it)", s.FirstKeyGroup+i, len(c)+1, maxChain)
				}
				c = append(c, own)
			} else if own.Length != 0 {
				return fmt.Errorf("key group %d is unchanged but has %d bytes", s.FirstKeyGroup+i, own.Length)
			}
		default:
			return fmt.Errorf("key group %d: unknown change %d", s.FirstKeyGroup+i, ch)
		}
		for _, l := range c {
			if ref := refName(l.Checkpoint, l.File); l.Checkpoint != w.id && l.Length > 0 && !w.refs[ref] {
				w.refs[ref], added = true, true
			}
		}
		meta.Chains[i] = c
	}
	if !added {
		return nil
	}
	refs := make([]string, 0, len(w.refs))
	for r := range w.refs {
		refs = append(refs, r)
	}
	slices.Sort(refs)
	var b []byte
	for _, r := range refs {
		b = append(b, r+"\n"...)
	}
	if err := writeFileSync(filepath.Join(w.dir, refsFile), b); err != nil {
		return fmt.Errorf("recording the files it references: %w", err)
	}
	return nil
}

// base returns the metadata of base checkpoint id of the job, reading it
// once. w.mu is held.
func (w *Writer) base(id ID) (*Metadata, error) {
	if m := w.bases[id]; m != nil {
		return m, nil
	}
	dir := filepath.Join(filepath.Dir(w.dir), checkpointDirName(id))
	if pruned(dir) {
		return nil, fmt.Errorf("base checkpoint %d (%s) was removed by the retain policy", id, dir)
	}
	r, err := Open(dir)
	if err != nil {
		return nil, fmt.Errorf("base checkpoint %d: %w", id, err)
	}
	if r.Meta.Kind != KindCheckpoint || r.Meta.ID != id {
		return nil, fmt.Errorf("base checkpoint %d: %s holds %s %d", id, dir, r.Meta.Kind, r.Meta.ID)
	}
	if w.bases == nil {
		w.bases, w.refs = map[ID]*Metadata{}, map[string]bool{}
	}
	w.bases[id] = r.Meta
	return r.Meta, nil
}

// subtask finds the state of s's operator and subtask in m, which must
// have the same parallelism, max parallelism and key-group range.
func (m *Metadata) subtask(s *SubtaskState) (*SubtaskMeta, error) {
	i, ok := slices.BinarySearchFunc(m.Operators, s.Operator, func(o OperatorMeta, id string) int { return cmp.Compare(o.ID, id) })
	if !ok {
		return nil, fmt.Errorf("it has no state for operator %q", s.Operator)
	}
	om := &m.Operators[i]
	if om.Parallelism != s.Parallelism || om.MaxParallelism != s.MaxParallelism {
		return nil, fmt.Errorf("operator %q ran at parallelism %d and max parallelism %d there, %d and %d now",
			s.Operator, om.Parallelism, om.MaxParallelism, s.Parallelism, s.MaxParallelism)
	}
	bs := &om.Subtasks[s.Subtask]
	if bs.FirstKeyGroup != s.FirstKeyGroup || len(bs.KeyGroups) != len(s.KeyGroups) {
		return nil, fmt.Errorf("operator %q subtask %d has key groups %d+%d there, %d+%d now",
			s.Operator, s.Subtask, bs.FirstKeyGroup, len(bs.KeyGroups), s.FirstKeyGroup, len(s.KeyGroups))
	}
	return bs, nil
}

// chain is key group FirstKeyGroup+i of s, in checkpoint id, as a chain.
func (s *SubtaskMeta) chain(id ID, i int) []Link {
	if s.Chains != nil {
		return slices.Clone(s.Chains[i])
	}
	e := s.KeyGroups[i]
	return []Link{{Checkpoint: id, File: s.File, Offset: e.Offset, Length: e.Length, CRC: e.CRC}}
}

// refsFile lists, one a line, the files of older checkpoints an
// unfinished checkpoint references (chk-<id>/<file>); once it is
// published its _metadata says so.
const refsFile = "_refs"

func refName(id ID, file string) string { return checkpointDirName(id) + "/" + file }

// writeState writes the header, the key groups and the three element lists
// of s, and returns where each lies.
func writeState(f io.Writer, s *SubtaskState) (SubtaskMeta, error) {
	bw := bufio.NewWriterSize(f, 256<<10)
	m := SubtaskMeta{FirstKeyGroup: s.FirstKeyGroup}
	if _, err := bw.Write(appendHeader(nil, stateMagic)); err != nil {
		return m, err
	}
	at := int64(headerLen)
	if len(s.KeyGroups) > 0 {
		m.KeyGroups = make([]Extent, len(s.KeyGroups))
	}
	for i, kg := range s.KeyGroups {
		m.KeyGroups[i] = Extent{Offset: at, Length: int64(len(kg)), CRC: crc(kg)}
		if _, err := bw.Write(kg); err != nil {
			return m, err
		}
		at += int64(len(kg))
	}
	var buf []byte
	for _, sec := range []struct {
		dst   *Section
		elems [][]byte
	}{{&m.Split, s.Split}, {&m.Union, s.Union}, {&m.Committables, s.Committables}} {
		buf = appendElements(buf[:0], sec.elems)
		*sec.dst = Section{Offset: at, Length: int64(len(buf)), Count: len(sec.elems), CRC: crc(buf)}
		if _, err := bw.Write(buf); err != nil {
			return m, err
		}
		at += int64(len(buf))
	}
	m.Size = at
	return m, bw.Flush()
}

// Publish completes the checkpoint: it builds its _metadata from the
// handles its subtasks acknowledged with (WriteMetadata.Files) and the
// trigger time, and writes it last and atomically: the directory is
// fsynced (so are the state files, by Write), the metadata goes to a
// temporary file that is fsynced and renamed to _metadata, and the
// directory and its parent are fsynced again. A crash at any point leaves
// either no checkpoint or a complete one.
func (w *Writer) Publish(triggered time.Time, files []SubtaskFile) error {
	m, err := buildMetadata(w.job, w.id, w.kind, triggered, files)
	if err != nil {
		return fmt.Errorf("%s %d in %s: %w", w.kind, w.id, w.dir, err)
	}
	b, err := encodeMetadata(m)
	if err != nil {
		return fmt.Errorf("%s %d in %s: %w", w.kind, w.id, w.dir, err)
	}
	for _, f := range files {
		fi, err := os.Stat(filepath.Join(w.dir, f.File))
		if err != nil {
			return fmt.Errorf("%s %d: %w", w.kind, w.id, err)
		}
		if fi.Size() != f.Size {
			return fmt.Errorf("%s %d: %s has %d bytes, its handle says %d", w.kind, w.id, filepath.Join(w.dir, f.File), fi.Size(), f.Size)
		}
	}
	if err := checkLinks(filepath.Dir(w.dir), m); err != nil {
		return fmt.Errorf("%s %d: %w", w.kind, w.id, err)
	}
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	if err := syncDir(w.dir); err != nil {
		return fmt.Errorf("%s %d: %w", w.kind, w.id, err)
	}
	tmp := filepath.Join(w.dir, MetadataFile+".tmp")
	if err := writeFileSync(tmp, b); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s %d: writing %s: %w", w.kind, w.id, tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(w.dir, MetadataFile)); err != nil {
		return fmt.Errorf("%s %d: %w", w.kind, w.id, err)
	}
	if err := syncDir(w.dir); err != nil {
		return fmt.Errorf("%s %d: %w", w.kind, w.id, err)
	}
	if err := syncDir(filepath.Dir(w.dir)); err != nil {
		return fmt.Errorf("%s %d: %w", w.kind, w.id, err)
	}
	os.Remove(filepath.Join(w.dir, refsFile)) // _metadata says it now
	return nil
}

// checkLinks checks that every file of an older checkpoint that m's chains
// reference is there and long enough: a checkpoint is never published
// with a chain into a file that is gone.
func checkLinks(jobDir string, m *Metadata) error {
	sizes := map[string]int64{}
	for _, om := range m.Operators {
		for _, s := range om.Subtasks {
			for _, ch := range s.Chains {
				for _, l := range ch {
					if l.Checkpoint == m.ID || l.Length == 0 {
						continue // a zero-length link reads nothing
					}
					ref := refName(l.Checkpoint, l.File)
					size, ok := sizes[ref]
					if !ok {
						fi, err := os.Stat(filepath.Join(jobDir, ref))
						if err != nil {
							return fmt.Errorf("operator %q subtask %d references %s of checkpoint %d: %w", om.ID, s.Subtask, l.File, l.Checkpoint, err)
						}
						size = fi.Size()
						sizes[ref] = size
					}
					if l.Offset+l.Length > size {
						return fmt.Errorf("operator %q subtask %d references bytes %d..%d of %s, which has %d", om.ID, s.Subtask, l.Offset, l.Offset+l.Length, filepath.Join(jobDir, ref), size)
					}
				}
			}
		}
	}
	return nil
}

// Discard removes the directory of an aborted checkpoint (NotifyAbort).
func (w *Writer) Discard() error {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
	if err := os.RemoveAll(w.dir); err != nil {
		return fmt.Errorf("discarding %s %d: %w", w.kind, w.id, err)
	}
	return nil
}

// buildMetadata groups the acknowledged handles by operator and checks that
// every operator has one per subtask, all with the same parallelism and max
// parallelism.
func buildMetadata(job string, id ID, kind Kind, triggered time.Time, files []SubtaskFile) (*Metadata, error) {
	m := &Metadata{Job: job, ID: id, Kind: kind, Timestamp: triggered.UnixMilli()}
	byOp := map[string][]SubtaskFile{}
	for _, f := range files {
		byOp[f.Operator] = append(byOp[f.Operator], f)
	}
	for op, fs := range byOp {
		slices.SortFunc(fs, func(a, b SubtaskFile) int { return cmp.Compare(a.Subtask, b.Subtask) })
		om := OperatorMeta{ID: op, MaxParallelism: fs[0].MaxParallelism, Parallelism: fs[0].Parallelism}
		for i, f := range fs {
			if f.Parallelism != om.Parallelism || f.MaxParallelism != om.MaxParallelism {
				return nil, fmt.Errorf("operator %q: subtask %d has parallelism %d and max parallelism %d, subtask %d %d and %d",
					op, f.Subtask, f.Parallelism, f.MaxParallelism, fs[0].Subtask, om.Parallelism, om.MaxParallelism)
			}
			if f.Subtask != i {
				if f.Subtask < i {
					return nil, fmt.Errorf("operator %q: subtask %d acknowledged twice", op, f.Subtask)
				}
				return nil, fmt.Errorf("operator %q: subtask %d of %d has no state file", op, i, om.Parallelism)
			}
			om.Subtasks = append(om.Subtasks, f.SubtaskMeta)
		}
		if len(fs) != om.Parallelism {
			return nil, fmt.Errorf("operator %q: %d state files for parallelism %d", op, len(fs), om.Parallelism)
		}
		m.Operators = append(m.Operators, om)
	}
	slices.SortFunc(m.Operators, func(a, b OperatorMeta) int { return cmp.Compare(a.ID, b.ID) })
	return m, nil
}

func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir fsyncs a directory, so that the entries created, renamed or
// removed in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, fs.ErrInvalid) {
		return nil // a file system that cannot sync directories
	}
	return err
}
