package connector

import (
	"context"
	"io"
	"time"

	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

func init() {
	registerSource(spec.Stdin, func(b *Builtin, o *options, op *pipeline.Operator, _, parallelism int) (runtime.Source, error) {
		return newStdinSource(o, b, op.OnError, parallelism)
	})
}

// stdinSource reads JSON lines or CSV from the host's standard input (or
// Builtin.Stdin): options format (json, the default, or csv) and, for csv,
// null-literal. Parallelism
// must be 1, and only one source may read stdin. It ends at end of input
// (spec.EndsWithInput: the planner streams it unless the job asks for
// batch).
type stdinSource struct {
	lineReader
	r   io.Reader
	ctx *runtime.OpenContext
}

func newStdinSource(o *options, b *Builtin, onError string, parallelism int) (*stdinSource, error) {
	format := o.specEnum("format", "")
	null, hasNull := o.nullLiteral(format)
	if err := o.finish(); err != nil {
		return nil, err
	}
	if parallelism != 1 {
		return nil, o.errorf("parallelism must be 1: standard input cannot be split (got %d)", parallelism)
	}
	if err := b.claimStdin(o.op); err != nil {
		return nil, err
	}
	s := &stdinSource{r: b.stdin()}
	s.lineReader = lineReader{op: o.op, input: "stdin", csv: format == "csv", null: null, hasNull: hasNull, parallelism: 1,
		onError: onError, badRecord: b.BadRecord, live: true}
	return s, nil
}

func (s *stdinSource) Open(ctx *runtime.OpenContext) error {
	if ctx != nil {
		s.reject = ctx.Reject
	}
	s.ctx = ctx
	return nil
}
func (s *stdinSource) Total() int64 { return -1 }
func (s *stdinSource) Close() error { return nil }

// Run reads until end of input. A read from a terminal cannot be
// interrupted, so reading happens in a goroutine behind a pipe that a
// cancelled ctx closes: Run returns at once (handing on the records it
// had read), and the goroutine ends at the next line or end of input.
// Records go downstream as soon as no more input is waiting (see
// lineReader.idle), not when a batch is full.
func (s *stdinSource) Run(ctx context.Context, out runtime.Collector) error {
	pr, pw := io.Pipe()
	go func() {
		// reads as large as the line reader's buffer (io.Copy's are 32
		// KiB), so that bulk input fills batches; struct{io.Reader}
		// hides a WriterTo, which would choose its own size
		_, err := io.CopyBuffer(pw, struct{ io.Reader }{s.r}, make([]byte, 64<<10))
		pw.CloseWithError(err)
	}()
	stop := context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
	defer stop()
	defer pr.Close()
	err := s.run(ctx, waitingReader{pr, s.ctx}, out)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// waitingReader counts the time a read of stdin blocks as the source's
// idle time: it is waiting for input, as a Flink source with no data is
// idle, not busy.
type waitingReader struct {
	r   io.Reader
	ctx *runtime.OpenContext
}

func (w waitingReader) Read(p []byte) (int, error) {
	start := time.Now()
	n, err := w.r.Read(p)
	w.ctx.AddIdle(time.Since(start))
	return n, err
}
