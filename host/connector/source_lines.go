package connector

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/runtime"
)

// This file reads records from text, for the file and stdin sources:
// JSON lines (one JSON value per line; blank lines are skipped) or CSV
// (a header row names the fields; numbers become ints or floats, anything
// else a string, and so does a number whose text the number would not
// keep: see appendCSVValue). Record i (0-based, blank lines and the CSV
// header not counted) belongs to subtask i % parallelism.

// maxLine is the longest JSON line a source accepts.
const maxLine = 16 << 20

// RecordError is a line a source could not read. Err says what is wrong.
type RecordError struct {
	Operator string
	Subtask  int
	Input    string // the file's path, or "stdin"
	Line     int    // 1-based
	Raw      []byte // the line (a CSV record: its lines) as read, without the line ending, for a dead-letter output
	Err      error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("source %q: %s:%d: %v", e.Operator, e.Input, e.Line, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// lineReader turns text into batches of records for one subtask.
type lineReader struct {
	op          string
	input       string // for errors
	csv         bool
	null        string // with hasNull: the CSV cell text read as nil
	hasNull     bool
	subtask     int
	parallelism int
	onError     string                             // the operator's on-error
	badRecord   func(*RecordError) error           // Builtin.BadRecord
	reject      func(*runtime.RecordFailure) error // the engine's on-error
	// live (stdin) hands a batch on before a read that may block: a
	// file's reads never block, and its batches stay full
	live    bool
	skipped atomic.Int64
	w       abi.Writer

	// checkpointing (source_file_checkpoint.go): at is the position after
	// the latest line read, emitted the position after the records handed
	// on; resume, after a restore, says where to start and which records
	// were emitted before it.
	at, emitted position
	resume      *resume
}

// Skipped is how many bad lines were skipped.
func (l *lineReader) Skipped() int64 { return l.skipped.Load() }

// bad applies the error policy to a bad line: nil means skip it.
func (l *lineReader) bad(line int, raw []byte, err error) error {
	re := &RecordError{Operator: l.op, Subtask: l.subtask, Input: l.input, Line: line, Err: err}
	if raw != nil {
		re.Raw = append([]byte(nil), raw...)
	}
	var verdict error = re
	switch {
	case l.badRecord != nil:
		verdict = l.badRecord(re)
	case l.reject != nil:
		verdict = l.reject(&runtime.RecordFailure{Raw: re.Raw, Input: re.Input, Line: line, Err: re, Cause: err.Error()})
	case l.onError == "skip":
		verdict = nil
	}
	if verdict == nil {
		l.skipped.Add(1)
	}
	return verdict
}

// flush hands the batch downstream when it is full, or when force is set
// and it is not empty. Once ctx is cancelled it still hands on what was
// read (best effort: downstream may refuse it), then returns ctx.Err().
func (l *lineReader) flush(ctx context.Context, out runtime.Collector, force bool) error {
	if l.w.Count == 0 || !force && l.w.Count < maxBatchRecords && len(l.w.Buf) < maxBatchBytes {
		return nil
	}
	l.emitted = l.at // a snapshot inside Emit is taken after the batch went out
	err := out.Emit(0, l.w.Buf, l.w.Count)
	l.w.Reset()
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// idle hands a live reader's partial batch on when br holds no complete
// line, so that the next read may wait for input: records typed or piped
// in one at a time (tail -f) flow on at once, while bulk input, which
// keeps br full, still fills batches.
func (l *lineReader) idle(ctx context.Context, out runtime.Collector, br *bufio.Reader) error {
	if !l.live || l.w.Count == 0 {
		return nil
	}
	if n := br.Buffered(); n > 0 {
		if p, _ := br.Peek(n); bytes.IndexByte(p, '\n') >= 0 {
			return nil
		}
	}
	return l.flush(ctx, out, true)
}

func (l *lineReader) run(ctx context.Context, r io.Reader, out runtime.Collector) error {
	l.w.Reset()
	if l.parallelism < 1 {
		l.parallelism = 1
	}
	var err error
	if l.csv {
		err = l.runCSV(ctx, r, out)
	} else {
		err = l.runJSON(ctx, r, out)
	}
	if err != nil {
		// what was read before the problem (or the cancel) still goes
		// downstream
		if ferr := l.flush(ctx, out, true); ferr != nil && ctx.Err() == nil {
			return ferr
		}
		return err
	}
	if err := l.flush(ctx, out, true); err != nil {
		return err
	}
	l.emitted = l.at // the end of the input: nothing is left to read
	return nil
}

func (l *lineReader) runJSON(ctx context.Context, r io.Reader, out runtime.Collector) error {
	start := l.at // where r starts: the beginning, or a restored position
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	offset := func() int64 { return start.Offset + cr.n - int64(br.Buffered()) }
	var long []byte // a line longer than br's buffer
	index := start.Index
lines:
	for line := start.Line + 1; ; line++ {
		if err := l.idle(ctx, out, br); err != nil {
			return err
		}
		b, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) && len(long) <= maxLine {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			if len(long) > maxLine {
				// a bad record like any other: the rest of the line is read
				// and dropped, so that skip and dead-letter go on after it
				for errors.Is(err, bufio.ErrBufferFull) {
					_, err = br.ReadSlice('\n')
				}
				if err != nil && err != io.EOF {
					return fmt.Errorf("source %q: reading %s: %w", l.op, l.input, err)
				}
				l.at = position{Offset: offset(), Line: line, Index: index + 1}
				if l.mine(index) {
					if v := l.bad(line, long[:1024], fmt.Errorf("line longer than %d MiB (its first KiB is kept)", maxLine>>20)); v != nil {
						return v
					}
				}
				index, long = index+1, nil
				if err == io.EOF {
					return nil
				}
				continue lines
			}
			b = long
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("source %q: reading %s: %w", l.op, l.input, err)
		}
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff")) // a byte order mark
		}
		text := bytes.TrimSpace(b)
		l.at = position{Offset: offset(), Line: line, Index: index}
		if len(text) > 0 {
			l.at.Index++
			if l.mine(index) {
				if e := l.appendJSON(text); e != nil {
					if v := l.bad(line, text, e); v != nil {
						return v
					}
				}
				if e := l.flush(ctx, out, false); e != nil {
					return e
				}
			}
			index++
		}
		if err == io.EOF {
			return nil
		}
	}
}

// appendJSON appends one record holding the JSON value text.
func (l *lineReader) appendJSON(text []byte) error {
	start := len(l.w.Buf)
	b, err := codec.JSONToMsgpack(appendNoTimeNoKey(l.w.Buf), text)
	if err != nil {
		l.w.Buf = l.w.Buf[:start]
		return fmt.Errorf("malformed JSON: %w", err)
	}
	l.w.Buf = b
	l.w.Count++
	return nil
}

func (l *lineReader) runCSV(ctx context.Context, r io.Reader, out runtime.Collector) error {
	kept := &keptInput{r: r}
	br := bufio.NewReaderSize(kept, 64<<10)
	cr := csv.NewReader(br) // reads br itself: it is a bufio.Reader already
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return l.csvError(err, 1)
	}
	header[0] = strings.TrimPrefix(header[0], "\ufeff") // a byte order mark
	if head := csvRecordText(kept.text(0, cr.InputOffset())); !utf8.Valid(head) {
		return &RecordError{Operator: l.op, Subtask: l.subtask, Input: l.input, Line: 1, Raw: head,
			Err: fmt.Errorf("invalid UTF-8 at byte %d of the header", codec.InvalidUTF8(head)+1)}
	}
	names := make([][]byte, len(header))
	seen := map[string]bool{}
	for i, h := range header {
		if seen[h] {
			return &RecordError{Operator: l.op, Subtask: l.subtask, Input: l.input, Line: 1,
				Err: fmt.Errorf("column %q appears twice in the header", h)}
		}
		seen[h] = true
		names[i] = abi.AppendStr(nil, h)
	}
	for index := 0; ; index++ {
		if err := l.idle(ctx, out, br); err != nil {
			return err
		}
		start := cr.InputOffset()
		kept.drop(start)
		fields, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		var pe *csv.ParseError
		if err != nil && !errors.As(err, &pe) {
			return fmt.Errorf("source %q: reading %s: %w", l.op, l.input, err)
		}
		l.at = position{Offset: cr.InputOffset(), Index: int64(index) + 1}
		if !l.mine(int64(index)) {
			continue // another subtask's record (or one emitted before a restore), and its problem
		}
		text := csvRecordText(kept.text(start, cr.InputOffset()))
		if err != nil {
			line, cause := csvProblem(pe)
			if v := l.bad(line, text, cause); v != nil {
				return v
			}
			continue
		}
		if !utf8.Valid(text) {
			// as for JSON lines: a bad byte is an error, not U+FFFD
			line, _ := cr.FieldPos(0)
			if v := l.bad(line, text, fmt.Errorf("invalid UTF-8 at byte %d", codec.InvalidUTF8(text)+1)); v != nil {
				return v
			}
			continue
		}
		b := abi.AppendMapHeader(appendNoTimeNoKey(l.w.Buf), len(names))
		for i, f := range fields {
			if b = append(b, names[i]...); l.hasNull && f == l.null {
				b = abi.AppendNil(b)
			} else {
				b = appendCSVValue(b, f)
			}
		}
		l.w.Buf = b
		l.w.Count++
		if err := l.flush(ctx, out, false); err != nil {
			return err
		}
	}
}

// keptInput keeps what was read from r since the offset last dropped, so
// that a bad CSV record's text (csv.Reader.InputOffset before and after
// it) can go into its dead letter: csv.Reader gives only its fields.
type keptInput struct {
	r    io.Reader
	buf  []byte
	base int64 // the input offset of buf[0]
}

func (k *keptInput) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	k.buf = append(k.buf, p[:n]...)
	return n, err
}

// drop forgets the input before offset off, moving what is kept only
// once there is at least as much to forget (amortised O(1) a byte).
func (k *keptInput) drop(off int64) {
	if n := int(off - k.base); n > 0 && n >= len(k.buf)-n {
		k.buf = k.buf[:copy(k.buf, k.buf[n:])]
		k.base = off
	}
}

// text is the input between offsets from and to (not dropped yet).
func (k *keptInput) text(from, to int64) []byte {
	return k.buf[from-k.base : to-k.base]
}

// csvRecordText is a record's text as csv.Reader read it: without the
// blank lines it skipped before it and without its line ending.
func csvRecordText(b []byte) []byte {
	for {
		if len(b) > 0 && b[0] == '\n' {
			b = b[1:]
		} else if len(b) > 1 && b[0] == '\r' && b[1] == '\n' {
			b = b[2:]
		} else {
			break
		}
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

func (l *lineReader) csvError(err error, line int) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		line, err = csvProblem(pe)
	}
	return &RecordError{Operator: l.op, Subtask: l.subtask, Input: l.input, Line: line, Err: err}
}

// csvProblem is where a CSV parse error is and what it is: a quoted field
// left open is found only where the input ends (or a later quote), but it
// is the line that opened it that is wrong, and every line up to the
// other is inside the field.
func csvProblem(pe *csv.ParseError) (int, error) {
	if errors.Is(pe.Err, csv.ErrQuote) && pe.StartLine > 0 && pe.StartLine < pe.Line {
		return pe.StartLine, fmt.Errorf("a quoted field that opens on this line is still open at line %d (the lines between are in it): %w", pe.Line, pe.Err)
	}
	return pe.Line, pe.Err
}

// appendCSVValue appends a CSV field: an int when it is a decimal
// integer that fits an int64, a float when it is a decimal number, else a
// string. A field whose text reading it as a number would lose stays a
// string (numberKind): an identifier such as the zip code 01234, the
// account 007, the phone number +4412345 or a 20-digit card number is not
// a quantity, and 7 or 1.2345678901234567e19 cannot be turned back into it.
func appendCSVValue(b []byte, f string) []byte {
	switch numberKind(f) {
	case 'i':
		if v, err := strconv.ParseInt(f, 10, 64); err == nil {
			return abi.AppendInt(b, v)
		}
		// beyond int64: a float would round it, so it stays a string
	case 'f':
		if v, err := strconv.ParseFloat(f, 64); err == nil {
			return abi.AppendFloat(b, v)
		}
	}
	return abi.AppendStr(b, f)
}

// numberKind is 'i' for -?digits, 'f' for a decimal number with a
// fraction or an exponent, 0 for anything else: inf and nan, a leading
// "+", and a leading zero before another digit ("007", "-01", "00.5"; "0",
// "0.5" and "-0.5" are numbers).
func numberKind(s string) byte {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i+1 < len(s) && s[i] == '0' && s[i+1] >= '0' && s[i+1] <= '9' {
		return 0
	}
	d := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d++
	}
	kind := byte('i')
	if i < len(s) && s[i] == '.' {
		kind = 'f'
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			d++
		}
	}
	if d == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		kind = 'f'
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		e := i
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
		if i == e {
			return 0
		}
	}
	if i != len(s) {
		return 0
	}
	return kind
}

// countRecords counts the records in r the way the readers above see
// them: non-blank lines for JSON; for CSV, non-empty lines outside quotes,
// less the header.
func countRecords(r io.Reader, isCSV bool) (uint64, error) {
	buf := make([]byte, 64<<10)
	var n uint64
	content, quoted := false, false
	for {
		m, err := r.Read(buf)
		for _, c := range buf[:m] {
			switch c {
			case '\n':
				if !quoted {
					if content {
						n++
					}
					content = false
				}
			case '\r':
			case ' ', '\t':
				content = content || isCSV
			case '"':
				quoted = isCSV && !quoted
				content = true
			default:
				content = true
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if content {
		n++
	}
	if isCSV && n > 0 {
		n-- // the header
	}
	return n, nil
}
