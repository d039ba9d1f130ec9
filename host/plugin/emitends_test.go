package plugin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

// emit_ends (abi.ImportEmitEnds): the host checks each record against its
// end, and refuses ends that disagree with the records, ends outside
// memory and ends where the output is not records.
func TestEmitEnds(t *testing.T) {
	h := newHost(t, nil)
	m := load(t, h, "identity")
	in, err := m.instantiate(t.Context(), target{operator: "ends"}, env{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.close()
	batch := filterBatch(5)
	var ends []byte
	rd := abi.NewReader(batch.Buf, batch.Count)
	for rd.Next() {
		ends = binary.LittleEndian.AppendUint32(ends, uint32(rd.Offset()))
	}
	const at, endsAt = 65536, 65536 + 32768
	emit := func(b, e []byte, count int32) abi.Status {
		t.Helper()
		if !in.mem.Write(at, b) || !in.mem.Write(endsAt, e) {
			t.Fatal("write into guest memory")
		}
		in.c.reset(abi.ExportProcess, outRecords)
		return in.emitEnds(0, at, uint32(len(b)), count, endsAt)
	}
	if st := emit(batch.Buf, ends, int32(batch.Count)); st != abi.StatusOK || string(in.c.out) != string(batch.Buf) || in.c.count != batch.Count {
		t.Fatalf("good ends: status %d, %d bytes, %d records, %v", st, len(in.c.out), in.c.count, in.c.refusal)
	}
	// the second record's end one byte early: refused, nothing copied
	bad := append([]byte(nil), ends...)
	binary.LittleEndian.PutUint32(bad[4:], binary.LittleEndian.Uint32(bad[4:])-1)
	if st := emit(batch.Buf, bad, int32(batch.Count)); st != abi.StatusMalformed || len(in.c.out) != 0 ||
		!errors.Is(in.c.refusal, ErrMalformedOutput) || !errors.Is(in.c.refusal, abi.ErrEnds) ||
		!strings.Contains(in.c.refusal.Error(), "record 1 ends at byte") {
		t.Fatalf("wrong ends: status %d, %d bytes out, %v", st, len(in.c.out), in.c.refusal)
	}
	// good ends of a batch that is not count records: the batch's error
	if st := emit(batch.Buf[:len(batch.Buf)-1], ends, int32(batch.Count)); st != abi.StatusMalformed || errors.Is(in.c.refusal, abi.ErrEnds) {
		t.Fatalf("a cut batch: status %d, %v", st, in.c.refusal)
	}
	// ends past the end of memory
	in.c.reset(abi.ExportProcess, outRecords)
	if st := in.emitEnds(0, at, uint32(len(batch.Buf)), int32(batch.Count), in.mem.Size()-4); st != abi.StatusHost || in.c.violation == nil ||
		!strings.Contains(in.c.violation.Error(), "emit_ends") {
		t.Fatalf("ends out of range: status %d, %v", st, in.c.violation)
	}
	// a partitioner's channel indices have no record ends
	in.c.reset(abi.ExportPartition, outChannels)
	if st := in.emitEnds(0, at, 4, 1, endsAt); st != abi.StatusHost || in.c.violation == nil ||
		!strings.Contains(in.c.violation.Error(), "not records") {
		t.Fatalf("emit_ends from a partitioner: status %d, %v", st, in.c.violation)
	}
}

// endsOut is a runtime.EndsCollector that keeps what it is given.
type endsOut struct {
	bufs  [][]byte
	ends  [][]uint32 // decoded; nil for an Emit without ends
	count []int
}

var _ runtime.EndsCollector = (*endsOut)(nil)

func (o *endsOut) Emit(port int, buf []byte, count int) error {
	return o.EmitEnds(port, buf, count, nil)
}

func (o *endsOut) EmitEnds(port int, buf []byte, count int, ends []byte) error {
	o.bufs = append(o.bufs, append([]byte(nil), buf...))
	var e []uint32
	for i := 0; i+4 <= len(ends); i += 4 {
		e = append(e, binary.LittleEndian.Uint32(ends[i:]))
	}
	o.ends = append(o.ends, e)
	o.count = append(o.count, count)
	return nil
}

// The ends a guest gave, once checked, reach the collector with the
// records of their emit (so a key-by reads only the records' heads); an
// emit without ends, or ends the host did not check, arrive as a plain
// Emit.
func TestEmitEndsReachTheCollector(t *testing.T) {
	batch := filterBatch(5)
	var ends []byte
	var want []uint32
	rd := abi.NewReader(batch.Buf, batch.Count)
	for rd.Next() {
		ends = binary.LittleEndian.AppendUint32(ends, uint32(rd.Offset()))
		want = append(want, uint32(rd.Offset()))
	}
	for _, check := range []bool{true, false} {
		h := newHost(t, func(c *Config) { c.CheckOutput = check })
		m := load(t, h, "identity")
		in, err := m.instantiate(t.Context(), target{operator: "ends"}, env{})
		if err != nil {
			t.Fatal(err)
		}
		const at, endsAt = 65536, 65536 + 32768
		var sub []byte // the ends of records 2 to 4, from the start of record 2
		for _, e := range want[2:5] {
			sub = binary.LittleEndian.AppendUint32(sub, e-want[1])
		}
		if !in.mem.Write(at, batch.Buf) || !in.mem.Write(endsAt, ends) || !in.mem.Write(endsAt+64, sub) {
			t.Fatal("write into guest memory")
		}
		in.c.reset(abi.ExportProcess, outRecords)
		if in.emitEnds(0, at, uint32(len(batch.Buf)), int32(batch.Count), endsAt) != abi.StatusOK ||
			in.emit(0, at, uint32(len(batch.Buf)), int32(batch.Count)) != abi.StatusOK ||
			in.emitEnds(0, at+want[1], want[4]-want[1], 3, endsAt+64) != abi.StatusOK { // records 2 to 4
			t.Fatalf("emits refused: %v %v", in.c.refusal, in.c.violation)
		}
		var out endsOut
		if err := in.deliver(&out); err != nil {
			t.Fatal(err)
		}
		in.close()
		if len(out.bufs) != 3 {
			t.Fatalf("check %v: %d emits delivered, want 3", check, len(out.bufs))
		}
		for i, b := range out.bufs {
			wantBuf, wantCount, wantEnds := batch.Buf, batch.Count, want
			if i == 2 {
				wantBuf, wantCount = batch.Buf[want[1]:want[4]], 3
				wantEnds = []uint32{want[2] - want[1], want[3] - want[1], want[4] - want[1]}
			}
			if string(b) != string(wantBuf) || out.count[i] != wantCount {
				t.Fatalf("check %v: emit %d delivered %d records of % x", check, i, out.count[i], b)
			}
			withEnds := check && i != 1
			if got := out.ends[i]; withEnds != (got != nil) || (withEnds && fmt.Sprint(got) != fmt.Sprint(wantEnds)) {
				t.Fatalf("check %v: emit %d delivered ends %v, want %v (ends expected: %v)", check, i, got, want, withEnds)
			}
		}
	}
}
