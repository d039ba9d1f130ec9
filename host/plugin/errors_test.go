package plugin

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/runtime"
)

// TestQuotedErrorTextIsCapped: a guest's error text that must be quoted
// (not printable) stays short: 4 KiB of zero bytes was 16 KiB of \x00.
// What is kept is a prefix, quoted, with the count of what was left out;
// printable text and short texts pass as before.
func TestQuotedErrorTextIsCapped(t *testing.T) {
	zeros := strings.Repeat("\x00", 4096)
	got := printable(zeros)
	if len(got) > maxQuoted+40 || !strings.HasPrefix(got, `"\x00\x00`) || !strings.HasSuffix(got, "… (3969 more bytes)") {
		t.Errorf("%d bytes: %.60s…%s", len(got), got, got[len(got)-30:])
	}
	mixed := strings.Repeat("é\xff", 300) // runes kept whole, bad bytes as \xff
	got = printable(mixed)
	head, _, ok := strings.Cut(got, "… (")
	if !ok || len(got) > maxQuoted+40 {
		t.Fatalf("%q", got)
	}
	u, err := strconv.Unquote(head)
	if err != nil || !strings.HasPrefix(mixed, u) || len(u) == 0 {
		t.Errorf("kept %q (%v), not a prefix of the text", head, err)
	}
	if got := printable("bad\x01"); got != `"bad\x01"` {
		t.Errorf("short: %s", got)
	}
	if long := strings.Repeat("word ", 800); printable(long) != long {
		t.Error("printable text must pass unchanged")
	}
}

// TestStartFunctionTrapInOneLine: a start function that traps fails the
// open in one line naming the start function (wazero names "an export"
// of the function and appends a wasm stack trace).
func TestStartFunctionTrapInOneLine(t *testing.T) {
	m := load(t, newHost(t, nil), "starttrap")
	op := m.NewOperator(context.Background(), "op1", nil)
	err := op.Open(&runtime.OpenContext{Operator: "op1", Parallelism: 1, MaxParallelism: 128})
	if err == nil {
		t.Fatal("the open succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, `plugin "starttrap" (operator op1, subtask 1/1): instantiate: the module's start function failed: unreachable`) {
		t.Errorf("%q", msg)
	}
}

// TestTrapKeepsTheGuestsErrorText: an SDK's panic or abort handler sends
// its text through the error import, then traps; the trap's error carries
// the text (it was dropped: "wasm trap: unreachable" and nothing else).
func TestTrapKeepsTheGuestsErrorText(t *testing.T) {
	op := open(t, load(t, newHost(t, nil), "poison"), runtime.OpenContext{})
	b, n := poisonBatch("", "oops")
	err := op.Process(0, b, n, &sink{})
	if err == nil || !strings.Contains(err.Error(), "export sluice_process: wasm trap: unreachable; the guest's error before it: bad record") {
		t.Fatalf("err = %v", err)
	}
	b, n = poisonBatch("trap") // a trap with no text says no more than before
	if err := op.Process(0, b, n, &sink{}); err == nil || strings.Contains(err.Error(), "the guest's error") {
		t.Fatalf("err = %v", err)
	}
}
