package connector

import (
	"fmt"
	"strconv"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

func init() {
	registerSink(spec.Print, func(b *Builtin, o *options, _ *pipeline.Operator, subtask, parallelism int) (runtime.Operator, error) {
		return newPrintSink(o, b, subtask, parallelism)
	})
}

// printSink writes each record's value as compact JSON, keys in record
// order, one line per record, on Builtin.Stdout, after Flink's prefix
// (option prefix): "prefix:N> " when parallelism > 1 (N = subtask+1),
// "prefix> " at parallelism 1, "N> " with no prefix at parallelism > 1,
// nothing with neither. Subtasks share Stdout: each formats a batch on its
// own, then writes whole lines under Builtin's lock, at least once per
// batch.
type printSink struct {
	op     string
	b      *Builtin
	prefix []byte
	buf    []byte
	n      int64 // records written
}

func newPrintSink(o *options, b *Builtin, subtask, parallelism int) (*printSink, error) {
	prefix := o.specString("prefix")
	if err := o.finish(); err != nil {
		return nil, err
	}
	return &printSink{op: o.op, b: b, prefix: []byte(printPrefix(prefix, subtask, parallelism))}, nil
}

// printPrefix is Flink's PrintSinkOutputWriter prefix.
func printPrefix(prefix string, subtask, parallelism int) string {
	switch {
	case parallelism > 1 && prefix != "":
		return prefix + ":" + strconv.Itoa(subtask+1) + "> "
	case parallelism > 1:
		return strconv.Itoa(subtask+1) + "> "
	case prefix != "":
		return prefix + "> "
	}
	return ""
}

func (s *printSink) Open(*runtime.OpenContext) error { return nil }

// Process prints count records. On a record it cannot print, the lines
// before it are still written.
func (s *printSink) Process(_ int, batch []byte, count int, _ runtime.Collector) error {
	s.buf = s.buf[:0]
	rd := abi.NewReader(batch, count)
	for rd.Next() {
		line := len(s.buf)
		b, err := codec.MsgpackToJSON(append(s.buf, s.prefix...), rd.Record().Value)
		if err != nil {
			s.buf = s.buf[:line]
			return s.fail(fmt.Errorf("sink %q: record %d: cannot print it as JSON: %w", s.op, s.n+1, err))
		}
		s.buf = append(b, '\n')
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

// fail writes the lines formatted before a bad record, then reports it.
func (s *printSink) fail(err error) error {
	if werr := s.write(); werr != nil {
		return werr
	}
	return err
}

func (s *printSink) write() error {
	if len(s.buf) == 0 {
		return nil
	}
	err := s.b.writeLines(s.buf)
	s.buf = s.buf[:0]
	if err != nil {
		return fmt.Errorf("sink %q: writing to stdout: %w", s.op, err)
	}
	return nil
}

func (s *printSink) Close(runtime.Collector) error { return nil }
