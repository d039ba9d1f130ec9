package plugin

import (
	"bytes"
	"sync/atomic"
	"testing"
)

// TestTailStopsScanningAFlood: past floodBytes in one call, what a guest
// writes is counted in bytes and neither kept nor scanned (a guest's
// fd_write is a host call fuel does not charge: 4096 iovecs over 15 MiB
// made the tail scan 60 GiB); the next call's output is kept again.
func TestTailStopsScanningAFlood(t *testing.T) {
	var lines atomic.Int64
	tb := countingTail(64, &lines)
	tb.startCall()
	chunk := bytes.Repeat([]byte("x\n"), 1<<20) // 2 MiB, a million lines
	for range 8 {
		tb.Write(chunk) // 16 MiB: still scanned
	}
	counted := lines.Load()
	if counted < 8<<20-64 {
		t.Fatalf("%d lines counted of the first 16 MiB", counted)
	}
	tail := tb.String()
	for range 1000 { // 2 GiB more: counted, not scanned or kept
		if n, err := tb.Write(chunk); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if lines.Load() != counted || tb.String() != tail {
		t.Errorf("a flood past floodBytes was scanned or kept: %d lines (was %d)", lines.Load(), counted)
	}
	if want := int64(1008)*int64(len(chunk)) - 64; tb.Dropped() != want {
		t.Errorf("dropped %d bytes, want %d", tb.Dropped(), want)
	}
	tb.startCall()
	tb.Write([]byte("next call\n"))
	if got := tb.String(); got[len(got)-10:] != "next call\n" {
		t.Errorf("the next call's output was not kept: %q", got)
	}
}
