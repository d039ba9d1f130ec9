package plugin

import (
	"bytes"
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
