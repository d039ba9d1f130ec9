package connector

import (
	"fmt"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
)

// csvColumns writes records (msgpack maps) as CSV rows. The first record's
// keys name the columns and make the header row. A later record may give
// its fields in any order and leave some out (empty cells, or the null
// literal when the sink has one), but a field
// not in the header is an error: dropping it would lose data.
type csvColumns struct {
	null    []byte // with hasNull: what a nil or missing value writes
	hasNull bool
	names   []string
	index   map[string]int
	cells   [][]byte // raw msgpack of the current row's values
}

func (c *csvColumns) appendRow(b, value []byte) ([]byte, error) {
	if abi.TypeOf(value) != abi.TypeMap {
		return b, fmt.Errorf("CSV needs records that are maps, got %s", abi.TypeOf(value))
	}
	n, off, err := abi.Len(value)
	if err != nil {
		return b, err
	}
	if c.names == nil {
		if b, err = c.header(b, value, n, off); err != nil {
			return b, err
		}
	}
	clear(c.cells)
	for i := 0; i < n; i++ {
		kEnd, err := abi.Skip(value, off)
		if err != nil {
			return b, err
		}
		k, err := abi.ReadStr(value[off:kEnd])
		if err != nil {
			return b, fmt.Errorf("CSV needs string keys: %w", err)
		}
		vEnd, err := abi.Skip(value, kEnd)
		if err != nil {
			return b, err
		}
		col, ok := c.index[string(k)]
		if !ok {
			return b, fmt.Errorf("field %q is not a column of the CSV header (%d columns, from the first record)", k, len(c.names))
		}
		c.cells[col] = value[kEnd:vEnd]
		off = vEnd
	}
	row := len(b)
	for i, cell := range c.cells {
		if i > 0 {
			b = append(b, ',')
		}
		if c.hasNull && (cell == nil || abi.TypeOf(cell) == abi.TypeNil) {
			b = appendCSVText(b, c.null)
			continue
		}
		if b, err = appendCSVCell(b, cell); err != nil {
			return b, fmt.Errorf("field %q: %w", c.names[i], err)
		}
	}
	if len(b) == row {
		// one column and an empty cell: a blank line is no record to a
		// reader, so it is written quoted (as encoding/csv writes it)
		b = append(b, `""`...)
	}
	return append(b, '\n'), nil
}

// header takes the columns from the first record and writes the header.
func (c *csvColumns) header(b, value []byte, n, off int) ([]byte, error) {
	if n == 0 {
		// no columns: every row would be a blank line, which a reader
		// skips, and the next record would write the header again
		return b, fmt.Errorf("CSV needs a first record with fields: it names the columns, and {} names none")
	}
	c.index = make(map[string]int, n)
	for i := 0; i < n; i++ {
		kEnd, err := abi.Skip(value, off)
		if err != nil {
			return b, err
		}
		k, err := abi.ReadStr(value[off:kEnd])
		if err != nil {
			return b, fmt.Errorf("CSV needs string keys: %w", err)
		}
		if off, err = abi.Skip(value, kEnd); err != nil {
			return b, err
		}
		if _, dup := c.index[string(k)]; !dup {
			c.index[string(k)] = len(c.names)
			c.names = append(c.names, string(k))
		}
	}
	c.cells = make([][]byte, len(c.names))
	return c.appendHeader(b), nil
}

// appendHeader writes the header row of the columns (again, at the start
// of each part file of a checkpointed file sink).
func (c *csvColumns) appendHeader(b []byte) []byte {
	for i, name := range c.names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCSVText(b, []byte(name))
	}
	if len(c.names) == 1 && c.names[0] == "" {
		b = append(b, `""`...) // a blank line is no header to a reader
	}
	return append(b, '\n')
}

// appendCSVCell writes one value: a string as it is, nil (or a column
// the record left out) as an empty cell, a NaN or infinite float as Java
// writes it (NaN, Infinity, -Infinity), anything else as its JSON text,
// so numbers read back with their type (a whole float keeps ".0") and maps
// and arrays stay readable.
func appendCSVCell(b, v []byte) ([]byte, error) {
	switch abi.TypeOf(v) {
	case abi.TypeInvalid, abi.TypeNil:
		return b, nil
	case abi.TypeStr:
		s, err := abi.ReadStr(v)
		return appendCSVText(b, s), err
	case abi.TypeFloat:
		if f, err := abi.ReadFloat(v); err == nil && codec.NonFinite(f) != "" {
			return append(b, codec.NonFinite(f)...), nil
		}
	}
	start := len(b)
	b, err := codec.MsgpackToJSON(b, v)
	if err != nil {
		return b[:start], err
	}
	if needsQuotes(b[start:]) {
		j := append([]byte(nil), b[start:]...)
		return appendCSVText(b[:start], j), nil
	}
	return b, nil
}

// appendCSVText writes a field, quoted when it holds a comma, a quote, a
// line break or leading space (RFC 4180, as encoding/csv writes it).
func appendCSVText(b, s []byte) []byte {
	if !needsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for _, c := range s {
		if c == '"' {
			b = append(b, '"')
		}
		b = append(b, c)
	}
	return append(b, '"')
}

func needsQuotes(s []byte) bool {
	if len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		return true
	}
	for _, c := range s {
		if c == ',' || c == '"' || c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}
