package sandbox

import (
	"errors"
	"testing"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// Row 5: an emit with an out-of-bounds pointer/length is an ABI error,
// not a host panic, and ptr+len is computed in 64 bits: 0xfffffff0 + 0x20
// wraps to 0x10 in 32 bits, which would pass a 32-bit check.
func TestSandbox05_EmitOutOfBounds(t *testing.T) {
	h := tenant(t, nil)
	j := runYAML(t, h, t.TempDir(), poisonJob(`[{n: 1, c: oobe}]`, "fail"), runtime.Options{}, nil)
	failed(t, h, j)
	wantWords(t, j.err, `plugin "poison" (operator m, subtask 1/1) export sluice_process at input record 1`,
		"ABI violation: emit: output range ptr=0xfffffff0 len=0x20 ends at 0x100000010, past the end of guest memory")
	if !errors.Is(j.err, plugin.ErrABI) {
		t.Errorf("errors.Is(err, ErrABI) is false")
	}
	healthy(t, h)
}

// Row 6: output larger than the limit is refused before any copy or
// allocation: the 2 MiB of zeros the guest emits are not records, yet the
// error is the output limit, not malformed output: the limit is checked
// first, on the length alone.
func TestSandbox06_OutputOverLimit(t *testing.T) {
	h := tenant(t, func(c *plugin.Config) { c.MaxOutputBytes = 1 << 20 })
	j := runYAML(t, h, t.TempDir(), poisonJob(`[{n: 1, c: huge}]`, "fail"), runtime.Options{}, nil)
	failed(t, h, j)
	wantWords(t, j.err, `plugin "poison" (operator m, subtask 1/1) export sluice_process`,
		"output limit: the call emitted 0 bytes, then 2097216 more, past the limit of 1048576 bytes per call (the max-output-bytes setting; each emit counts 64 bytes besides its records)")
	if !errors.Is(j.err, plugin.ErrOutputLimit) || errors.Is(j.err, plugin.ErrMalformedOutput) {
		t.Errorf("want ErrOutputLimit and not ErrMalformedOutput: %v", j.err)
	}
	healthy(t, h)
}

// Row 7: malformed msgpack from the guest is a decode error with the
// offset, with no huge allocation and no Go stack overflow (which would
// kill the test process: reaching the assertions is part of the proof).
// The fuzz test of the same validation is host/plugin FuzzCheckOutput.
func TestSandbox07_MalformedOutput(t *testing.T) {
	h := tenant(t, nil)
	for _, tt := range []struct{ name, word, want string }{
		{"truncated", "trun", "malformed output on port 0 from sluice_process: truncated msgpack at byte 3"},
		{"wrong types", "type", "malformed output on port 0 from sluice_process: record is not a [event_time, key, value] envelope at byte 1: event time is str"},
		{"header claiming 2^32 elements", "h232", "malformed output on port 0 from sluice_process: truncated msgpack at byte 3"},
		{"100k-deep nesting", "nest", "malformed output on port 0 from sluice_process: msgpack nested deeper than the limit at byte"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := runYAML(t, h, t.TempDir(), poisonJob(`[{n: 1}, {n: 2, c: `+tt.word+`}]`, "fail"), runtime.Options{}, nil)
			failed(t, h, j)
			wantWords(t, j.err, `plugin "poison" (operator m, subtask 1/1) export sluice_process at input record 2`, tt.want)
			if !errors.Is(j.err, plugin.ErrMalformedOutput) {
				t.Errorf("errors.Is(err, ErrMalformedOutput) is false")
			}
			if want := "{\"n\":1}\n"; j.out != want {
				t.Errorf("printed %q, want only the record before the bad one, once", j.out)
			}
		})
	}
	healthy(t, h)
}
