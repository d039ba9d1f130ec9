package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/partition"
)

// Reader reads a completed checkpoint or savepoint: its metadata, and for
// each subtask of a job restored from it (at the same or another
// parallelism) the state that subtask starts with.
type Reader struct {
	// Path is the checkpoint's directory.
	Path string
	Meta *Metadata
	src  source
}

// source opens the files of one checkpoint by name: its directory on disk,
// or bytes in memory (tests, fuzzing).
type source interface {
	open(name string) (io.ReaderAt, int64, io.Closer, error)
}

type dirSource string

func (d dirSource) open(name string) (io.ReaderAt, int64, io.Closer, error) {
	f, err := os.Open(filepath.Join(string(d), name))
	if err != nil {
		return nil, 0, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, nil, err
	}
	return f, fi.Size(), f, nil
}

type memSource map[string][]byte

func (m memSource) open(name string) (io.ReaderAt, int64, io.Closer, error) {
	b, ok := m[name]
	if !ok {
		return nil, 0, nil, fs.ErrNotExist
	}
	return bytes.NewReader(b), int64(len(b)), io.NopCloser(nil), nil
}

// Open reads the metadata of the checkpoint or savepoint at path (its
// directory or its _metadata file) and checks it; the state files are read
// when a subtask restores (Restore) or by Verify.
func Open(path string) (*Reader, error) {
	dir := path
	if filepath.Base(path) == MetadataFile {
		dir = filepath.Dir(path)
	}
	name := filepath.Join(dir, MetadataFile)
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		if _, derr := os.Stat(dir); derr != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", dir, derr)
		}
		return nil, fmt.Errorf("%s: %w", dir, ErrNoMetadata)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	m, err := decodeMetadata(b, name)
	if err != nil {
		return nil, err
	}
	return &Reader{Path: dir, Meta: m, src: dirSource(dir)}, nil
}

// Operator returns the metadata of operator id, if the checkpoint has
// state for it.
func (r *Reader) Operator(id string) (OperatorMeta, bool) {
	i, ok := slices.BinarySearchFunc(r.Meta.Operators, id, func(o OperatorMeta, id string) int { return strings.Compare(o.ID, id) })
	if !ok {
		return OperatorMeta{}, false
	}
	return r.Meta.Operators[i], true
}

// CheckOperators compares the operators with state in the checkpoint with
// the operator ids of the job restoring from it (Flink matches them by
// uid). State of an operator the job no longer has is an error naming
// them, unless allowNonRestored (--allow-non-restored-state), when it is
// dropped and the operators returned.
func (r *Reader) CheckOperators(ids []string, allowNonRestored bool) (dropped []string, err error) {
	have := make(map[string]bool, len(ids))
	for _, id := range ids {
		have[id] = true
	}
	var missing []string
	for _, op := range r.Meta.Operators {
		if !have[op.ID] && op.hasState() {
			missing = append(missing, fmt.Sprintf("%q (%d bytes)", op.ID, op.Size()))
		}
	}
	if len(missing) == 0 || allowNonRestored {
		return missing, nil
	}
	return nil, fmt.Errorf("%s: %w: %s; restore with --allow-non-restored-state to drop it",
		r.Path, ErrNonRestoredState, strings.Join(missing, ", "))
}

func (o OperatorMeta) hasState() bool {
	for _, s := range o.Subtasks {
		if s.Native != nil {
			return true
		}
		if s.Split.Count+s.Union.Count+s.Committables.Count > 0 {
			return true
		}
		for _, e := range s.KeyGroups {
			if e.Length > 0 {
				return true
			}
		}
		for _, ch := range s.Chains {
			for _, l := range ch {
				if l.Length > 0 {
					return true
				}
			}
		}
	}
	return false
}

// Restore is the state subtask of operator op starts with when the job runs
// at parallelism with maxParallelism, redistributed as Flink's
// StateAssignmentOperation does:
//
//   - keyed state: the key groups of partition.KeyGroupRange(maxParallelism,
//     parallelism, subtask), read from every old subtask whose range
//     overlaps it, and only those byte ranges;
//   - split elements: at the same parallelism each subtask gets its own
//     back; otherwise all of them, in old-subtask order, are cut into
//     parallelism contiguous runs whose lengths differ by at most one, the
//     longer first (Flink's RoundRobinOperatorStateRepartitioner);
//   - union elements: every one, to every subtask;
//   - committables: as split elements, so each is committed again by
//     exactly one subtask.
//
// An operator the checkpoint has no state for restores empty. A max
// parallelism other than the checkpoint's is refused (ErrMaxParallelism):
// key groups cannot be remapped.
func (r *Reader) Restore(op string, subtask, parallelism, maxParallelism int) (Restore, error) {
	where := fmt.Sprintf("restoring operator %q subtask %d of %d from %s", op, subtask, parallelism, r.Path)
	om, ok := r.Operator(op)
	if !ok {
		return Restore{}, nil
	}
	if maxParallelism != om.MaxParallelism {
		return Restore{}, fmt.Errorf("%s: %w: the checkpoint has max parallelism %d, the job %d; a different max parallelism cannot restore keyed state",
			where, ErrMaxParallelism, om.MaxParallelism, maxParallelism)
	}
	if err := checkParallelism(parallelism, maxParallelism); err != nil {
		return Restore{}, fmt.Errorf("%s: %w", where, err)
	}
	if subtask < 0 || subtask >= parallelism {
		return Restore{}, fmt.Errorf("%s: subtask outside [0, %d)", where, parallelism)
	}
	files := &openFiles{r: r, open: map[string]*stateFile{}}
	defer files.close()
	var out Restore
	var err error
	if out.KeyGroups, out.Deltas, err = files.keyGroups(om, parallelism, subtask); err != nil {
		return Restore{}, fmt.Errorf("%s: %w", where, err)
	}
	out.Native = r.nativeParts(om, parallelism, subtask)
	if out.Split, err = files.split(om, parallelism, subtask, "split", func(s *SubtaskMeta) Section { return s.Split }); err != nil {
		return Restore{}, fmt.Errorf("%s: %w", where, err)
	}
	if out.Committables, err = files.split(om, parallelism, subtask, "committables", func(s *SubtaskMeta) Section { return s.Committables }); err != nil {
		return Restore{}, fmt.Errorf("%s: %w", where, err)
	}
	for i := range om.Subtasks {
		s := &om.Subtasks[i]
		if s.Union.Count == 0 {
			continue
		}
		elems, err := files.section(s, s.Union, "union")
		if err != nil {
			return Restore{}, fmt.Errorf("%s: %w", where, err)
		}
		out.Union = append(out.Union, elems...)
	}
	return out, nil
}

// Verify reads every state file of the checkpoint through and checks its
// size, header and every checksum: what Latest does before it trusts a
// checkpoint.
func (r *Reader) Verify() error {
	files := &openFiles{r: r, open: map[string]*stateFile{}}
	defer files.close()
	buf := make([]byte, 256<<10)
	for _, om := range r.Meta.Operators {
		for i := range om.Subtasks {
			s := &om.Subtasks[i]
			f, err := files.get(s)
			if err != nil {
				return err
			}
			if err := r.verifyNative(s, buf); err != nil {
				return err
			}
			for k, e := range s.KeyGroups {
				if err := f.checkStream(e.Offset, e.Length, e.CRC, buf, fmt.Sprintf("key group %d", s.FirstKeyGroup+k)); err != nil {
					return err
				}
			}
			for k, ch := range s.Chains {
				for _, l := range ch {
					if l.Checkpoint == r.Meta.ID || l.Length == 0 {
						continue
					}
					lf, what, err := files.link(l, s.FirstKeyGroup+k)
					if err != nil {
						return err
					}
					if err := lf.checkStream(l.Offset, l.Length, l.CRC, buf, what); err != nil {
						return err
					}
				}
			}
			for _, sec := range []struct {
				name string
				s    Section
			}{{"split", s.Split}, {"union", s.Union}, {"committables", s.Committables}} {
				if _, err := files.section(s, sec.s, sec.name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// openFiles keeps the state files one Restore or Verify opened.
type openFiles struct {
	r    *Reader
	open map[string]*stateFile
}

type stateFile struct {
	name string // path, for errors
	ra   io.ReaderAt
	c    io.Closer
}

func (o *openFiles) close() {
	for _, f := range o.open {
		f.c.Close()
	}
}

// get opens the state file of s and checks its size and header.
func (o *openFiles) get(s *SubtaskMeta) (*stateFile, error) {
	if f := o.open[s.File]; f != nil {
		return f, nil
	}
	name := filepath.Join(o.r.Path, s.File)
	ra, size, c, err := o.r.src.open(s.File)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w: the state file is missing", name, ErrTruncated)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := &stateFile{name: name, ra: ra, c: c}
	o.open[s.File] = f
	if size < s.Size {
		return nil, fmt.Errorf("%s: %w: %d bytes, the metadata says %d", name, ErrTruncated, size, s.Size)
	}
	h := make([]byte, headerLen)
	n, err := ra.ReadAt(h, 0)
	if err := checkHeader(h[:n], stateMagic, name); err != nil {
		return nil, err
	}
	if n < headerLen && err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if size > s.Size {
		return nil, fmt.Errorf("%s: %w: %d bytes, the metadata says %d (not the file this checkpoint wrote)", name, ErrCorrupt, size, s.Size)
	}
	return f, nil
}

// link opens the state file of an older checkpoint that link l of key
// group kg's chain lies in, checking its header and that it holds the
// link's bytes; what names the link for errors.
func (o *openFiles) link(l Link, kg int) (*stateFile, string, error) {
	what := fmt.Sprintf("key group %d (checkpoint %d's chain link into checkpoint %d)", kg, o.r.Meta.ID, l.Checkpoint)
	rel := filepath.Join("..", refName(l.Checkpoint, l.File))
	if f := o.open[rel]; f != nil {
		return f, what, nil
	}
	name := filepath.Join(o.r.Path, rel)
	ra, size, c, err := o.r.src.open(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, what, fmt.Errorf("%s: %w: the state file of checkpoint %d that checkpoint %d references for %s is missing", name, ErrTruncated, l.Checkpoint, o.r.Meta.ID, what)
		}
		return nil, what, fmt.Errorf("%s (referenced by checkpoint %d): %w", name, o.r.Meta.ID, err)
	}
	f := &stateFile{name: name, ra: ra, c: c}
	o.open[rel] = f
	h := make([]byte, headerLen)
	n, err := ra.ReadAt(h, 0)
	if err := checkHeader(h[:n], stateMagic, name); err != nil {
		return nil, what, fmt.Errorf("%w (referenced by checkpoint %d)", err, o.r.Meta.ID)
	}
	if n < headerLen && err != nil {
		return nil, what, fmt.Errorf("%s: %w", name, err)
	}
	if size < l.Offset+l.Length {
		return nil, what, fmt.Errorf("%s: %w: %d bytes, checkpoint %d's chain for %s needs bytes %d..%d", name, ErrTruncated, size, o.r.Meta.ID, what, l.Offset, l.Offset+l.Length)
	}
	return f, what, nil
}

// chain reads the links of key group kg's chain: the base, then the
// deltas. own is the state file of the subtask the chain belongs to.
func (o *openFiles) chain(ch []Link, kg int, own *SubtaskMeta) (base []byte, deltas [][]byte, err error) {
	for k, l := range ch {
		var b []byte
		if l.Length > 0 {
			var f *stateFile
			what := fmt.Sprintf("key group %d", kg)
			if l.Checkpoint == o.r.Meta.ID {
				f, err = o.get(own)
			} else {
				f, what, err = o.link(l, kg)
			}
			if err != nil {
				return nil, nil, err
			}
			if b, err = f.read(l.Offset, l.Length, what); err != nil {
				return nil, nil, err
			}
			if err := checkCRC(crc(b), l.CRC, f.name, what, l.Offset, l.Length); err != nil {
				return nil, nil, err
			}
		}
		if k == 0 {
			base = b
		} else {
			deltas = append(deltas, b)
		}
	}
	return base, deltas, nil
}

// read reads n bytes at off.
func (f *stateFile) read(off, n int64, what string) ([]byte, error) {
	b := make([]byte, n)
	k, err := f.ra.ReadAt(b, off)
	if int64(k) == n {
		return b, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w: %s at bytes %d..%d ends after %d bytes", f.name, ErrTruncated, what, off, off+n, k)
	}
	return nil, fmt.Errorf("%s: reading %s: %w", f.name, what, err)
}

// checkStream checks the CRC of n bytes at off without holding them.
func (f *stateFile) checkStream(off, n int64, want uint32, buf []byte, what string) error {
	var sum uint32
	for done := int64(0); done < n; {
		chunk := buf[:min(int64(len(buf)), n-done)]
		k, err := f.ra.ReadAt(chunk, off+done)
		sum = crc32.Update(sum, castagnoli, chunk[:k])
		done += int64(k)
		if k < len(chunk) {
			if err == nil || errors.Is(err, io.EOF) {
				return fmt.Errorf("%s: %w: %s at bytes %d..%d ends after %d bytes", f.name, ErrTruncated, what, off, off+n, done)
			}
			return fmt.Errorf("%s: reading %s: %w", f.name, what, err)
		}
	}
	return checkCRC(sum, want, f.name, what, off, n)
}

func checkCRC(got, want uint32, name, what string, off, n int64) error {
	if got != want {
		return fmt.Errorf("%s: %w in %s (bytes %d..%d): crc32c %08x, the metadata says %08x", name, ErrChecksum, what, off, off+n, got, want)
	}
	return nil
}

// keyGroups reads the key groups of the new subtask's range from every old
// subtask whose range overlaps it: one read per old file, of the
// contiguous bytes of the overlap; an incremental subtask's chains, link
// by link (the byte ranges of those key groups only), the deltas apart.
func (o *openFiles) keyGroups(om OperatorMeta, parallelism, subtask int) (map[int][]byte, map[int][][]byte, error) {
	start, end := partition.KeyGroupRange(om.MaxParallelism, parallelism, subtask)
	var out map[int][]byte
	var deltas map[int][][]byte
	for i := range om.Subtasks {
		s := &om.Subtasks[i]
		if len(s.KeyGroups) == 0 {
			continue
		}
		lo, hi := max(start, s.FirstKeyGroup), min(end, s.FirstKeyGroup+len(s.KeyGroups)-1)
		if lo > hi {
			continue
		}
		if s.Chains != nil {
			for kg := lo; kg <= hi; kg++ {
				base, ds, err := o.chain(s.Chains[kg-s.FirstKeyGroup], kg, s)
				if err != nil {
					return nil, nil, err
				}
				if len(base) > 0 {
					if out == nil {
						out = map[int][]byte{}
					}
					out[kg] = base
				}
				if len(ds) > 0 {
					if deltas == nil {
						deltas = map[int][][]byte{}
					}
					deltas[kg] = ds
				}
			}
			continue
		}
		first, last := s.KeyGroups[lo-s.FirstKeyGroup], s.KeyGroups[hi-s.FirstKeyGroup]
		span := last.Offset + last.Length - first.Offset
		if span == 0 {
			continue
		}
		f, err := o.get(s)
		if err != nil {
			return nil, nil, err
		}
		b, err := f.read(first.Offset, span, fmt.Sprintf("key groups %d..%d", lo, hi))
		if err != nil {
			return nil, nil, err
		}
		if out == nil {
			out = map[int][]byte{}
		}
		for kg := lo; kg <= hi; kg++ {
			e := s.KeyGroups[kg-s.FirstKeyGroup]
			if e.Length == 0 {
				continue
			}
			v := b[e.Offset-first.Offset : e.Offset-first.Offset+e.Length : e.Offset-first.Offset+e.Length]
			if err := checkCRC(crc(v), e.CRC, f.name, fmt.Sprintf("key group %d", kg), e.Offset, e.Length); err != nil {
				return nil, nil, err
			}
			out[kg] = v
		}
	}
	return out, deltas, nil
}

// split gives the new subtask its share of a split-distributed list
// (Flink's RoundRobinOperatorStateRepartitioner for one named state): its
// own list at the same parallelism, else a contiguous run of the
// concatenation, reading only the old lists that run overlaps.
func (o *openFiles) split(om OperatorMeta, parallelism, subtask int, name string, section func(*SubtaskMeta) Section) ([][]byte, error) {
	if parallelism == om.Parallelism {
		s := &om.Subtasks[subtask]
		if section(s).Count == 0 {
			return nil, nil
		}
		return o.section(s, section(s), name)
	}
	total := 0
	for i := range om.Subtasks {
		total += section(&om.Subtasks[i]).Count
	}
	from, to := splitShare(total, parallelism, subtask)
	var out [][]byte
	at := 0
	for i := range om.Subtasks {
		s := &om.Subtasks[i]
		sec := section(s)
		lo, hi := max(from, at), min(to, at+sec.Count)
		if lo < hi {
			elems, err := o.section(s, sec, name)
			if err != nil {
				return nil, err
			}
			out = append(out, elems[lo-at:hi-at]...)
		}
		at += sec.Count
	}
	return out, nil
}

// splitShare is the run [from, to) of total elements new subtask j of p
// gets: total/p each, and one more for each of the first total%p.
func splitShare(total, p, j int) (from, to int) {
	base, rem := total/p, total%p
	from = j*base + min(j, rem)
	to = from + base
	if j < rem {
		to++
	}
	return from, to
}

// section reads and checks one element list of s's state file.
func (o *openFiles) section(s *SubtaskMeta, sec Section, name string) ([][]byte, error) {
	f, err := o.get(s)
	if err != nil {
		return nil, err
	}
	b, err := f.read(sec.Offset, sec.Length, name+" elements")
	if err != nil {
		return nil, err
	}
	if err := checkCRC(crc(b), sec.CRC, f.name, name+" elements", sec.Offset, sec.Length); err != nil {
		return nil, err
	}
	elems, err := decodeElements(b, sec.Count)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s elements: %w", f.name, ErrCorrupt, name, err)
	}
	return elems, nil
}
