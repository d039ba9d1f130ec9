package checkpoint

// Native keyed state: a state backend that checkpoints in its own format
// (Pebble's checkpoint: a folder of hard links to the database's
// immutable sstables, and its MANIFEST and OPTIONS) hands the folder over
// in SubtaskState.Native, and Writer.Write copies it into the storage:
//
//	<storage>/<job>/shared/<instance>-<file>-<crc32c>.sst  immutable files, shared by checkpoints
//	<storage>/<job>/chk-<id>/<operator>-<subtask>.native/ the other files of that checkpoint
//	<storage>/<job>/chk-<id>/<operator>-<subtask>.refs    the shared files it uses, one a line
//
// A shared file already in the storage (an earlier checkpoint copied it)
// is not copied again: a checkpoint copies only the files the database
// wrote since (incremental at file level, as Flink's RocksDB backend). The
// .refs files are the reference counts: Retain removes a shared file once
// no checkpoint folder left lists it (a checkpoint in progress wrote its
// .refs before it acknowledged, so its files are kept too).
//
// Savepoints never hold native state: they stay in the canonical format,
// which any backend restores.

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/partition"
)

// NativeState is the keyed state of one subtask in its backend's own
// format, as the backend's synchronous snapshot left it.
type NativeState struct {
	Format string // the backend's format ("pebble-v2"): only it restores the state
	// Dir is a local folder of the files; once acknowledged it is the
	// writer's, which copies the files and removes it.
	Dir string
	// Instance names the database the files come from (random, new for
	// each database opened): a shared file is stored under
	// <Instance>-<name>, unique across subtasks and runs.
	Instance string
	// Stored names files of Dir already in the storage (local name ->
	// stored name): a database restored from a checkpoint keeps its
	// files' names there.
	Stored                      map[string]string
	FirstKeyGroup, LastKeyGroup int
}

// NativeMeta is where a subtask's native state lies, in _metadata.
type NativeMeta struct {
	Format        string       `msgpack:"format"`
	FirstKeyGroup int          `msgpack:"first_key_group"`
	LastKeyGroup  int          `msgpack:"last_key_group"`
	Files         []NativeFile `msgpack:"files"`
	// Copied is the bytes this checkpoint copied into the storage (its
	// incremental size); the rest were there already.
	Copied int64 `msgpack:"copied"`
}

// NativeFile is one file of a native state: Name in the backend's
// folder, stored as shared/<Stored> under the job's folder when Shared,
// else as <operator>-<subtask>.native/<Name> in the checkpoint's.
type NativeFile struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Shared   bool
	Stored   string
	Size     int64
	CRC      uint32
}

// NativePart is one old subtask's native state a restoring subtask
// needs: its files, by the name the backend gives them and the path they
// are at.
type NativePart struct {
	Format                      string
	FirstKeyGroup, LastKeyGroup int
	Files                       []NativePartFile
}

// NativePartFile is a file of a NativePart.
type NativePartFile struct {
	Name   string // in the backend's folder
	Path   string // where it is now
	Stored string // its shared name, for a shared file (NativeState.Stored)
}

// SharedDir is the folder of the shared native files of the job whose
// checkpoints are in jobDir.
func SharedDir(jobDir string) string { return filepath.Join(jobDir, "shared") }

const (
	nativeSuffix = ".native"
	refsSuffix   = ".refs"
)

// sharedFile says whether a backend's file is immutable, so shared by
// checkpoints: Pebble's sstables.
func sharedFile(name string) bool { return strings.HasSuffix(name, ".sst") }

// writeNative copies ns into the storage for the state file name of
// checkpoint dir (a checkpoint's: <storage>/<job>/chk-<id>) and removes
// ns.Dir.
func writeNative(dir, name string, ns *NativeState) (*NativeMeta, error) {
	if ns.Instance == "" || !plainName(ns.Instance) {
		return nil, fmt.Errorf("native state: instance %q is not a plain name", ns.Instance)
	}
	ents, err := os.ReadDir(ns.Dir)
	if err != nil {
		return nil, fmt.Errorf("native state: %w", err)
	}
	shared := SharedDir(filepath.Dir(dir))
	if err := os.MkdirAll(shared, 0o755); err != nil {
		return nil, err
	}
	have, err := sharedIndex(shared)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(name, stateSuffix)
	priv := filepath.Join(dir, base+nativeSuffix)
	if err := os.Mkdir(priv, 0o755); err != nil {
		return nil, err
	}
	m := &NativeMeta{Format: ns.Format, FirstKeyGroup: ns.FirstKeyGroup, LastKeyGroup: ns.LastKeyGroup}
	var refs strings.Builder
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !plainName(n) {
			return nil, fmt.Errorf("native state: %s in %s is not a plain file", n, ns.Dir)
		}
		src := filepath.Join(ns.Dir, n)
		f := NativeFile{Name: n, Shared: sharedFile(n)}
		if !f.Shared {
			if f.Size, f.CRC, err = copyFile(src, filepath.Join(priv, n)); err != nil {
				return nil, err
			}
			m.Copied += f.Size
			m.Files = append(m.Files, f)
			continue
		}
		key := ns.Instance + "-" + strings.TrimSuffix(n, ".sst")
		if k, ok := storedKey(ns.Stored[n]); ok {
			key = k
		}
		if s, ok := have[key]; ok {
			f.Stored = s
			if f.Size, f.CRC, err = sharedMeta(shared, s); err != nil {
				return nil, err
			}
		} else {
			tmp := filepath.Join(shared, ".tmp-"+key)
			if f.Size, f.CRC, err = copyFile(src, tmp); err != nil {
				os.Remove(tmp)
				return nil, err
			}
			f.Stored = fmt.Sprintf("%s-%08x.sst", key, f.CRC)
			if err := os.Rename(tmp, filepath.Join(shared, f.Stored)); err != nil {
				return nil, err
			}
			have[key] = f.Stored
			m.Copied += f.Size
		}
		refs.WriteString(f.Stored + "\n")
		m.Files = append(m.Files, f)
	}
	if err := syncDir(shared); err != nil {
		return nil, err
	}
	if err := syncDir(priv); err != nil {
		return nil, err
	}
	if err := writeFileSync(filepath.Join(dir, base+refsSuffix), []byte(refs.String())); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(ns.Dir); err != nil {
		return nil, fmt.Errorf("native state: removing the local checkpoint %s: %w", ns.Dir, err)
	}
	return m, nil
}

// sharedIndex maps <instance>-<file> to the stored name of each shared
// file.
func sharedIndex(shared string) (map[string]string, error) {
	ents, err := os.ReadDir(shared)
	if err != nil {
		return nil, err
	}
	have := make(map[string]string, len(ents))
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".sst") {
			continue
		}
		if k, ok := storedKey(n); ok {
			have[k] = n
		}
	}
	return have, nil
}

// storedKey is the <instance>-<file> of a stored shared file's name
// <instance>-<file>-<crc32c>.sst.
func storedKey(stored string) (string, bool) {
	i := strings.LastIndexByte(stored, '-')
	if i <= 0 || !strings.HasSuffix(stored, ".sst") {
		return "", false
	}
	return stored[:i], true
}

// sharedMeta is the size of a stored shared file and the CRC its name
// says.
func sharedMeta(shared, stored string) (int64, uint32, error) {
	fi, err := os.Stat(filepath.Join(shared, stored))
	if err != nil {
		return 0, 0, err
	}
	var c uint32
	if _, err := fmt.Sscanf(stored[strings.LastIndexByte(stored, '-')+1:], "%08x.sst", &c); err != nil {
		return 0, 0, fmt.Errorf("shared file %s: %w: no checksum in its name", stored, ErrCorrupt)
	}
	return fi.Size(), c, nil
}

// copyFile copies src to dst (new), fsyncs it, and returns its size and
// CRC-32C.
func copyFile(src, dst string) (int64, uint32, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, 0, err
	}
	h := crc32.New(castagnoli)
	n, err := io.Copy(io.MultiWriter(out, h), bufio.NewReaderSize(in, 256<<10))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, h.Sum32(), err
}

func plainName(n string) bool {
	if n == "" || n[0] == '.' || len(n) > 255 {
		return false
	}
	for _, r := range n {
		if !fileNameRune(r) && r != '.' {
			return false
		}
	}
	return true
}

// validate checks a subtask's native state description.
func (n *NativeMeta) validate(maxP, p, subtask int) error {
	start, end := partition.KeyGroupRange(maxP, p, subtask)
	if n.FirstKeyGroup != start || n.LastKeyGroup != end {
		return fmt.Errorf("native key groups %d..%d, but the subtask owns %d..%d", n.FirstKeyGroup, n.LastKeyGroup, start, end)
	}
	if n.Format == "" {
		return errors.New("native state without a format")
	}
	for _, f := range n.Files {
		if !plainName(f.Name) || f.Shared && (!plainName(f.Stored) || !strings.HasSuffix(f.Stored, ".sst")) || f.Size < 0 {
			return fmt.Errorf("native file %q (stored %q) is not a plain file name", f.Name, f.Stored)
		}
	}
	return nil
}

// path is where f of s's native state is, for the checkpoint in dir.
func (f NativeFile) path(dir string, s *SubtaskMeta) string {
	if f.Shared {
		return filepath.Join(SharedDir(filepath.Dir(dir)), f.Stored)
	}
	return filepath.Join(dir, strings.TrimSuffix(s.File, stateSuffix)+nativeSuffix, f.Name)
}

// nativeParts are the native states of the old subtasks whose key groups
// overlap the new subtask's range.
func (r *Reader) nativeParts(om OperatorMeta, parallelism, subtask int) []NativePart {
	start, end := partition.KeyGroupRange(om.MaxParallelism, parallelism, subtask)
	var out []NativePart
	for i := range om.Subtasks {
		s := &om.Subtasks[i]
		n := s.Native
		if n == nil || n.LastKeyGroup < start || n.FirstKeyGroup > end {
			continue
		}
		p := NativePart{Format: n.Format, FirstKeyGroup: n.FirstKeyGroup, LastKeyGroup: n.LastKeyGroup}
		for _, f := range n.Files {
			p.Files = append(p.Files, NativePartFile{Name: f.Name, Path: f.path(r.Path, s), Stored: f.Stored})
		}
		out = append(out, p)
	}
	return out
}

// verifyNative checks the size and CRC-32C of every native file of s.
func (r *Reader) verifyNative(s *SubtaskMeta, buf []byte) error {
	if s.Native == nil {
		return nil
	}
	if _, ok := r.src.(dirSource); !ok {
		return fmt.Errorf("%s: native state outside a checkpoint folder", s.File)
	}
	for _, f := range s.Native.Files {
		p := f.path(r.Path, s)
		fh, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w: the native state file is missing", p, ErrTruncated)
		}
		if err != nil {
			return err
		}
		h := crc32.New(castagnoli)
		n, err := io.CopyBuffer(h, fh, buf)
		fh.Close()
		switch {
		case err != nil:
			return fmt.Errorf("%s: %w", p, err)
		case n != f.Size:
			return fmt.Errorf("%s: %w: %d bytes, the metadata says %d", p, ErrTruncated, n, f.Size)
		case h.Sum32() != f.CRC:
			return fmt.Errorf("%s: %w: crc32c %08x, the metadata says %08x", p, ErrChecksum, h.Sum32(), f.CRC)
		}
	}
	return nil
}

// sweepShared removes the shared files no checkpoint folder of jobDir
// lists in a .refs file any more, and copies a crash left unfinished.
func sweepShared(jobDir string) error {
	shared := SharedDir(jobDir)
	ents, err := os.ReadDir(shared)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	used := map[string]bool{}
	dirs, err := os.ReadDir(jobDir)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if _, ok := parseCheckpointDir(d.Name()); !ok || !d.IsDir() {
			continue
		}
		refs, err := filepath.Glob(filepath.Join(jobDir, d.Name(), "*"+refsSuffix))
		if err != nil {
			return err
		}
		for _, rf := range refs {
			b, err := os.ReadFile(rf)
			if err != nil {
				return err
			}
			for _, l := range strings.Split(string(b), "\n") {
				if l != "" {
					used[l] = true
				}
			}
		}
	}
	removed := false
	for _, e := range ents {
		if n := e.Name(); !used[n] {
			if err := os.Remove(filepath.Join(shared, n)); err != nil {
				return err
			}
			removed = true
		}
	}
	if removed {
		return syncDir(shared)
	}
	return nil
}

// native copies s's native state into the checkpoint (Write).
func (w *Writer) native(name string, s *SubtaskState) (*NativeMeta, error) {
	if w.kind != KindCheckpoint {
		return nil, fmt.Errorf("a %s holds keyed state in the canonical format only, not the backend's native %s", w.kind, s.Native.Format)
	}
	if len(s.KeyGroups) > 0 {
		return nil, errors.New("both native and canonical keyed state")
	}
	start, end := partition.KeyGroupRange(s.MaxParallelism, s.Parallelism, s.Subtask)
	if s.Native.FirstKeyGroup != start || s.Native.LastKeyGroup != end {
		return nil, fmt.Errorf("native key groups %d..%d, but the subtask owns %d..%d", s.Native.FirstKeyGroup, s.Native.LastKeyGroup, start, end)
	}
	return writeNative(w.dir, name, s.Native)
}
