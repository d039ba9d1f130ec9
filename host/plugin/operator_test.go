package plugin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

func TestIdentityRoundTrip(t *testing.T) {
	h := newHost(t, nil)
	m := load(t, h, "identity")
	cfg := map[string]any{"threshold": 30, "field": "temp"}
	op := m.NewOperator(context.Background(), "ident", nil)
	if err := op.Open(&runtime.OpenContext{Operator: "ident", Subtask: 2, Parallelism: 4, MaxParallelism: 128, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	// open received the config as a msgpack map and the subtask numbers.
	want, _ := encodeConfig(cfg)
	if n := global(t, op, "open_config_len"); int(n) != len(want) || !bytes.Equal(mem(t, op, 4096, len(want)), want) {
		t.Errorf("open config = % x, want % x", mem(t, op, 4096, int(n)), want)
	}
	if s, p, mp := global(t, op, "open_subtask"), global(t, op, "open_parallelism"), global(t, op, "open_max_parallelism"); s != 2 || p != 4 || mp != 128 {
		t.Errorf("open(subtask %d, parallelism %d, max %d), want 2, 4, 128", s, p, mp)
	}
	var w abi.Writer
	for i := int64(0); i < 100; i++ {
		w.AppendRaw(record(abi.AppendStr(nil, "k"), i, i-50))
	}
	out := &sink{}
	if err := op.Process(0, w.Buf, w.Count, out); err != nil {
		t.Fatal(err)
	}
	if len(out.got) != 1 || out.got[0].port != 0 || out.got[0].count != 100 || !bytes.Equal(out.got[0].buf, w.Buf) {
		t.Fatalf("output %+v, want the batch unchanged on port 0", out.got)
	}
	// An empty batch is not sent to the guest.
	if err := op.Process(0, nil, 0, out); err != nil || len(out.got) != 1 {
		t.Fatalf("empty batch: %v, %d emits", err, len(out.got))
	}
	inst := op.r.inst
	if err := op.Close(out); err != nil {
		t.Fatal(err)
	}
	if got := int32(uint32(inst.mod.ExportedGlobal("closes").Get())); got != 1 {
		t.Errorf("sluice_close called %d times", got)
	}
	if !inst.dead || op.r.inst != nil {
		t.Error("Close left the instance open")
	}
	err := op.Process(0, w.Buf, w.Count, out)
	wantErr(t, err, `plugin "identity" (operator ident, subtask 3/4) export sluice_process: the operator was used after Close`)
}

func TestOperatorConfigFallback(t *testing.T) {
	h := newHost(t, nil)
	op := load(t, h, "identity").NewOperator(context.Background(), "x", map[string]any{"a": 1})
	if err := op.Open(&runtime.OpenContext{Parallelism: 1}); err != nil {
		t.Fatal(err)
	}
	defer op.Close(nil)
	want, _ := encodeConfig(map[string]any{"a": 1})
	if got := mem(t, op, 4096, len(want)); !bytes.Equal(got, want) {
		t.Errorf("config = % x, want % x", got, want)
	}
	// nil config is an empty map.
	if b, _ := encodeConfig(nil); !bytes.Equal(b, []byte{0x80}) {
		t.Errorf("encodeConfig(nil) = % x", b)
	}
}

// nativeFilter is the Go twin of testdata/filter.wat, on the same bytes
// with abi's scanner: keep records whose int "amount" > 0, doubled.
func nativeFilter(w *abi.Writer, batch []byte, count int) error {
	rd := abi.NewReader(batch, count)
	for rd.Next() {
		r := rd.Record()
		raw, ok, err := abi.MapField(r.Value, "amount")
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		amt, err := abi.ReadInt(raw)
		if err != nil || amt <= 0 {
			continue
		}
		at := cap(r.Raw) - cap(raw) // offset of the amount inside the envelope
		w.Buf = append(w.Buf, r.Raw[:at]...)
		w.Buf = abi.AppendInt(w.Buf, 2*amt)
		w.Buf = append(w.Buf, r.Raw[at+len(raw):]...)
		w.Count++
	}
	return rd.Err()
}

// filterBatch builds count transaction-like records, a third of them with
// amount <= 0.
func filterBatch(count int) abi.Writer {
	var w abi.Writer
	for i := 0; i < count; i++ {
		v := abi.AppendMapHeader(nil, 5)
		v = abi.AppendStr(v, "txnId")
		v = abi.AppendInt(v, int64(100000+i))
		v = abi.AppendStr(v, "accountId")
		v = abi.AppendStr(v, "acct-"+string(rune('a'+i%26)))
		v = abi.AppendStr(v, "amount")
		v = abi.AppendInt(v, int64(i%3-1)*int64(i*37%5000))
		v = abi.AppendStr(v, "currency")
		v = abi.AppendStr(v, "EUR")
		v = abi.AppendStr(v, "ts")
		v = abi.AppendInt(v, 1700000000000+int64(i))
		w.Append(1700000000000+int64(i), true, nil, v)
	}
	return w
}

func TestFilterMatchesNative(t *testing.T) {
	h := newHost(t, nil)
	op := open(t, load(t, h, "filter"), runtime.OpenContext{})
	w := filterBatch(1024)
	// Edge cases: every int width, a float amount, no amount, nested
	// values before the amount, a long string key.
	for _, amt := range []int64{0, 1, -1, 63, 64, 127, 128, 255, 256, 65535, 65536, 1 << 31, 1 << 40, -1 << 40} {
		w.AppendRaw(record(abi.AppendInt(nil, amt), 7, amt))
	}
	v := abi.AppendMapHeader(nil, 3)
	v = abi.AppendStr(v, "tags")
	v = abi.AppendArrayHeader(v, 1)
	v = abi.AppendMapHeader(v, 1)
	v = abi.AppendStr(v, "x")
	v = abi.AppendBin(v, make([]byte, 300))
	v = abi.AppendStr(v, "a long key that needs str8, more than 31 bytes")
	v = abi.AppendFloat(v, 1.5)
	v = abi.AppendStr(v, "amount")
	v = abi.AppendInt(v, 21)
	w.Append(0, false, abi.AppendStr(nil, "key"), v)
	v = abi.AppendMapHeader(nil, 1)
	v = abi.AppendStr(v, "amount")
	v = abi.AppendFloat(v, 2.5)
	w.Append(0, false, nil, v)
	v = abi.AppendMapHeader(nil, 1)
	v = abi.AppendStr(v, "other")
	v = abi.AppendInt(v, 5)
	w.Append(0, false, nil, v)

	var want abi.Writer
	if err := nativeFilter(&want, w.Buf, w.Count); err != nil {
		t.Fatal(err)
	}
	out := &sink{}
	if err := op.Process(0, w.Buf, w.Count, out); err != nil {
		t.Fatal(err)
	}
	if len(out.got) != 1 || out.got[0].count != want.Count || !bytes.Equal(out.got[0].buf, want.Buf) {
		t.Fatalf("wasm kept %d records (%d bytes), native %d (%d bytes)", out.records(), len(out.got[0].buf), want.Count, len(want.Buf))
	}
	if want.Count < 300 || want.Count > 800 {
		t.Fatalf("native kept %d of %d: the fixture data is not mixed", want.Count, w.Count)
	}
}

func TestTrapMidBatchDiscardsOutput(t *testing.T) {
	h := newHost(t, nil)
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	s := &script{}
	rec := s.data(record(nil, 1, 10))
	s.do(opEmit, 0, 0, rec, int32(len(record(nil, 1, 10))), 1).do(opTrap, 0)
	out, err := s.run(op)
	pe := wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: wasm trap: unreachable`)
	if !pe.Poisoned || !errors.Is(err, ErrTrap) || len(out.got) != 0 {
		t.Fatalf("poisoned %v, output %d emits: a trapped batch must emit nothing", pe.Poisoned, len(out.got))
	}
	if op.r.inst != nil {
		t.Fatal("the trapped instance is still in use")
	}
	// The next batch runs on a fresh instance, opened again.
	s = &script{}
	rec = s.data(record(nil, 2, 20))
	s.do(opCheckOpened, 0).do(opEmit, 0, 0, rec, int32(len(record(nil, 2, 20))), 1)
	out, err = s.run(op)
	if err != nil {
		t.Fatal(err)
	}
	if out.records() != 1 || !bytes.Equal(out.got[0].buf, record(nil, 2, 20)) {
		t.Fatalf("output after replacement: %+v", out.got)
	}
}

// TestDeadline: a runaway call in process, open or a partitioner stops,
// poisons its instance and names plugin, export and cause, under both
// interruption mechanisms: fuel (the default: CallTimeout on the clock at
// every slice, or a deterministic budget, CallFuel) and wazero's
// wall-clock deadline.
func TestDeadline(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		cause string
	}{
		{"fuel", func(c *Config) { c.CallTimeout = 50 * time.Millisecond },
			"deadline exceeded: the call ran past its call-timeout of 50ms"},
		{"fuel-budget", func(c *Config) { c.CallFuel = 12345 },
			"deadline exceeded: the call spent its CPU budget of 12345 fuel units (CallFuel)"},
		{"deadline", func(c *Config) { c.CallTimeout = 50 * time.Millisecond; c.Interruption = InterruptDeadline },
			"deadline exceeded: the call ran past its deadline of 50ms (the call-timeout setting)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, tc.edit)
			m := load(t, h, "script")
			t.Run("process", func(t *testing.T) {
				op := open(t, m, runtime.OpenContext{})
				in, err := op.r.get()
				if err != nil {
					t.Fatal(err)
				}
				bound := in.bound
				out, err := (&script{}).do(opSpin, 0).run(op)
				pe := wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: `+tc.cause)
				if !pe.Poisoned || !errors.Is(err, ErrDeadline) || len(out.got) != 0 {
					t.Fatalf("poisoned %v, %d emits", pe.Poisoned, len(out.got))
				}
				// What stopped the spin is the bound's own interrupt, at
				// the first chance it had (not the clock: a loaded machine
				// only makes a slice longer).
				switch b := bound.(type) {
				case *fuelBound:
					// the call-timeout is checked at every refuel: it
					// stopped the call before the fuel backstop would have
					// (budget/FuelSlice refuels); a CallFuel budget under
					// one slice stops at the first
					refuels, most := b.refuels.Load(), b.f.budget/FuelSlice
					if b.f.deadline == 0 {
						most = 1
					}
					if refuels < 1 || refuels > most {
						t.Errorf("the call stopped after %d refuels, want 1 to %d", refuels, most)
					}
				case *deadlineCtx:
					if err := b.Err(); err != context.DeadlineExceeded {
						t.Errorf("the deadline's context ended with %v, want its timer to have fired (context.DeadlineExceeded)", err)
					}
				default:
					t.Fatalf("the instance is bound by %T", bound)
				}
				if _, err := (&script{}).do(opCheckOpened, 0).run(op); err != nil {
					t.Fatalf("after a deadline the next batch fails: %v", err)
				}
			})
			t.Run("open", func(t *testing.T) {
				op := m.NewOperator(context.Background(), "op1", nil)
				err := op.Open(&runtime.OpenContext{Operator: "op1", Subtask: 1, Parallelism: 2, MaxParallelism: 128})
				wantErr(t, err, `plugin "script" (operator op1, subtask 2/2) export sluice_open: `+tc.cause)
				op.Close(nil)
			})
			t.Run("partition", func(t *testing.T) {
				p, err := load(t, h, "partition").NewPartitioner(context.Background(), "a", "b", 0, 1, 128, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				err = p.Partition(record(nil, 1, 1), 1, 99, make([]int32, 1))
				wantErr(t, err, `plugin "partition" (edge a->b, subtask 1/1) export sluice_partition: `+tc.cause)
			})
		})
	}
}

// TestFuelIsDeterministic: the same batch spends the same fuel on every
// run, whatever the machine is doing: a budget just below what it needs
// fails it every time, and that budget plus one passes every time.
func TestFuelIsDeterministic(t *testing.T) {
	w := filterBatch(200)
	run := func(budget int64) error {
		h := newHost(t, func(c *Config) { c.CallFuel = budget })
		op := open(t, load(t, h, "filter"), runtime.OpenContext{})
		defer op.Close(nil)
		return op.Process(0, w.Buf, w.Count, &discard{})
	}
	// Bisect the smallest budget that lets the batch pass.
	lo, hi := int64(1), int64(1<<30)
	if err := run(hi); err != nil {
		t.Fatalf("the batch fails with 2^30 fuel units: %v", err)
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if run(mid) == nil {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	for i := 0; i < 3; i++ {
		if err := run(lo - 1); !errors.Is(err, ErrDeadline) {
			t.Fatalf("run %d with %d units (one short): %v, want ErrDeadline every time", i, lo-1, err)
		}
		if err := run(lo); err != nil {
			t.Fatalf("run %d with %d units (enough): %v", i, lo, err)
		}
	}
}

func TestOpenStatusError(t *testing.T) {
	h := newHost(t, nil)
	op := load(t, h, "script").NewOperator(context.Background(), "op1", nil)
	err := op.Open(&runtime.OpenContext{Operator: "op1", Subtask: 2, Parallelism: 3, MaxParallelism: 128})
	pe := wantErr(t, err, `plugin "script" (operator op1, subtask 3/3) export sluice_open: plugin returned status -6 (config error): config error: subtask 2 refuses to open`)
	if pe.Status != abi.StatusConfig || pe.Text != "config error: subtask 2 refuses to open" || !errors.Is(err, ErrStatus) {
		t.Errorf("status %d text %q", pe.Status, pe.Text)
	}
	err = op.Process(0, []byte{1}, 1, &sink{})
	wantErr(t, err, `plugin "script" (operator op1, subtask 3/3) export sluice_process: the operator is not open`)
	op.Close(nil)
}

func TestMemoryLimit(t *testing.T) {
	h := newHost(t, func(c *Config) { c.MemoryLimitPages = 32 })
	m := load(t, h, "script")
	t.Run("trap", func(t *testing.T) {
		op := open(t, m, runtime.OpenContext{})
		_, err := (&script{}).do(opGrow, 0, 0).run(op)
		pe := wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: memory limit: guest memory at 32 of 32 pages (2 MiB, the memory-pages setting) could not grow: wasm trap: unreachable`)
		if !pe.Poisoned || !errors.Is(err, ErrMemoryLimit) || !errors.Is(err, ErrTrap) {
			t.Fatalf("poisoned %v, cause %v", pe.Poisoned, pe.Cause)
		}
	})
	t.Run("status", func(t *testing.T) {
		op := open(t, m, runtime.OpenContext{})
		_, err := (&script{}).do(opGrow, -2, 1).run(op)
		pe := wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: memory limit: guest memory at 32 of 32 pages (2 MiB, the memory-pages setting) could not grow: plugin returned status -2 (out of memory): out of memory`)
		if !pe.Poisoned || pe.Status != abi.StatusOutOfMemory {
			t.Fatalf("poisoned %v status %d", pe.Poisoned, pe.Status)
		}
		// The replacement starts small again.
		if _, err := (&script{}).do(opCheckOpened, 0).run(op); err != nil {
			t.Fatal(err)
		}
		if pages := op.r.inst.mem.Size() / 65536; pages != 2 {
			t.Errorf("fresh instance has %d pages", pages)
		}
	})
	t.Run("input", func(t *testing.T) {
		op := open(t, m, runtime.OpenContext{})
		_, err := op.r.get()
		if err != nil {
			t.Fatal(err)
		}
		err = op.Process(0, make([]byte, 3<<20), 1, &sink{})
		wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_buffer: memory limit: guest memory at 2 of 32 pages (2 MiB, the memory-pages setting) could not grow: returned 0 for 3145728 bytes: the guest could not allocate its input`)
	})
}

func TestErrorTextAndStatus(t *testing.T) {
	h := newHost(t, nil)
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	s := &script{}
	msg := s.data([]byte("amount must be positive"))
	rec := s.data(record(nil, 1, 1))
	s.do(opEmit, 0, 0, rec, int32(len(record(nil, 1, 1))), 1).do(opError, -3, msg, 23)
	inst := op.r.inst
	out, err := s.run(op)
	pe := wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: plugin returned status -3 (user error): amount must be positive`)
	if pe.Poisoned || op.r.inst != inst || pe.Status != abi.StatusUser || pe.Text != "amount must be positive" || len(out.got) != 0 {
		t.Fatalf("poisoned %v, same instance %v, status %d, text %q, %d emits", pe.Poisoned, op.r.inst == inst, pe.Status, pe.Text, len(out.got))
	}
	// The text is cut at abi.MaxErrorText; control bytes are quoted.
	s = &script{}
	long := s.data(bytes.Repeat([]byte("x"), abi.MaxErrorText+100))
	s.do(opError, -3, long, abi.MaxErrorText+100)
	_, err = s.run(op)
	if errors.As(err, &pe); len(pe.Text) != abi.MaxErrorText {
		t.Errorf("kept %d bytes of error text, want %d", len(pe.Text), abi.MaxErrorText)
	}
	s = &script{}
	esc := s.data([]byte("bad\x1b[31m"))
	s.do(opError, -1, esc, 8)
	_, err = s.run(op)
	wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: plugin returned status -1 (malformed input): "bad\x1b[31m"`)
	// The text of one call does not leak into the next.
	_, err = (&script{}).do(opCheckOpened, -4).run(op)
	wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: plugin returned status -4 (unsupported)`)
}

func TestProcExitMidBatch(t *testing.T) {
	h := newHost(t, nil)
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	s := &script{}
	rec := s.data(record(nil, 1, 1))
	s.do(opEmit, 0, 0, rec, int32(len(record(nil, 1, 1))), 1).do(opExit, 0, 3)
	out, err := s.run(op)
	pe := wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: plugin exited: the guest called proc_exit(3) during the call`)
	if !pe.Poisoned || !errors.Is(err, ErrExit) || len(out.got) != 0 {
		t.Fatalf("poisoned %v, %d emits", pe.Poisoned, len(out.got))
	}
	// Exit code 0 is a failure too.
	_, err = (&script{}).do(opExit, 0, 0).run(op)
	wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: plugin exited: the guest called proc_exit(0) during the call`)
	if _, err := (&script{}).do(opCheckOpened, 0).run(op); err != nil {
		t.Fatal(err)
	}
}

// A guest runtime's crash report (Go's "fatal error: ..." then its
// goroutine dump) is named by its first lines, which the dump pushes out of
// the stderr tail; without one, the error quotes the tail's last 512 bytes
// from a line start, and the whole tail stays in PluginError.Stderr.
func TestStderrCrashReportAndQuotedTail(t *testing.T) {
	h := newHost(t, nil)
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	s := &script{}
	earlier := "panic: printed by an earlier call, which succeeded\n"
	s.do(opStderr, 0, s.data([]byte(earlier)), int32(len(earlier)), 1)
	if _, err := s.run(op); err != nil {
		t.Fatal(err)
	}
	s = &script{}
	report := []byte("runtime: out of memory: cannot allocate 1048576-byte block (63275008 in use)\nfatal error: out of memory\n\n")
	dump := []byte("goroutine 1 gp=0x202380 m=nil [running]:\n\truntime.gopark(0x383a0)\n")
	r, d := s.data(report), s.data(dump)
	s.do(opStderr, 0, r, int32(len(report)), 1).do(opStderr, 0, d, int32(len(dump)), 200).do(opTrap, 0)
	_, err := s.run(op)
	pe := wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: wasm trap: unreachable; the guest runtime reported: "runtime: out of memory: cannot allocate 1048576-byte block (63275008 in use); fatal error: out of memory"`)
	if len(pe.Stderr) != 4096 || strings.Contains(pe.Stderr, "fatal error") {
		t.Errorf("stderr tail: %d bytes", len(pe.Stderr))
	}

	// a call that returns a status did not crash: its "panic: " log line is
	// quoted with the tail, not reported as the runtime's
	s = &script{}
	logged := "panic: a line the guest logged\n"
	s.do(opStderr, 0, s.data([]byte(logged)), int32(len(logged)), 1).do(opCheckOpened, -4)
	_, err = s.run(op)
	wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: plugin returned status -4 (unsupported); stderr tail: `+strconv.Quote(logged)) // a fresh instance: the trap poisoned the last

	op = open(t, load(t, h, "script"), runtime.OpenContext{})
	s = &script{}
	line := []byte("a log line of the guest, 32 b.\n")
	l := s.data(line)
	s.do(opStderr, 0, l, int32(len(line)), 100).do(opTrap, 0)
	_, err = s.run(op)
	pe = wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: wasm trap: unreachable; stderr tail: `+strconv.Quote(strings.Repeat(string(line), 16)))
	if len(pe.Stderr) != 100*len(line) {
		t.Errorf("stderr kept %d bytes, want %d", len(pe.Stderr), 100*len(line))
	}
}

func TestStderrCapturedAndCapped(t *testing.T) {
	h := newHost(t, func(c *Config) { c.StderrCap = 32 })
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	s := &script{}
	digits := s.data([]byte("0123456789"))
	end := s.data([]byte("END\n"))
	s.do(opStderr, 0, digits, 10, 1000).do(opStderr, 0, end, 4, 1).do(opTrap, 0)
	_, err := s.run(op)
	pe := wantErr(t, err, `plugin "script" (operator op1, subtask 1/1) export sluice_process: wasm trap: unreachable; stderr tail: "2345678901234567890123456789END\n"`)
	if len(pe.Stderr) != 32 {
		t.Errorf("kept %d bytes of stderr, want 32", len(pe.Stderr))
	}
	_, stderr := op.Output()
	if stderr != pe.Stderr {
		t.Errorf("Output() stderr %q, want the tail of the closed instance", stderr)
	}
}

func TestSetImplementsPlugins(t *testing.T) {
	h := newHost(t, nil)
	set := &Set{
		Modules: map[string]*Module{"identity": load(t, h, "identity"), "partition": load(t, h, "partition"), "keysel": load(t, h, "keysel")},
		Configs: map[string]map[string]any{"ident": {"k": "v"}},
	}
	var plugins runtime.Plugins = set
	if _, err := plugins.Operator("x", "nope", 0); err == nil || err.Error() != `operator x: no plugin named "nope" (loaded: identity, keysel, partition)` {
		t.Errorf("unknown plugin: %v", err)
	}
	op, err := plugins.Operator("ident", "identity", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(&runtime.OpenContext{Operator: "ident", Subtask: 1, Parallelism: 2, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	want, _ := encodeConfig(map[string]any{"k": "v"})
	if got := mem(t, op.(*Operator), 4096, len(want)); !bytes.Equal(got, want) {
		t.Errorf("config from the Set: % x", got)
	}
	out := &sink{}
	if err := op.Process(0, record(nil, 1, 1), 1, out); err != nil || out.records() != 1 {
		t.Fatalf("%v, %d records", err, out.records())
	}
	if err := op.Close(out); err != nil {
		t.Fatal(err)
	}
	// A partitioner is not an operator.
	op, _ = plugins.Operator("p", "partition", 0)
	err = op.Open(&runtime.OpenContext{Operator: "p", Parallelism: 1})
	wantErr(t, err, `plugin "partition" (operator p, subtask 1/1) export sluice_open: the plugin is a partitioner (it has no sluice_process), not an operator`)
	part, err := plugins.Partitioner("partition", "a", "b", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer part.Close()
	if _, err := plugins.Partitioner("identity", "a", "b", 0); err == nil {
		t.Error("identity accepted as a partitioner")
	} else {
		wantErr(t, err, `plugin "identity" (edge a->b, subtask 1/1) export sluice_partition: the plugin has no export sluice_partition`)
	}
	ks, err := plugins.KeySelector("keysel", "a", "b", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Close()
}

func TestUnboundedRecursion(t *testing.T) {
	h := newHost(t, nil)
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	_, err := (&script{}).do(opRecurse, 0).run(op)
	pe := wantErr(t, err, prefix+"wasm trap: stack overflow")
	if !pe.Poisoned {
		t.Error("not poisoned")
	}
	if _, err := (&script{}).do(opCheckOpened, 0).run(op); err != nil {
		t.Fatal(err)
	}
}

// A guest runtime that reports it is out of memory, with half the limit or
// more in use, most likely had a memory.grow refused at the limit even when
// it is not within nearMemoryLimit's page of it (a Go runtime grows by
// megabytes): the error names the memory-pages setting.
func TestOutOfMemoryReportNamesTheLimit(t *testing.T) {
	h := newHost(t, func(c *Config) { c.MemoryLimitPages = 64 })
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	s := &script{}
	report := []byte("runtime: out of memory: cannot allocate 4194304-byte block (2621440 in use)\nfatal error: out of memory\n")
	r := s.data(report)
	s.data(make([]byte, 40*65536)) // the input alone takes 40 of the 64 pages
	s.do(opStderr, 0, r, int32(len(report)), 1).do(opTrap, 0)
	_, err := s.run(op)
	var pe *PluginError
	if !errors.As(err, &pe) || !errors.Is(err, ErrMemoryLimit) || !errors.Is(err, ErrTrap) ||
		!strings.Contains(err.Error(), "of 64 pages (4 MiB, the memory-pages setting) could not grow: wasm trap: unreachable") {
		t.Fatalf("error %v", err)
	}
	// without the report, a trap that far from the limit is only a trap
	s = &script{}
	s.data(make([]byte, 40*65536))
	s.do(opTrap, 0)
	if _, err := s.run(op); errors.Is(err, ErrMemoryLimit) || err == nil {
		t.Fatalf("a plain trap: %v", err)
	}
}

// TestOutputCountFollowsTheKind: as Flink's function types hold theirs, a
// map emits one record for each input record and a filter at most those
// it is given; a plugin used as either that emits otherwise fails, named
// (it changed the job's counts without a word). A flat-map may emit any
// number.
func TestOutputCountFollowsTheKind(t *testing.T) {
	h := newHost(t, nil)
	type want struct {
		kind pipeline.Kind
		err  string // a part of it; "" for none
	}
	check := func(what string, cases []want, run func(op *Operator) error, fixture string) {
		for _, c := range cases {
			err := run(open(t, load(t, h, fixture), runtime.OpenContext{Kind: c.kind}))
			if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Errorf("%s as a %s: %v, want %q", what, c.kind, err, c.err)
			}
		}
	}
	w := filterBatch(30) // the filter fixture keeps 10 of them
	check("the filter fixture", []want{
		{pipeline.KindMap, "malformed output: a map emits one record for each input record, and this call emitted 10 for 30 (a plugin that emits any number is a flat-map)"},
		{pipeline.KindFilter, ""},
		{pipeline.KindFlatMap, ""},
	}, func(op *Operator) error { return op.Process(0, w.Buf, w.Count, &sink{}) }, "filter")
	// three records emitted for a batch of two commands
	rec := record(abi.AppendInt(nil, 1), 1, 1)
	check("three emits", []want{
		{pipeline.KindFilter, "a filter emits at most the records it is given, and this call emitted 3 for 2"},
		{pipeline.KindMap, "a map emits one record for each input record, and this call emitted 3 for 2"},
		{pipeline.KindProcess, ""},
	}, func(op *Operator) error {
		s := &script{}
		addr := s.data(append(append([]byte(nil), rec...), rec...))
		s.do(opEmit, 0, 0, addr, int32(len(rec)), 1)
		s.do(opEmit, 0, 0, addr, int32(2*len(rec)), 2)
		_, err := s.run(op)
		return err
	}, "script")
}

// TestCountFailureUndoesState: a call its kind's output count fails is a
// failed call, its keyed-state writes undone as for a trap or an error
// status; they stood, and narrowing the batch to its bad record ran them
// again (a reviewer's finding: a counter of the records read 10 for 4).
func TestCountFailureUndoesState(t *testing.T) {
	h := newHost(t, nil)
	st := NewMemoryState()
	r := &rejects{policy: runtime.PolicySkip}
	op := open(t, load(t, h, "countstate"), runtime.OpenContext{Kind: pipeline.KindMap, State: st, OnError: runtime.PolicySkip, Reject: r.reject})
	b, n := poisonBatch("", "", "", "drop")
	out := &sink{}
	if err := op.Process(0, b, n, out); err != nil {
		t.Fatal(err)
	}
	v, ok, err := st.Get(0, abi.AppendStr(nil, "k"), nil)
	if err != nil || !ok || len(v) != 4 {
		t.Fatalf("counter %x %v %v", v, ok, err)
	}
	if got := binary.LittleEndian.Uint32(v); got != 3 || len(r.got) != 1 || !slices.Equal(ns(t, out), []int64{1, 2, 3}) {
		t.Errorf("counter %d (want 3: the calls that stood held the 3 good records), rejected %d, out %v", got, len(r.got), ns(t, out))
	}
}
