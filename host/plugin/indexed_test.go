package plugin

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

// A guest that exports sluice_process_indexed gets every batch the host
// can index with abi.AppendIndex's index written after it, 4-byte
// aligned, in the same buffer; a batch that cannot be indexed goes to
// sluice_process, whose scanner answers it.
func TestIndexedProcessGetsTheBatchIndex(t *testing.T) {
	h := newHost(t, nil)
	m := load(t, h, "indexed")
	op := m.NewOperator(context.Background(), "ix", nil)
	if err := op.Open(&runtime.OpenContext{Parallelism: 1, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	defer op.Close(nil)
	var w abi.Writer
	for i := int64(0); i < 50; i++ {
		w.AppendRaw(record(abi.AppendStr(nil, "k"), i, i-25))
	}
	want, err := abi.AppendIndex(nil, w.Buf, w.Count)
	if err != nil {
		t.Fatal(err)
	}
	out := &sink{}
	if err := op.Process(0, w.Buf, w.Count, out); err != nil {
		t.Fatal(err)
	}
	if len(out.got) != 1 || !bytes.Equal(out.got[0].buf, w.Buf) {
		t.Fatalf("output %+v, want the batch unchanged", out.got)
	}
	if c, p := global(t, op, "indexed_calls"), global(t, op, "plain_calls"); c != 1 || p != 0 {
		t.Fatalf("%d indexed and %d plain calls, want 1 and 0", c, p)
	}
	bp, bl := int(global(t, op, "batch_ptr")), int(global(t, op, "batch_len"))
	ip, il := int(global(t, op, "index_ptr")), int(global(t, op, "index_len"))
	if bl != len(w.Buf) || !bytes.Equal(mem(t, op, int32(bp), bl), w.Buf) {
		t.Fatalf("the batch in guest memory differs")
	}
	if ip%abi.IndexAlign != 0 || ip < bp+bl || ip >= bp+bl+abi.IndexAlign {
		t.Fatalf("index at %d, want the first multiple of %d from %d", ip, abi.IndexAlign, bp+bl)
	}
	if il != len(want) || !bytes.Equal(mem(t, op, int32(ip), il), want) {
		t.Fatalf("the index in guest memory (%d bytes) is not abi.AppendIndex's (%d bytes)", il, len(want))
	}

	// A malformed batch: no index, the plain export answers.
	bad := append(append([]byte(nil), w.Buf...), 0xc1)
	// (this guest passes it on, and the host refuses its output)
	if err := op.Process(0, bad, w.Count+1, &sink{}); err == nil || !strings.Contains(err.Error(), "export sluice_process:") {
		t.Fatalf("a malformed batch: %v, want the plain call's failure", err)
	}
	if c, p := global(t, op, "indexed_calls"), global(t, op, "plain_calls"); c != 1 || p != 1 {
		t.Fatalf("after a malformed batch: %d indexed and %d plain calls, want 1 and 1", c, p)
	}
}
