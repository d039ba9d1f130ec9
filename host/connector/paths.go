package connector

import (
	"fmt"

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
