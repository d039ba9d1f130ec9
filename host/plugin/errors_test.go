package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/internal/wasmbin"
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
	if strings.Contains(msg, "\n") || strings.Contains(msg, "fuel") || !strings.Contains(msg, `plugin "starttrap" (operator op1, subtask 1/1): instantiate: the module's start function failed: unreachable`) {
		t.Errorf("%q", msg)
	}
}

// TestStartFunctionRunsOnStartFuel: a start function that never ends
// stops at the end of StartFuel (it ran on the call's whole budget,
// call-timeout at FuelPerSecond: over a minute of spinning at the default
// 5 s that no signal stopped), and the message says why it may have ended.
func TestStartFunctionRunsOnStartFuel(t *testing.T) {
	m := load(t, newHost(t, nil), "startloop")
	op := m.NewOperator(context.Background(), "op1", nil)
	err := op.Open(&runtime.OpenContext{Operator: "op1", Parallelism: 1, MaxParallelism: 128})
	if err == nil {
		t.Fatal("the open succeeded")
	}
	want := `instantiate: the module's start function ran out of its fuel budget: it runs on at most 1073741824 fuel units`
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%q lacks %q", err, want)
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

// TestStackFirstOverflowHint: a module linked with --stack-first (the C
// and Rust SDKs' builds) traps on a stack overflow as an out-of-bounds
// access; the error says what that may be. The same module with its data
// below the stack's top (wasm-ld's default layout) is not stack-first and
// gets no hint.
func TestStackFirstOverflowHint(t *testing.T) {
	h := newHost(t, nil)
	b, n := poisonBatch("")
	run := func(m *Module) error {
		return open(t, m, runtime.OpenContext{}).Process(0, b, n, &sink{})
	}
	const trap = "wasm trap: out of bounds memory access"
	err := run(load(t, h, "stackfirst"))
	var pe *PluginError
	if !errors.As(err, &pe) || !errors.Is(err, ErrTrap) || pe.Cause.Error() != trap+stackFirstHint {
		t.Fatalf("stack-first: %v", err)
	}
	if !strings.Contains(err.Error(), "out of bounds memory access (a C or Rust stack overflow traps this way with --stack-first: look for deep recursion or large locals)") {
		t.Errorf("stack-first: %v", err)
	}

	src, err := os.ReadFile(filepath.Join("testdata", "stackfirst.wat"))
	if err != nil {
		t.Fatal(err)
	}
	dataFirst := strings.Replace(string(src), "(data (i32.const 16384)", "(data (i32.const 1024)", 1)
	wat := filepath.Join(t.TempDir(), "datafirst.wat")
	os.WriteFile(wat, []byte(dataFirst), 0o644)
	if msg, err := exec.Command("wat2wasm", wat, "-o", wat+".wasm").CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, msg)
	}
	bin, err := os.ReadFile(wat + ".wasm")
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.Load(context.Background(), "datafirst", bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(m); !errors.As(err, &pe) || pe.Cause.Error() != trap {
		t.Fatalf("data first: %v", err)
	}
}

// stackLayout tells --stack-first from wasm-ld's default layout by the
// first global and the data segments only.
func TestStackLayout(t *testing.T) {
	globals := func(b ...byte) *wasmbin.Reader { return wasmbin.NewReader(append([]byte{1}, b...), 0) }
	data := func(offsets ...byte) *wasmbin.Reader {
		b := []byte{byte(len(offsets))}
		for _, o := range offsets {
			b = append(b, 0, 0x41, o, 0x0b, 1, 'x') // active, i32.const o (one LEB byte), 1 byte
		}
		return wasmbin.NewReader(b, 0)
	}
	for _, c := range []struct {
		name string
		g, d *wasmbin.Reader
		want bool
	}{
		{"stack first", globals(0x7f, 1, 0x41, 0x20, 0x0b), data(0x20, 0x30), true},
		{"data below the top", globals(0x7f, 1, 0x41, 0x20, 0x0b), data(0x10, 0x30), false},
		{"immutable global", globals(0x7f, 0, 0x41, 0x20, 0x0b), data(0x20), false},
		{"i64 global", globals(0x7e, 1, 0x42, 0x20, 0x0b), data(0x20), false},
		{"negative top", globals(0x7f, 1, 0x41, 0x70, 0x0b), data(0x20), false},
		{"no data", globals(0x7f, 1, 0x41, 0x20, 0x0b), wasmbin.NewReader([]byte{0}, 0), false},
		{"truncated data", globals(0x7f, 1, 0x41, 0x20, 0x0b), wasmbin.NewReader([]byte{1, 0, 0x41}, 0), false},
	} {
		var l stackLayout
		l.readGlobals(c.g)
		l.readData(c.d)
		if got := l.stackFirst(); got != c.want {
			t.Errorf("%s: stackFirst = %v", c.name, got)
		}
	}
}

// TestRecordIndex reads the SDKs' "record N: " prefix of a status error
// and nothing else.
func TestRecordIndex(t *testing.T) {
	mk := func(text string) *PluginError {
		return &PluginError{Plugin: "p", Export: abi.ExportProcess, Status: abi.StatusUser, Text: text, Cause: statusError(abi.StatusUser, text)}
	}
	n, s, ok := mk("record 12: no amount").RecordIndex()
	if !ok || n != 12 || s.Text != "no amount" || !strings.HasSuffix(s.Error(), "plugin returned status -3 (user error): no amount") {
		t.Fatalf("%d %v %v", n, s, ok)
	}
	for _, text := range []string{"no amount", "record x: a", "record -1: a", "record 01: a", "record 3 a", ""} {
		if _, _, ok := mk(text).RecordIndex(); ok {
			t.Errorf("%q: read a record index", text)
		}
	}
	// the host's note after the text stays; so does a refusal's own cause
	noted := mk("record 4: state_put failed")
	noted.Status = abi.StatusHost
	noted.Cause = fmt.Errorf("%w, but the host refused none of the call's host calls: the plugin returned it of its own accord", statusError(abi.StatusHost, noted.Text))
	if _, s, ok := noted.RecordIndex(); !ok || !strings.HasSuffix(s.Error(), "(host refused a call): state_put failed, but the host refused none of the call's host calls: the plugin returned it of its own accord") || !errors.Is(s, ErrStatus) {
		t.Errorf("a -7 of the guest's own: %v", s)
	}
	refused := mk("record 4: state_put failed")
	refused.Status, refused.Cause = abi.StatusHost, fmt.Errorf("%w: state-memory of 1 MiB reached", ErrState)
	if _, s, ok := refused.RecordIndex(); ok {
		t.Errorf("a refused host call's cause read as a status's: %v", s)
	}
	trap := &PluginError{Plugin: "p", Text: "record 1: x", Cause: ErrTrap}
	if _, _, ok := trap.RecordIndex(); ok {
		t.Error("a trap's text read as a status's")
	}
}

// TestStartFunctionWASI: a start function runs during instantiation,
// before the host has a call to bound it, and its WASI calls are held all
// the same: those that work for the guest (random_get over 8 MiB, 300
// times) are billed against StartFuel, which stops it (it ran 1.5 s,
// unbilled), and a plugin granted the clock does not sleep there (a 3 s
// sleep held the open for 3 s; nothing could have cut it short).
func TestStartFunctionWASI(t *testing.T) {
	h := newHost(t, nil)
	op := load(t, h, "startrandom").NewOperator(context.Background(), "op1", nil)
	err := op.Open(&runtime.OpenContext{Operator: "op1", Parallelism: 1, MaxParallelism: 128})
	if err == nil || !strings.Contains(err.Error(), "the module's start function ran out of its fuel budget: it runs on at most 1073741824 fuel units") {
		t.Errorf("300 random_get of 8 MiB in a start function: %v, want it stopped by StartFuel", err)
	}
	op = open(t, load(t, h, "startsleep").Grant(Grants{Clock: true}), runtime.OpenContext{})
	if slept := global(t, op, "slept"); slept < 0 || slept >= 1000 {
		t.Errorf("the start function slept %d ms of its 3 s sleep, want none", slept)
	}
}

// TestRefusedInitializeClosesTheInstance: a host call the host refuses
// during _initialize fails the open, and the instance that ran it is
// closed (it leaked: three failed opens left three live instances), with
// the refusal named and the error marked as having broken the instance.
func TestRefusedInitializeClosesTheInstance(t *testing.T) {
	h := newHost(t, nil)
	m := load(t, h, "initstate")
	for i := range 3 {
		op := m.NewOperator(context.Background(), "op1", nil)
		err := op.Open(&runtime.OpenContext{Operator: "op1", Parallelism: 1, MaxParallelism: 128})
		pe := wantErr(t, err, `plugin "initstate" (operator op1, subtask 1/1) export _initialize: keyed state: state_get on an unkeyed operator: keyed state needs a keyBy before this operator`)
		if !errors.Is(err, ErrState) || !pe.Poisoned {
			t.Errorf("open %d: ErrState %v, poisoned %v: want both", i, errors.Is(err, ErrState), pe.Poisoned)
		}
		op.Close(nil)
		if n := h.LiveInstances(); n != 0 {
			t.Fatalf("after failed open %d: %d live instances, want 0", i+1, n)
		}
	}
}

func TestPrintableLog(t *testing.T) {
	for in, want := range map[string]string{
		"plain line\n\tindented\n":    "plain line\n\tindented\n",
		"\x1b[2J\x00over\rwritten\n":  `\x1b[2J\x00over\rwritten` + "\n",
		"bad \xff byte, é kept":       `bad \xff byte, é kept`,
		"bidi \u202eevil\u202c":       `bidi \u202eevil\u202c`,
		"a literal \\x1b stays as is": "a literal \\x1b stays as is",
	} {
		if got := PrintableLog(in); got != want {
			t.Errorf("PrintableLog(%q) = %q, want %q", in, got, want)
		}
	}
}
