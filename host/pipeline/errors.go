package pipeline

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in a pipeline file, at a position.
type Error struct {
	File string // the file as the user named it; "" for bytes
	Pos  Pos    // zero when the problem has no place in the file
	Msg  string
}

// Error formats the problem as file:line:col: message, the form editors
// and CI annotations understand.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteByte(':')
	}
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, "%d:%d:", e.Pos.Line, e.Pos.Col)
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in a pipeline, sorted by position. As an
// error it prints one problem per line.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Sort orders the problems by file, then position (line, then column),
// keeping the order of problems found at the same place.
func (es Errors) Sort() {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		return a.Pos.Col < b.Pos.Col
	})
}

// Err returns nil when there is no problem, else the sorted problems.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	es.Sort()
	return es
}

// errorf records a problem at p.
func (es *Errors) errorf(file string, p Pos, format string, args ...any) {
	*es = append(*es, &Error{File: file, Pos: p, Msg: fmt.Sprintf(format, args...)})
}
