package plugin

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluicehq/sluice/abi"
)

// Causes of a failed call, for errors.Is on a *PluginError.
var (
	// ErrTrap: the guest trapped (unreachable, out-of-bounds access,
	// stack overflow, a Go panic that escaped the SDK...).
	ErrTrap = errors.New("wasm trap")
	// ErrDeadline: the call ran past Config.CallTimeout and was stopped.
	ErrDeadline = errors.New("deadline exceeded")
	// ErrCanceled: the caller's context was canceled during the call.
	ErrCanceled = errors.New("canceled")
	// ErrExit: the guest called WASI proc_exit.
	ErrExit = errors.New("plugin exited")
	// ErrMemoryLimit: the guest's memory reached Config.MemoryLimitPages.
	ErrMemoryLimit = errors.New("memory limit")
	// ErrABI: the guest broke ABI v1 in a host call (out-of-bounds range,
	// unknown port, bad tag, wrong output count).
	ErrABI = errors.New("ABI violation")
	// ErrOutputLimit: the call emitted more than Config.MaxOutputBytes.
	ErrOutputLimit = errors.New("output limit")
	// ErrMalformedOutput: the guest emitted bytes that are not what it
	// declared (count envelopes, values or channel indices).
	ErrMalformedOutput = errors.New("malformed output")
	// ErrState: keyed state was misused or its store failed.
	ErrState = errors.New("keyed state")
	// ErrStatus: the guest returned a non-zero status.
	ErrStatus = errors.New("plugin returned status")
	// ErrRestartLimit: records poisoned the operator's instances more
	// often than Config.RestartAttempts allows within RestartWindow.
	ErrRestartLimit = errors.New("restart limit reached")
)

// PluginError is the error of a call into a plugin instance. It reads
//
//	plugin "valid" (operator valid, subtask 2/4) export sluice_process: wasm trap: unreachable; stderr tail: "..."
//
// Subtask is 0-based; the text shows it 1-based out of Parallelism, as
// Flink names subtasks.
type PluginError struct {
	Plugin      string
	Operator    string // operator id; empty for an edge plugin
	Edge        string // "from->to" for a partitioner or key selector
	Subtask     int
	Parallelism int
	Export      string // the guest export that was called
	// Record names the input record the failure was narrowed down to,
	// e.g. `input record 37 (key "k")`; empty when it was not.
	Record string
	// Value is that record's value as compact JSON, cut for a message
	// (runtime.Preview); empty when no record was named.
	Value  string
	Cause  error // wraps one of the Err* values above
	Status abi.Status
	Text   string // the guest's error text (error host call)
	Stderr string // the tail of the guest's stderr
	// Crash is the start of a crash report the guest's runtime wrote to
	// stderr during the call (a Go guest's "fatal error: out of memory"),
	// which its bulk pushed out of Stderr.
	Crash string
	// Poisoned reports that the instance was discarded: the next call
	// runs on a fresh instance.
	Poisoned bool
}

func (e *PluginError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin %q", e.Plugin)
	var where []string
	switch {
	case e.Operator != "":
		where = append(where, "operator "+e.Operator)
	case e.Edge != "":
		where = append(where, "edge "+e.Edge)
	}
	if e.Parallelism > 0 {
		where = append(where, fmt.Sprintf("subtask %d/%d", e.Subtask+1, e.Parallelism))
	}
	if len(where) > 0 {
		b.WriteString(" (" + strings.Join(where, ", ") + ")")
	}
	if e.Export != "" {
		b.WriteString(" export " + e.Export)
	}
	if e.Record != "" {
		b.WriteString(" at " + e.Record)
	}
	b.WriteString(": ")
	b.WriteString(e.Cause.Error())
	if e.Value != "" {
		b.WriteString("; the record: ")
		b.WriteString(printable(e.Value))
	}
	switch {
	case e.Crash != "":
		b.WriteString("; the guest runtime reported: ")
		b.WriteString(strconv.Quote(e.Crash))
	case e.Stderr != "":
		b.WriteString("; stderr tail: ")
		b.WriteString(strconv.Quote(lastLines(e.Stderr, maxQuotedStderr)))
	}
	return b.String()
}

// maxQuotedStderr is how much of the stderr tail an error's text quotes;
// PluginError.Stderr and Operator.Output keep the whole tail.
const maxQuotedStderr = 512

// lastLines is the end of s, at most max bytes, from the start of a line
// when one starts within them.
func lastLines(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[len(s)-max:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i+1 < len(s) {
		s = s[i+1:]
	}
	return s
}

func (e *PluginError) Unwrap() error { return e.Cause }

// RecordIndex reads the SDKs' "record N: " prefix of the guest's error
// text: the 0-based index, within the call, of the input record the error
// is about. It returns N and a copy of e without the prefix (the caller
// names the record its own way: a position, a line), or ok false when the
// text has no such prefix or the error is not a status the guest returned.
func (e *PluginError) RecordIndex() (n int, stripped *PluginError, ok bool) {
	rest, found := strings.CutPrefix(e.Text, "record ")
	digits, text, found2 := strings.Cut(rest, ": ")
	if !found || !found2 || !errors.Is(e.Cause, ErrStatus) {
		return 0, nil, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || strconv.Itoa(n) != digits {
		return 0, nil, false
	}
	c := *e
	c.Text = text
	// The cause quotes the text after the status, and may go on with the
	// host's note (a -7 no host call was refused): the same without the
	// prefix. A cause that does not start so (a refused host call's own
	// error, a memory limit) says what to fix in its own words: kept.
	if was, msg := statusError(e.Status, e.Text).Error(), e.Cause.Error(); strings.HasPrefix(msg, was) {
		c.Cause = &restated{msg: statusError(e.Status, text).Error() + msg[len(was):], cause: e.Cause}
	}
	return n, &c, true
}

// restated is an error's cause told in other words: errors.Is and As see
// the original.
type restated struct {
	msg   string
	cause error
}

func (r *restated) Error() string { return r.msg }
func (r *restated) Unwrap() error { return r.cause }

// statusError is the cause of a non-zero status.
func statusError(st abi.Status, text string) error {
	if text == "" {
		return fmt.Errorf("%w %d (%s)", ErrStatus, int32(st), st)
	}
	return fmt.Errorf("%w %d (%s): %s", ErrStatus, int32(st), st, printable(text))
}

// LoadError lists every reason a module is not a loadable plugin.
type LoadError struct {
	Plugin   string
	Path     string // empty when loaded from bytes
	Problems []string
	Err      error // the file error (errors.Is(err, fs.ErrNotExist)), when there is one
}

func (e *LoadError) Unwrap() error { return e.Err }

func (e *LoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin %q", e.Plugin)
	if e.Path != "" {
		fmt.Fprintf(&b, " (%s)", e.Path)
	}
	b.WriteString(" cannot be loaded: ")
	if len(e.Problems) == 1 {
		b.WriteString(e.Problems[0])
		return b.String()
	}
	fmt.Fprintf(&b, "%d problems:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p)
	}
	return b.String()
}

// printable returns s as it is when it is valid, printable UTF-8 and
// quoted otherwise, so guest text cannot drive the user's terminal.
func printable(s string) string {
	if !utf8.ValidString(s) {
		return quoteCapped(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return quoteCapped(s)
		}
	}
	return s
}

// PrintableLog is guest output (a stdout or stderr tail) made safe to show
// on a terminal or a page, line by line: newlines and tabs stay, and every
// other character that is not printable (an escape sequence's ESC, a
// carriage return, NUL, a bidi override) and every byte that is not UTF-8
// is written as Go quotes it (\x1b, \r, \x00, \u202e, \xff), so a guest
// can neither drive the terminal nor overwrite a line the host printed.
func PrintableLog(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == '\n' || r == '\t' || (unicode.IsPrint(r) && !(r == utf8.RuneError && w == 1)) {
			b.WriteString(s[i : i+w])
		} else {
			q := strconv.Quote(s[i : i+w]) // a rune, or one bad byte as \xNN
			b.WriteString(q[1 : len(q)-1])
		}
		i += w
	}
	return b.String()
}

// maxQuoted bounds a quoted error text: quoting can make each byte four
// (4 KiB of zeros was 16 KiB of \x00), and a message is read by a person.
const maxQuoted = 512

// quoteCapped quotes s, keeping at most maxQuoted bytes of the quoted form
// and saying how many bytes of s it left out.
func quoteCapped(s string) string {
	q := strconv.Quote(s)
	if len(q) <= maxQuoted {
		return q
	}
	b := []byte{'"'}
	i := 0
	for i < len(s) {
		_, w := utf8.DecodeRuneInString(s[i:])
		piece := strconv.Quote(s[i : i+w]) // a rune, or one bad byte as \xNN
		if len(b)+len(piece)-1 > maxQuoted {
			break
		}
		b = append(b, piece[1:len(piece)-1]...)
		i += w
	}
	return fmt.Sprintf("%s\"… (%d more bytes)", b, len(s)-i)
}
