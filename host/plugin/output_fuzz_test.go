package plugin

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

// Row 7 of the sandbox brief: malformed msgpack from a guest is a decode
// error with its offset, never a huge allocation nor a Go stack overflow
// (which would kill the whole process). These run the host's output
// validation (checkOutput) as emit does before copying anything.

func malformedNested(depth int) []byte {
	b := append([]byte{0x93, 0xc0, 0xc0}, bytes.Repeat([]byte{0x91}, depth)...)
	return append(b, 0xc0)
}

func TestGuestOutputTruncated(t *testing.T) {
	err := checkOutput(outRecords, []byte{0x93, 0xc0, 0xc0, 0x82, 0xa1, 'a'}, 1)
	wantDecodeErr(t, err, abi.ErrTruncated, "truncated msgpack at byte 3") // the map that runs out
	err = checkOutput(outRecords, []byte{0x93, 0xc0, 0xc0, 0xc0}, 2)
	wantDecodeErr(t, err, abi.ErrCount, "batch holds fewer records than its count at byte 4")
}

func TestGuestOutputWrongTypes(t *testing.T) {
	err := checkOutput(outRecords, []byte{0x93, 0xa4, 't', 'i', 'm', 'e', 0xc0, 0xc0}, 1)
	wantDecodeErr(t, err, abi.ErrEnvelope, "record is not a [event_time, key, value] envelope at byte 1: event time is str")
	err = checkOutput(outRecords, []byte{0x92, 0xc0, 0xc0}, 1)
	wantDecodeErr(t, err, abi.ErrEnvelope, "record is not a [event_time, key, value] envelope at byte 0")
	err = checkOutput(outValues, []byte{0xc1}, 1)
	wantDecodeErr(t, err, abi.ErrInvalid, "value 1 of 1: invalid msgpack byte at byte 0")
	if err := checkOutput(outChannels, []byte{1, 2, 3}, 1); err == nil || !strings.Contains(err.Error(), "3 bytes for 1 channel indices, want 4") {
		t.Errorf("channels: %v", err)
	}
}

func TestGuestOutputHeaderClaims2To32Elements(t *testing.T) {
	for _, hdr := range [][]byte{
		{0xdd, 0xff, 0xff, 0xff, 0xff}, // array32 of 2^32-1
		{0xdf, 0xff, 0xff, 0xff, 0xff}, // map32 of 2^32-1 pairs
		{0xdb, 0xff, 0xff, 0xff, 0xff}, // str32 of 2^32-1 bytes
		{0xc6, 0xff, 0xff, 0xff, 0xff}, // bin32
	} {
		b := append([]byte{0x93, 0xc0, 0xc0}, hdr...)
		allocs := testing.AllocsPerRun(20, func() { _ = checkOutput(outRecords, b, 1) })
		wantDecodeErr(t, checkOutput(outRecords, b, 1), abi.ErrTruncated, "truncated msgpack at byte 3")
		if allocs > 2 {
			t.Errorf("header % x: %.0f allocations: the claimed length must never be allocated", hdr, allocs)
		}
	}
}

func TestGuestOutputDeepNesting(t *testing.T) {
	b := malformedNested(100_000)
	err := checkOutput(outRecords, b, 1)
	wantDecodeErr(t, err, abi.ErrTooDeep, "msgpack nested deeper than the limit at byte")
	if ok := malformedNested(abi.MaxDepth - 1); checkOutput(outRecords, ok, 1) != nil {
		t.Errorf("nesting within the limit refused: %v", checkOutput(outRecords, ok, 1))
	}
}

func wantDecodeErr(t *testing.T, err, is error, text string) {
	t.Helper()
	var de *abi.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, is) {
		t.Fatalf("error %v (%T), want a *abi.DecodeError wrapping %v", err, err, is)
	}
	if !strings.Contains(err.Error(), text) {
		t.Errorf("error %q lacks %q", err, text)
	}
}

// FuzzCheckOutput feeds arbitrary bytes as a guest's emitted output through
// the host's emit: the range check, the output limit and the validation
// (Config.CheckOutput) of a live instance. It must never panic or hang;
// what it accepts must be exactly count well-formed records, copied whole;
// what it refuses fails the call with a malformed-output error.
func FuzzCheckOutput(f *testing.F) {
	for _, seed := range [][]byte{
		{0x93, 0xc0, 0xc0, 0x80},
		{0x93, 0xc0, 0xc0, 0x82, 0xa1, 'a'},
		{0x93, 0xc0, 0xc0, 0xdd, 0xff, 0xff, 0xff, 0xff},
		malformedNested(200),
		record([]byte{0xa1, 'k'}, 1, 2),
	} {
		f.Add(seed, uint16(1))
	}
	h := newHost(f, nil)
	m := load(f, h, "identity")
	in, err := m.instantiate(f.Context(), target{operator: "fuzz"}, env{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(in.close)
	const at = 65536
	var mu sync.Mutex
	f.Fuzz(func(t *testing.T, b []byte, count uint16) {
		if len(b) > 65536 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !in.mem.Write(at, b) {
			t.Fatalf("write %d bytes into guest memory", len(b))
		}
		in.c.reset(abi.ExportProcess, outRecords)
		st := in.emit(0, at, uint32(len(b)), int32(count))
		valid := checkOutput(outRecords, b, int(count)) == nil
		switch {
		case st == abi.StatusOK && !valid:
			t.Fatalf("emit accepted %d bytes that are not %d records", len(b), count)
		case st == abi.StatusOK && (!bytes.Equal(in.c.out, b) || in.c.count != int(count)):
			t.Fatalf("emit accepted but copied %d bytes, %d records", len(in.c.out), in.c.count)
		case st != abi.StatusOK && valid:
			t.Fatalf("emit refused %d valid records: status %d, %v", count, st, in.c.refusal)
		case st != abi.StatusOK && !errors.Is(in.c.refusal, ErrMalformedOutput):
			t.Fatalf("refused with %v, want a malformed-output error", in.c.refusal)
		}
	})
}
