package plugin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

const prefix = `plugin "script" (operator op1, subtask 1/1) export sluice_process: `

// Out-of-bounds ranges in every host call: the call fails even though the
// guest returns 0, the instance is replaced, the host does not panic.
func TestHostCallRangesRefused(t *testing.T) {
	h := newHost(t, nil)
	m := load(t, h, "script")
	const memSize = 2 * 65536 // script.wat's memory, with the input inside it
	tests := []struct {
		name string
		op   int32
		args []int32
		want string
	}{
		{"emit wraps around 2^32", opEmit, []int32{0, -16, 0x20, 1},
			"ABI violation: emit: output range ptr=0xfffffff0 len=0x20 ends at 0x100000010, past the end of guest memory (131072 bytes)"},
		{"emit past the end", opEmit, []int32{0, memSize - 4, 8, 1},
			"ABI violation: emit: output range ptr=0x1fffc len=0x8 ends at 0x20004, past the end of guest memory (131072 bytes)"},
		{"emit huge length", opEmit, []int32{0, 0, -1, 1},
			"ABI violation: emit: output range ptr=0x0 len=0xffffffff ends at 0xffffffff, past the end of guest memory (131072 bytes)"},
		{"emit negative count", opEmit, []int32{0, 0, 0, -1},
			"ABI violation: emit with a negative count -1"},
		{"emit unknown port", opEmit, []int32{7, 0, 0, 0},
			"ABI violation: emit to unknown port 7 (this instance has ports 0 to 0: 0 is the main output, port returns the others)"},
		{"emit negative port", opEmit, []int32{-1, 0, 0, 0},
			"ABI violation: emit to unknown port -1 (this instance has ports 0 to 0: 0 is the main output, port returns the others)"},
		{"port", opPort, []int32{memSize - 2, 10},
			"ABI violation: port: tag range ptr=0x1fffe len=0xa ends at 0x20008, past the end of guest memory (131072 bytes)"},
		{"port tag too long", opPort, []int32{0, abi.MaxTagLen + 1},
			"ABI violation: port: a tag of 257 bytes, longer than the limit of 256"},
		{"error", opError, []int32{-16, 0x20},
			"ABI violation: error: text range ptr=0xfffffff0 len=0x20 ends at 0x100000010, past the end of guest memory (131072 bytes)"},
		{"state_get key", opStateGet, []int32{0, -16, 0x20, 0, 0},
			"ABI violation: state_get: key range ptr=0xfffffff0 len=0x20 ends at 0x100000010, past the end of guest memory (131072 bytes)"},
		{"state_get buffer", opStateGet, []int32{0, 0, 1, memSize - 1, 2},
			"ABI violation: state_get: buffer range ptr=0x1ffff len=0x2 ends at 0x20001, past the end of guest memory (131072 bytes)"},
		{"state_put value", opStatePut, []int32{0, 0, 1, -1, 1},
			"ABI violation: state_put: value range ptr=0xffffffff len=0x1 ends at 0x100000000, past the end of guest memory (131072 bytes)"},
		{"state_del key", opStateDel, []int32{0, memSize, 1},
			"ABI violation: state_del: key range ptr=0x20000 len=0x1 ends at 0x20001, past the end of guest memory (131072 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := open(t, m, runtime.OpenContext{State: NewMemoryState()})
			out, err := (&script{}).do(tt.op, 0, tt.args...).run(op)
			pe := wantErr(t, err, prefix+tt.want)
			if !pe.Poisoned || !errors.Is(err, ErrABI) || len(out.got) != 0 {
				t.Fatalf("poisoned %v, %d emits", pe.Poisoned, len(out.got))
			}
		})
	}
}

// TestEmptyEmitsCountTowardTheLimit: emits of nothing still cost the host
// a span each, so they count toward max-output-bytes (a guest emitting
// nothing in a loop grew host memory by gigabytes within one call).
func TestEmptyEmitsCountTowardTheLimit(t *testing.T) {
	h := newHost(t, func(c *Config) { c.MaxOutputBytes = 10 * emitOverhead })
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	s := &script{}
	for i := 0; i < 11; i++ {
		s.do(opEmit, 0, 0, 0, 0, 0)
	}
	_, err := s.run(op)
	wantErr(t, err, prefix+"output limit: the call emitted 640 bytes, then 64 more, past the limit of 640 bytes per call (the max-output-bytes setting; each emit counts 64 bytes besides its records)")
}

func TestEmitOutputLimitBeforeCopy(t *testing.T) {
	h := newHost(t, func(c *Config) { c.MaxOutputBytes = 64 + emitOverhead })
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	s := &script{}
	rec := record(nil, 1, 1)
	addr := s.data(rec)
	s.do(opEmit, 0, 0, addr, int32(len(rec)), 1) // fits
	s.do(opEmit, 0, 0, 0, 100000, 1000)          // would pass 64 bytes
	inst := op.r.inst
	out, err := s.run(op)
	pe := wantErr(t, err, prefix+"output limit: the call emitted 80 bytes, then 100064 more, past the limit of 128 bytes per call (the max-output-bytes setting; each emit counts 64 bytes besides its records)")
	if !errors.Is(err, ErrOutputLimit) || pe.Poisoned || len(out.got) != 0 {
		t.Fatalf("poisoned %v, %d emits", pe.Poisoned, len(out.got))
	}
	if got := ret(t, op); got != int32(abi.StatusLimit) {
		t.Errorf("emit returned %d to the guest, want StatusLimit (%d)", got, abi.StatusLimit)
	}
	if len(inst.c.out) != len(rec) || cap(inst.c.out) >= 100000 {
		t.Errorf("the host buffered %d bytes (capacity %d): the refused emit was copied", len(inst.c.out), cap(inst.c.out))
	}
}

func TestMalformedOutput(t *testing.T) {
	h := newHost(t, nil)
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	s := &script{}
	rec := record(nil, 1, 1)
	addr := s.data(rec)
	s.do(opEmit, 0, 0, addr, int32(len(rec)), 2) // claims two records
	_, err := s.run(op)
	wantErr(t, err, prefix+"malformed output on port 0 from sluice_process: batch holds fewer records than its count at byte 16")
	if !errors.Is(err, ErrMalformedOutput) || ret(t, op) != int32(abi.StatusMalformed) {
		t.Errorf("ret %d", ret(t, op))
	}
	s = &script{}
	addr = s.data([]byte{0x93, 0xc0, 0xc0, 0xdd, 0xff, 0xff, 0xff, 0xff}) // 2^32-element array
	s.do(opEmit, 0, 0, addr, 8, 1)
	_, err = s.run(op)
	wantErr(t, err, prefix+"malformed output on port 0 from sluice_process: truncated msgpack at byte 3")
}

func TestSideOutputPorts(t *testing.T) {
	h := newHost(t, nil)
	var asked []string
	op := open(t, load(t, h, "script"), runtime.OpenContext{Port: func(tag string) int {
		asked = append(asked, tag)
		if tag == "late" {
			return 3
		}
		return -1 // nothing consumes it
	}})
	s := &script{}
	late, nobody := s.data([]byte("late")), s.data([]byte("nobody"))
	rec := record(nil, 1, 1)
	addr := s.data(rec)
	n := int32(len(rec))
	s.do(opPortEmit, 0, late, 4, addr, n, 1).
		do(opPortEmit, 0, nobody, 6, addr, n, 1).
		do(opPortEmit, 0, late, 4, addr, n, 1).
		do(opEmit, 0, 0, addr, n, 1).
		do(opPort, 0, 0, 0) // the empty tag is the main output
	out, err := s.run(op)
	if err != nil {
		t.Fatal(err)
	}
	if ret(t, op) != 0 {
		t.Errorf("port(\"\") = %d, want 0", ret(t, op))
	}
	var ports []int
	for _, e := range out.got {
		ports = append(ports, e.port)
	}
	if len(ports) != 3 || ports[0] != 3 || ports[1] != 3 || ports[2] != 0 {
		t.Errorf("emitted on engine ports %v, want [3 3 0] (the unconsumed tag dropped)", ports)
	}
	if len(asked) != 2 {
		t.Errorf("Port asked for %q: each tag once per instance", asked)
	}
	// A guest port from port() is known to emit; others are not.
	_, err = (&script{}).do(opEmit, 0, 3, 0, 0, 0).run(op)
	wantErr(t, err, prefix+"ABI violation: emit to unknown port 3 (this instance has ports 0 to 2: 0 is the main output, port returns the others)")
}

func TestStateMemoryBehaviour(t *testing.T) {
	h := newHost(t, nil)
	state := NewMemoryState()
	op := open(t, load(t, h, "script"), runtime.OpenContext{State: state})
	key := abi.AppendStr(nil, "k1")
	s := &script{}
	k := s.data(key)
	v := s.data([]byte("hello"))
	small := s.data(bytes.Repeat([]byte{0xee}, 4))
	big := s.data(bytes.Repeat([]byte{0xee}, 16))
	s.do(opStatePut, 0, 1, k, int32(len(key)), v, 5)
	if _, err := s.run(op); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := state.Get(1, key, nil); !ok || string(got) != "hello" {
		t.Fatalf("state holds %q, %v", got, ok)
	}
	// Too small: returns the length, writes nothing.
	s.cmds = nil
	s.do(opStateGet, 0, 1, k, int32(len(key)), small, 4)
	if _, err := s.run(op); err != nil {
		t.Fatal(err)
	}
	if ret(t, op) != 5 || !bytes.Equal(mem(t, op, small, 4), bytes.Repeat([]byte{0xee}, 4)) {
		t.Errorf("state_get into 4 bytes returned %d and wrote % x", ret(t, op), mem(t, op, small, 4))
	}
	// Large enough: returns the length, writes the value and no more.
	s.cmds = nil
	s.do(opStateGet, 0, 1, k, int32(len(key)), big, 16)
	if _, err := s.run(op); err != nil {
		t.Fatal(err)
	}
	if got := mem(t, op, big, 16); ret(t, op) != 5 || string(got[:5]) != "hello" || !bytes.Equal(got[5:], bytes.Repeat([]byte{0xee}, 11)) {
		t.Errorf("state_get returned %d and wrote % x", ret(t, op), got)
	}
	// Another slot, then a deleted key: absent is -1.
	for _, c := range [][]int32{{opStateGet, 2, k, int32(len(key)), big, 16}, {opStateDel, 1, k, int32(len(key))}, {opStateGet, 1, k, int32(len(key)), big, 16}} {
		s.cmds = nil
		s.do(c[0], 0, c[1:]...)
		if _, err := s.run(op); err != nil {
			t.Fatal(err)
		}
	}
	if ret(t, op) != -1 || state.Len() != 0 {
		t.Errorf("state_get after state_del = %d, %d values left", ret(t, op), state.Len())
	}
	// A slot past abi.MaxStateSlots is refused by the host functions
	// themselves, whatever the store (here host plugin run's in memory).
	s.cmds = nil
	s.do(opStatePut, 0, abi.MaxStateSlots, k, int32(len(key)), v, 5)
	if _, err := s.run(op); err == nil || !strings.Contains(err.Error(), "state_put: state slot 1024 is out of range: slots are 0 to 1023") {
		t.Errorf("state_put slot 1024: %v", err)
	}
	if state.Len() != 0 {
		t.Errorf("%d values stored by a refused put", state.Len())
	}
}

func TestStateOnUnkeyedOperator(t *testing.T) {
	h := newHost(t, nil)
	op := open(t, load(t, h, "script"), runtime.OpenContext{})
	for _, c := range []struct {
		cmd  []int32
		want string
	}{
		{[]int32{opStateGet, 0, 0, 1, 0, 0}, "keyed state: state_get on an unkeyed operator: keyed state needs a keyBy before this operator"},
		{[]int32{opStatePut, 0, 0, 1, 0, 1}, "keyed state: state_put on an unkeyed operator: keyed state needs a keyBy before this operator"},
		{[]int32{opStateDel, 0, 0, 1}, "keyed state: state_del on an unkeyed operator: keyed state needs a keyBy before this operator"},
	} {
		_, err := (&script{}).do(c.cmd[0], 0, c.cmd[1:]...).run(op)
		pe := wantErr(t, err, prefix+c.want)
		if pe.Poisoned || !errors.Is(err, ErrState) || ret(t, op) != int32(abi.StatusState) {
			t.Errorf("poisoned %v, guest got %d, want StatusState", pe.Poisoned, ret(t, op))
		}
	}
}

// No file system, empty environment, deterministic clock and random.
func TestWASIIsDeterministicAndEmpty(t *testing.T) {
	run := func() []byte {
		h := newHost(t, nil)
		op := open(t, load(t, h, "script"), runtime.OpenContext{})
		s := &script{}
		s.do(opRandom, 0, 1024, 32).do(opClock, 0, 0, 1056).do(opClock, 0, 1, 1064).
			do(opEnvironSizes, 0, 1072, 1076)
		if _, err := s.run(op); err != nil {
			t.Fatal(err)
		}
		if env := mem(t, op, 1072, 8); !bytes.Equal(env, make([]byte, 8)) {
			t.Errorf("environment: count and size % x, want none", env)
		}
		_, err := (&script{}).do(opPrestat, 0, 3, 1080).run(op)
		if err != nil || ret(t, op) != 8 { // errno badf: no preopened directory
			t.Errorf("fd_prestat_get(3) = %d, %v: want errno 8 (no file system)", ret(t, op), err)
		}
		return mem(t, op, 1024, 48)
	}
	a, b := run(), run()
	if !bytes.Equal(a, b) {
		t.Errorf("two runs differ:\n% x\n% x", a, b)
	}
	if bytes.Equal(a[:32], make([]byte, 32)) {
		t.Error("random_get wrote zeros")
	}
}

func TestPartitioner(t *testing.T) {
	h := newHost(t, nil)
	p, err := load(t, h, "partition").NewPartitioner(context.Background(), "src", "dst", 0, 2, 128, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var w abi.Writer
	for i := 0; i < 5; i++ {
		w.AppendRaw(record(abi.AppendInt(nil, int64(i)), int64(i), 1))
	}
	out := make([]int32, 5)
	if err := p.Partition(w.Buf, w.Count, 3, out); err != nil {
		t.Fatal(err)
	}
	if want := []int32{0, 1, 2, 0, 1}; !equal(out, want) {
		t.Errorf("channels %v, want %v", out, want)
	}
	err = p.Partition(w.Buf, w.Count, 7, out)
	wantErr(t, err, `plugin "partition" (edge src->dst, subtask 1/2) export sluice_partition: malformed output: emitted 4 channel indices for 5 records`)
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestKeySelector(t *testing.T) {
	h := newHost(t, nil)
	ks, err := load(t, h, "keysel").NewKeySelector(context.Background(), "src", "dst", 0, 1, 128, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Close()
	var w abi.Writer
	for i := 0; i < 3; i++ {
		w.AppendRaw(record(nil, int64(i), 1))
	}
	keys, err := ks.Keys(w.Buf, w.Count, []byte{0xff})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(keys, []byte{0xff, 0, 1, 2}) {
		t.Errorf("keys % x", keys)
	}
	ks.Close()
	_, err = ks.Keys(w.Buf, w.Count, nil)
	wantErr(t, err, `plugin "keysel" (edge src->dst, subtask 1/1) export sluice_process: the plugin instance was used after Close`)
}

func TestInspect(t *testing.T) {
	h := newHost(t, nil)
	info, err := load(t, h, "identity").Inspect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != abi.KindMap || info.KindFrom != "sluice_describe" || info.SDK != "wat" || info.Title != "identity" ||
		len(info.Outputs) != 1 || info.Outputs[0] != "late" || info.ABIVersion != 1 {
		t.Errorf("info %+v", info)
	}
	if info.Memory != (Memory{Min: 2}) || len(info.SHA256) != 64 || info.Size != len(fixture(t, "identity")) {
		t.Errorf("memory %+v sha %q size %d", info.Memory, info.SHA256, info.Size)
	}
	if len(info.Imports) != 1 || info.Imports[0] != (Import{Module: "sluice_v1", Name: "emit", Kind: "function", Signature: "(i32, i32, i32, i32) -> i32"}) {
		t.Errorf("imports %+v", info.Imports)
	}
	found := false
	for _, e := range info.Exports {
		if e.Name == "sluice_open" && e.Signature == "(i32, i32, i32, i32, i32) -> i32" && e.Kind == "function" {
			found = true
		}
	}
	if !found {
		t.Errorf("exports %+v", info.Exports)
	}
	info, err = load(t, h, "partition").Inspect(context.Background())
	if err != nil || info.Kind != abi.KindPartitioner || info.KindFrom != "exports" {
		t.Errorf("partition: %v %+v", err, info)
	}
	// describe is optional: one that answers "unsupported" describes nothing
	info, err = load(t, h, "nodescribe").Inspect(context.Background())
	if err != nil || info.Kind != abi.KindProcess || info.KindFrom != "exports" {
		t.Errorf("nodescribe: %v %+v", err, info)
	}
}

func TestTailBuffer(t *testing.T) {
	tb := newTail(8)
	tb.Write([]byte("abc"))
	if tb.String() != "abc" {
		t.Fatal(tb.String())
	}
	tb.Write([]byte("defgh"))
	tb.Write([]byte("ij"))
	if tb.String() != "cdefghij" || tb.Dropped() != 2 {
		t.Fatalf("%q dropped %d", tb.String(), tb.Dropped())
	}
	tb.Write([]byte("0123456789"))
	if tb.String() != "23456789" || tb.Dropped() != 12 {
		t.Fatalf("%q dropped %d", tb.String(), tb.Dropped())
	}
	zero := newTail(0)
	if n, err := zero.Write([]byte("x")); n != 1 || err != nil || zero.String() != "" {
		t.Fatal("a zero tail must accept and drop")
	}
	_ = binary.LittleEndian
}
