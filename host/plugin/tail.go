package plugin

import (
	"bytes"
	"strings"
	"sync/atomic"
)

// tailBuffer keeps the last cap bytes written to it: a guest's stdout or
// stderr. Writes never fail, so a log flood cannot fail a call; what falls
// off the front is counted, in bytes and (when lines is set) in lines.
// Nothing a guest writes reaches the host's own logs: a flood costs the
// guest's CPU budget and a bounded buffer, never the host's output.
type tailBuffer struct {
	buf     []byte // ring of len cap once full
	next    int    // write position once full
	full    bool
	cap     int
	dropped int64
	lines   *atomic.Int64 // dropped lines, shared by an operator's tails
	// call is the start of what the current call wrote (startCall), up to
	// callHeadCap bytes: where a guest runtime's crash report begins, which
	// the report's own bulk (a Go runtime's goroutine dump) pushes out of
	// the tail.
	call []byte
	// callBytes is how much the current call wrote (startCall).
	callBytes int64
}

// callHeadCap is how much of each call's output is kept from its start.
const callHeadCap = 2 << 10

// floodBytes is how much one call may write before the rest of what it
// writes is only counted, in bytes: a guest's fd_write is a host call that
// fuel does not charge, and one with 4096 iovecs over 15 MiB of memory
// made the tail scan 60 GiB for newlines (9 s past a 5 s call-timeout;
// a hundred such calls ran on for minutes). Lines past it are not
// counted.
const floodBytes = 16 << 20

// startCall forgets the previous call's start.
func (t *tailBuffer) startCall() { t.call, t.callBytes = t.call[:0], 0 }

// crashLines are how guest runtimes begin a report of a crash they cannot
// recover from (Go: "runtime: out of memory: ...", "fatal error: ...",
// an unrecovered "panic: ...").
var crashLines = []string{"fatal error: ", "panic: ", "runtime: "}

// Crash returns the lines of the current call's output that begin a guest
// runtime's crash report, joined by "; " (at most three, each cut at 200
// bytes), or "" when none is a "fatal error: " or "panic: " line (a log
// line that merely starts with "runtime: " is no report).
func (t *tailBuffer) Crash() string {
	var out []string
	report := false
	for _, l := range bytes.Split(t.call, []byte{'\n'}) {
		for i, p := range crashLines {
			if bytes.HasPrefix(l, []byte(p)) && len(out) < 3 {
				out = append(out, string(l[:min(len(l), 200)]))
				report = report || i < 2
				break
			}
		}
	}
	if !report {
		return ""
	}
	return strings.Join(out, "; ")
}

func newTail(capacity int) *tailBuffer { return &tailBuffer{cap: capacity} }

// countingTail is newTail whose dropped lines are added to lines.
func countingTail(capacity int, lines *atomic.Int64) *tailBuffer {
	return &tailBuffer{cap: capacity, lines: lines}
}

// droppedLines counts the lines in b, which is falling off the front.
func (t *tailBuffer) droppedLines(b []byte) {
	if t.lines != nil {
		if n := bytes.Count(b, []byte{'\n'}); n > 0 {
			t.lines.Add(int64(n))
		}
	}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	if t.callBytes += int64(len(p)); t.callBytes > floodBytes {
		t.dropped += int64(len(p)) // a flood: counted, not kept or scanned
		return len(p), nil
	}
	if room := callHeadCap - len(t.call); room > 0 {
		t.call = append(t.call, p[:min(len(p), room)]...)
	}
	n := len(p)
	if t.cap == 0 {
		t.dropped += int64(n)
		t.droppedLines(p)
		return n, nil
	}
	if len(p) >= t.cap {
		t.dropped += int64(t.size() + len(p) - t.cap)
		t.droppedLines([]byte(t.String()))
		t.droppedLines(p[:len(p)-t.cap])
		if t.buf == nil {
			t.buf = make([]byte, t.cap)
		}
		t.buf = t.buf[:t.cap]
		copy(t.buf, p[len(p)-t.cap:])
		t.next, t.full = 0, true
		return n, nil
	}
	if !t.full {
		room := t.cap - len(t.buf)
		if len(p) <= room {
			t.buf = append(t.buf, p...)
			if len(t.buf) == t.cap {
				t.full = true
			}
			return n, nil
		}
		t.buf = append(t.buf, p[:room]...)
		p = p[room:]
		t.full = true
	}
	for len(p) > 0 {
		t.droppedLines(t.buf[t.next:min(t.next+len(p), t.cap)])
		c := copy(t.buf[t.next:], p)
		t.dropped += int64(c)
		p = p[c:]
		t.next = (t.next + c) % t.cap
	}
	return n, nil
}

func (t *tailBuffer) size() int { return len(t.buf) }

// String returns the kept bytes, oldest first.
func (t *tailBuffer) String() string {
	if !t.full {
		return string(t.buf)
	}
	return string(t.buf[t.next:]) + string(t.buf[:t.next])
}

// Dropped is how many bytes fell off the front.
func (t *tailBuffer) Dropped() int64 { return t.dropped }
