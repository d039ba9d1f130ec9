package connector

import (
	"fmt"
	"os"

	connspec "github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/roots"
)

// CheckPaths reports each file source and sink of p whose path lies
// outside b.Roots, lexically, as their Open refuses it: what lint says
// without touching the files (which need not exist yet). A sink of
// parallelism above 1 writes one file per subtask beside its path, in the
// same folder, so its path decides. Nil Roots confine nothing.
func (b *Builtin) CheckPaths(p *pipeline.Pipeline) error {
	if b.Roots == nil {
		return nil
	}
	var errs pipeline.Errors
	for _, op := range p.Operators {
		for _, c := range []struct {
			what string
			conn *pipeline.Connector
		}{{"source", op.Source}, {"sink", op.Sink}} {
			if c.conn == nil || c.conn.Type != "file" {
				continue
			}
			given, ok := c.conn.Options["path"].(string)
			if !ok || given == "" {
				continue // the connector's own checks say so
			}
			if _, _, err := roots.Resolve(b.Roots, b.path(given)); err != nil {
				pos := c.conn.Pos
				if pos.Line == 0 {
					pos = op.Pos
				}
				errs = append(errs, &pipeline.Error{File: p.File, Pos: pos,
					Msg: fmt.Sprintf("%s %q: %v", c.what, op.ID, asWritten(err, given, b.RootsSetting))})
			}
		}
	}
	return errs.Err()
}

// CheckSameFiles reports each file sink that would write a file a file
// source of p reads under another name (a symbolic or hard link): the
// sink's Open would truncate the input before the source read it, and the
// pipeline's own check (pipeline.Parse) compares paths, not files. It
// looks at the files that exist now, so run calls it before the job
// starts, and lint too.
func (b *Builtin) CheckSameFiles(p *pipeline.Pipeline) error {
	stat := func(path string) (os.FileInfo, error) {
		if b.Roots == nil {
			return os.Stat(path)
		}
		return roots.Stat(b.Roots, path)
	}
	type read struct {
		op   *pipeline.Operator
		path string
		info os.FileInfo
	}
	var sources []read
	for _, op := range p.Operators {
		if path := filePath(op.Source); path != "" {
			if fi, err := stat(b.path(path)); err == nil && fi.Mode().IsRegular() {
				sources = append(sources, read{op, path, fi})
			}
		}
	}
	var errs pipeline.Errors
	for _, op := range p.Operators {
		path := filePath(op.Sink)
		if path == "" || len(sources) == 0 {
			continue
		}
		names := []string{path}
		if par := p.ParallelismOf(op); par > 1 {
			names = names[:0]
			for i := 0; i < par; i++ {
				names = append(names, connspec.SubtaskFile(path, i))
			}
		}
		reported := map[*pipeline.Operator]bool{}
		for _, name := range names {
			fi, err := stat(b.path(name))
			if err != nil {
				continue // it does not exist yet: no source reads it
			}
			for _, src := range sources {
				if !reported[src.op] && os.SameFile(fi, src.info) {
					reported[src.op] = true
					errs = append(errs, &pipeline.Error{File: p.File, Pos: op.Sink.Pos, Msg: fmt.Sprintf(
						"sink %q writes %s, which is the file source %q (line %d) reads as %s (a link to it): the sink would truncate its input",
						op.ID, name, src.op.ID, src.op.Pos.Line, src.path)})
				}
			}
		}
	}
	return errs.Err()
}

// filePath is the path option of a file connector, "" for none.
func filePath(c *pipeline.Connector) string {
	if c == nil || c.Type != "file" {
		return ""
	}
	path, _ := c.Options["path"].(string)
	return path
}
