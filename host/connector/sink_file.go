package connector

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/roots"
	"github.com/sluicehq/sluice/host/runtime"
)

func init() {
	registerSink(spec.FileSink, func(b *Builtin, o *options, _ *pipeline.Operator, subtask, parallelism int) (runtime.Operator, error) {
		return newFileSink(o, b, subtask, parallelism)
	})
}

// fileSink writes records to a file: options path (relative to the
// pipeline file's folder) and format (json, the default: one compact JSON
// value per line, keys in record order; or csv: a header row from the
// first record's keys, and null as option null-literal when it is set).
// The parent folder is created. The file is
// truncated when the sink opens and written once per batch.
//
// At parallelism > 1 each subtask writes its own file, named like Flink's
// part files by the 0-based subtask index inserted before the extension:
// out.jsonl becomes out-0.jsonl, out-1.jsonl, ...
type fileSink struct {
	op      string
	path    string
	given   string   // the path as the pipeline wrote it
	roots   []string // Builtin.Roots
	setting string   // Builtin.RootsSetting
	csv     bool
	f       *os.File
	buf     []byte
	n       int64 // records written
	cols    csvColumns
	// parts, when the job checkpoints (Builtin.Checkpointed), are the
	// part files of the two-phase commit (sink_file_commit.go).
	parts        *partFiles
	subtask      int
	parallelism  int
	checkpointed bool
}

func newFileSink(o *options, b *Builtin, subtask, parallelism int) (*fileSink, error) {
	if !o.has("path") {
		o.fail("option \"path\" is required")
	}
	path := o.str("path", "")
	format := o.specEnum("format", spec.FileFormat(path))
	null, hasNull := o.nullLiteral(format)
	if err := o.finish(); err != nil {
		return nil, err
	}
	given := path
	path = b.path(path)
	if parallelism > 1 && !b.Checkpointed { // parts are named by subtask anyway
		path = spec.SubtaskFile(path, subtask)
	}
	return &fileSink{op: o.op, path: path, given: given, roots: b.Roots, setting: b.RootsSetting, csv: format == "csv",
		cols: csvColumns{null: []byte(null), hasNull: hasNull}, subtask: subtask, parallelism: parallelism, checkpointed: b.Checkpointed}, nil
}

// Open creates the file and its folder (with checkpoints: the folder; the
// part files come with the records).
func (s *fileSink) Open(*runtime.OpenContext) error {
	if s.checkpointed {
		p, err := openParts(s.op, s.path, s.roots, s.subtask, s.parallelism)
		if errors.Is(err, roots.ErrOutside) {
			return fmt.Errorf("sink %q: %w", s.op, asWritten(err, s.given, s.setting))
		}
		if err != nil {
			return s.createErr(err)
		}
		s.parts = p
		return nil
	}
	if s.roots != nil {
		f, err := roots.Create(s.roots, s.path)
		if err != nil {
			if errors.Is(err, roots.ErrOutside) {
				return fmt.Errorf("sink %q: %w", s.op, asWritten(err, s.given, s.setting))
			}
			return s.createErr(err)
		}
		s.f = f
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return s.createErr(err)
	}
	f, err := os.Create(s.path)
	if err != nil {
		return s.createErr(err)
	}
	s.f = f
	return nil
}

// createErr says why the sink's file could not be created; when a folder
// of its path is a file, it says which ("file exists" or "not a
// directory" named neither).
func (s *fileSink) createErr(err error) error {
	for dir := filepath.Dir(s.path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if fi, statErr := os.Stat(dir); statErr == nil {
			if !fi.IsDir() {
				return fmt.Errorf("sink %q: cannot write %s: %s is a file, not a folder", s.op, s.path, dir)
			}
			break
		}
	}
	return fmt.Errorf("sink %q: cannot write %s: %w", s.op, s.path, unwrapPath(err))
}

// Process writes count records. On a record it cannot write, the records
// before it are still written.
func (s *fileSink) Process(_ int, batch []byte, count int, _ runtime.Collector) error {
	if s.f == nil && s.parts == nil {
		return fmt.Errorf("sink %q: Process before Open", s.op)
	}
	s.buf = s.buf[:0]
	rd := abi.NewReader(batch, count)
	for rd.Next() {
		line := len(s.buf)
		var err error
		if s.csv {
			s.buf, err = s.cols.appendRow(s.buf, rd.Record().Value)
		} else {
			s.buf, err = appendJSONLine(s.buf, rd.Record().Value)
		}
		if err != nil {
			s.buf = s.buf[:line]
			return s.fail(fmt.Errorf("sink %q: record %d: %w", s.op, s.n+1, err))
		}
		s.n++
		if len(s.buf) >= maxBatchBytes {
			if err := s.write(); err != nil {
				return err
			}
		}
	}
	if err := rd.Err(); err != nil {
		return s.fail(fmt.Errorf("sink %q: record %d: %w", s.op, s.n+1, err))
	}
	return s.write()
}

func appendJSONLine(b, value []byte) ([]byte, error) {
	out, err := codec.MsgpackToJSON(b, value)
	if err != nil {
		return b, fmt.Errorf("cannot write it as JSON: %w", err)
	}
	return append(out, '\n'), nil
}

// fail writes the records formatted before a bad one, then reports it.
func (s *fileSink) fail(err error) error {
	if werr := s.write(); werr != nil {
		return werr
	}
	return err
}

func (s *fileSink) write() error {
	if len(s.buf) == 0 {
		return nil
	}
	f, name := s.f, s.path
	if s.parts != nil {
		var fresh bool
		var err error
		if f, fresh, err = s.parts.file(); err != nil {
			return err
		}
		name = filepath.Join(s.parts.dirPath, s.parts.inProgress(s.subtask, s.parts.curPart))
		if fresh && s.csv && s.parts.opened > 1 && s.cols.names != nil {
			if _, err := f.Write(s.cols.appendHeader(nil)); err != nil { // every part is a whole CSV file
				return fmt.Errorf("sink %q: writing %s: %w", s.op, name, unwrapPath(err))
			}
		}
	}
	_, err := f.Write(s.buf)
	s.buf = s.buf[:0]
	if err != nil {
		return fmt.Errorf("sink %q: writing %s: %w", s.op, name, unwrapPath(err))
	}
	return nil
}

// Close closes the file; a failure to close (data not written) is an
// error unless the job is being torn down (out is nil).
func (s *fileSink) Close(out runtime.Collector) error {
	if p := s.parts; p != nil {
		s.parts = nil
		if out == nil {
			p.abandon()
			return p.dir.Close()
		}
		err := p.finish()
		p.dir.Close()
		return err
	}
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	if err != nil && out != nil {
		return fmt.Errorf("sink %q: closing %s: %w", s.op, s.path, unwrapPath(err))
	}
	return nil
}

// SnapshotState pre-commits the part being written for checkpoint id
// (runtime.Snapshotter).
func (s *fileSink) SnapshotState(id checkpoint.ID) (checkpoint.SubtaskState, error) {
	if s.parts == nil {
		return checkpoint.SubtaskState{}, nil
	}
	return s.parts.snapshot(id)
}

// RestoreState commits what the checkpoint pre-committed and removes the
// parts written after it.
func (s *fileSink) RestoreState(r checkpoint.Restore) error {
	if s.parts == nil {
		return nil
	}
	return s.parts.restore(r)
}

// NotifyCheckpointComplete commits the parts of checkpoints up to id
// (runtime.CheckpointListener).
func (s *fileSink) NotifyCheckpointComplete(id checkpoint.ID) error {
	if s.parts == nil {
		return nil
	}
	return s.parts.commit(id)
}

// NotifyCheckpointAborted keeps what was pre-committed: the next completed
// checkpoint commits it.
func (s *fileSink) NotifyCheckpointAborted(checkpoint.ID) {}
