package plugin

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
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
