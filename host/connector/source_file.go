package connector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/roots"

	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/runtime"
)

func init() {
	registerSource(spec.FileSource, func(b *Builtin, o *options, op *pipeline.Operator, subtask, parallelism int) (runtime.Source, error) {
		return newFileSource(o, b, op.OnError, subtask, parallelism)
	})
}

// fileSource reads a file of JSON lines or CSV: options path (relative to
// the pipeline file's folder), format (json, the default, or csv) and, for
// csv, null-literal (the cell text read as null). It is
// bounded. With parallelism p, subtask i reads the whole file and keeps
// the records i, i+p, i+2p, ... (see source_lines.go).
type fileSource struct {
	lineReader
	path    string
	given   string   // the path as the pipeline wrote it
	roots   []string // Builtin.Roots
	setting string   // Builtin.RootsSetting
	f       *os.File
	total   int64
	size    int64 // bytes of the file at Open
}

func newFileSource(o *options, b *Builtin, onError string, subtask, parallelism int) (*fileSource, error) {
	if !o.has("path") {
		o.fail("option \"path\" is required")
	}
	path := o.str("path", "")
	format := o.specEnum("format", spec.FileFormat(path))
	null, hasNull := o.nullLiteral(format)
	if err := o.finish(); err != nil {
		return nil, err
	}
	s := &fileSource{path: b.path(path), given: path, roots: b.Roots, setting: b.RootsSetting, total: -1}
	s.lineReader = lineReader{op: o.op, input: s.path, csv: format == "csv", null: null, hasNull: hasNull,
		subtask: subtask, parallelism: parallelism, onError: onError, badRecord: b.BadRecord}
	return s, nil
}

// Open opens the file and counts this subtask's records.
func (s *fileSource) Open(ctx *runtime.OpenContext) error {
	if ctx != nil {
		s.reject = ctx.Reject
	}
	// a pipe would block the open until a writer comes (no signal stops
	// it), and a file source reads its input twice (count, then read)
	if fi, err := statFile(s.roots, s.path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return fmt.Errorf("source %q: %s is not a regular file (%s): a file source reads its input twice, to count and split it; read a pipe or a device through a stdin source", s.op, s.path, fileKind(fi.Mode()))
	}
	f, err := openFile(s.roots, s.path)
	if err != nil {
		if errors.Is(err, roots.ErrOutside) {
			return fmt.Errorf("source %q: %w", s.op, asWritten(err, s.given, s.setting))
		}
		return fmt.Errorf("source %q: cannot read %s: %w", s.op, s.path, unwrapPath(err))
	}
	n, err := countRecords(f, s.csv)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("source %q: reading %s: %w", s.op, s.path, unwrapPath(err))
	}
	s.f, s.total = f, int64(splitCount(n, s.subtask, s.parallelism))
	if fi, err := f.Stat(); err == nil {
		s.size = fi.Size()
	}
	return nil
}

// Total is the number of records this subtask reads, bad lines included;
// -1 before Open.
func (s *fileSource) Total() int64 { return s.total }

func (s *fileSource) Run(ctx context.Context, out runtime.Collector) error {
	if s.f == nil {
		return fmt.Errorf("source %q: Run before Open", s.op)
	}
	if err := s.seekResume(); err != nil {
		return err
	}
	return s.run(ctx, s.f, out)
}

func (s *fileSource) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// unwrapPath drops the *os.PathError wrapper, whose text repeats the path
// the caller's message already names.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// asWritten makes a *roots.Error name the path as the pipeline wrote it
// and the setting that chooses the roots.
func asWritten(err error, given, setting string) error {
	var re *roots.Error
	if errors.As(err, &re) {
		c := *re
		c.Path, c.Setting = given, setting
		return &c
	}
	return err
}

// statFile is os.Stat of path, through the roots when there are any.
func statFile(allowed []string, path string) (os.FileInfo, error) {
	if allowed == nil {
		return os.Stat(path)
	}
	return roots.Stat(allowed, path)
}

// fileKind names a file mode that is not a regular file's.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "of another kind"
}

// openFile opens path for reading, through the roots when there are any.
func openFile(allowed []string, path string) (*os.File, error) {
	if allowed == nil {
		return os.Open(path)
	}
	return roots.Open(allowed, path)
}
