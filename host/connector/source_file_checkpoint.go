package connector

import (
	"fmt"
	"io"

	"github.com/sluicehq/sluice/host/checkpoint"
)

// The file source's checkpointed position. Every subtask reads the whole
// file and keeps the records i with i % parallelism == subtask, so its
// position is where it stopped reading: the byte offset after the last
// line it read, that line's number and the number of records (of every
// subtask) before the offset. It goes into the union state, so that every
// subtask of a restored job sees every old subtask's position: record k
// was emitted before the checkpoint when k < Index of old subtask
// k % old parallelism. A restored subtask starts at the smallest position
// (JSON lines: it seeks there; CSV: it reads the header and skips the
// records before it) and emits its own records that none emitted, so a
// restore at another parallelism loses and repeats nothing either.

// position is where a subtask stopped reading.
type position struct {
	Offset int64 // bytes of the file read
	Line   int   // the last line read, 1-based (JSON lines; 0 for CSV)
	Index  int64 // records before Offset, of every subtask, bad lines included
}

// resume is a restored subtask's starting point.
type resume struct {
	start   position
	indexes []int64 // per old subtask: the records before its position
}

// mine says whether record index is this subtask's to emit.
func (l *lineReader) mine(index int64) bool {
	if index%int64(l.parallelism) != int64(l.subtask) {
		return false
	}
	if r := l.resume; r != nil && index < r.indexes[index%int64(len(r.indexes))] {
		return false // emitted before the checkpoint
	}
	return true
}

// appendPosition encodes a subtask's position: a version byte, then
// uvarints subtask, parallelism, offset, line and index.
func appendPosition(b []byte, subtask, parallelism int, p position) []byte {
	return appendUvarints(b, uint64(subtask), uint64(parallelism), uint64(p.Offset), uint64(p.Line), uint64(p.Index))
}

func readPosition(b []byte) (subtask, parallelism int, p position, err error) {
	v, err := readUvarints(b, 5)
	if err != nil {
		return 0, 0, p, err
	}
	if v[1] == 0 || v[0] >= v[1] || v[1] > 1<<15 {
		return 0, 0, p, fmt.Errorf("subtask %d of parallelism %d is out of range", v[0], v[1])
	}
	return int(v[0]), int(v[1]), position{Offset: int64(v[2]), Line: int(v[3]), Index: int64(v[4])}, nil
}

// SnapshotState returns the position after every record emitted so far,
// as a union element (runtime.CheckpointedSource).
func (s *fileSource) SnapshotState(checkpoint.ID) (split, union [][]byte, err error) {
	return nil, [][]byte{appendPosition(nil, s.subtask, s.parallelism, s.emitted)}, nil
}

// RestoreState takes the positions of every old subtask (after Open,
// before Run).
func (s *fileSource) RestoreState(r checkpoint.Restore) error {
	if len(r.Union) == 0 {
		return nil // the source had no position: it starts over
	}
	var (
		oldP    int
		indexes []int64
		start   position
		seen    []bool
	)
	for i, b := range r.Union {
		sub, par, p, err := readPosition(b)
		if err != nil {
			return fmt.Errorf("source %q: restoring the position of %s: element %d: %w", s.op, s.path, i, err)
		}
		if oldP == 0 {
			oldP, indexes, seen = par, make([]int64, par), make([]bool, par)
		}
		if par != oldP || seen[sub] {
			return fmt.Errorf("source %q: restoring the position of %s: the positions are of different jobs (parallelism %d and %d, or subtask %d twice)", s.op, s.path, oldP, par, sub)
		}
		seen[sub], indexes[sub] = true, p.Index
		if i == 0 || p.Index < start.Index {
			start = p
		}
	}
	for sub, ok := range seen {
		if !ok {
			return fmt.Errorf("source %q: restoring the position of %s: subtask %d of %d has none", s.op, s.path, sub, oldP)
		}
	}
	if s.total >= 0 && s.size < start.Offset {
		return fmt.Errorf("source %q: cannot restore: %s has %d bytes, but the checkpoint read %d of it: the file changed", s.op, s.path, s.size, start.Offset)
	}
	s.resume = &resume{start: start, indexes: indexes}
	return nil
}

// seekResume moves the file to where a restored subtask starts: JSON
// lines at the smallest position; CSV at the start (the header is needed,
// and mine skips what was emitted).
func (s *fileSource) seekResume() error {
	if s.resume == nil || s.csv {
		return nil
	}
	if _, err := s.f.Seek(s.resume.start.Offset, io.SeekStart); err != nil {
		return fmt.Errorf("source %q: seeking %s to the checkpointed position: %w", s.op, s.path, unwrapPath(err))
	}
	s.at = s.resume.start
	return nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
