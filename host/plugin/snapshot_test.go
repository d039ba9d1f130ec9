package plugin

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/runtime"
)

// opstateOperator opens testdata/opstate.wat as subtask sub of par through
// a Set, as the engine gets it, and feeds it n records.
func opstateOperator(t *testing.T, h *Host, sub, par int, n int) StatefulOperator {
	t.Helper()
	m := load(t, h, "opstate")
	s := &Set{Modules: map[string]*Module{"opstate": m}}
	op, err := s.Operator("count", "opstate", sub)
	if err != nil {
		t.Fatal(err)
	}
	so, ok := op.(StatefulOperator)
	if !ok {
		t.Fatalf("Set.Operator of a plugin exporting %s gave a %T, want a StatefulOperator", abi.ExportSnapshot, op)
	}
	if err := so.Open(&runtime.OpenContext{Operator: "count", Subtask: sub, Parallelism: par, MaxParallelism: 128}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { so.Close(nil) })
	feed(t, so.Operator, n)
	return so
}

func feed(t *testing.T, op *Operator, n int) {
	t.Helper()
	var batch []byte
	for i := 0; i < n; i++ {
		batch = append(batch, record(nil, int64(i), 1)...)
	}
	if err := op.Process(0, batch, n, &sink{}); err != nil {
		t.Fatal(err)
	}
}

// countOf reads the one element opstate snapshots: a bin of 8 LE bytes.
func countOf(t *testing.T, st checkpoint.SubtaskState) int64 {
	t.Helper()
	if len(st.Split) != 1 || len(st.Split[0]) != 10 || st.Split[0][0] != 0xc4 || st.Split[0][1] != 8 {
		t.Fatalf("snapshot = %x, want one element: a msgpack bin of 8 bytes", st.Split)
	}
	return int64(binary.LittleEndian.Uint64(st.Split[0][2:]))
}

func TestOperatorStateSnapshotRestore(t *testing.T) {
	h := newHost(t, nil)
	a := opstateOperator(t, h, 0, 2, 3)
	st, err := a.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := countOf(t, st); got != 3 {
		t.Fatalf("count after 3 records = %d", got)
	}
	// the snapshot leaves the state as it was: 2 more make 5
	feed(t, a.Operator, 2)
	st, err = a.SnapshotState(2)
	if err != nil {
		t.Fatal(err)
	}
	if got := countOf(t, st); got != 5 {
		t.Fatalf("count after 5 records = %d", got)
	}

	// a fresh instance given that element, then 4 records: 9
	b := opstateOperator(t, h, 0, 2, 0)
	if err := b.RestoreState(checkpoint.Restore{Split: st.Split}); err != nil {
		t.Fatal(err)
	}
	feed(t, b.Operator, 4)
	st2, err := b.SnapshotState(3)
	if err != nil {
		t.Fatal(err)
	}
	if got := countOf(t, st2); got != 9 {
		t.Fatalf("restored 5, then 4 records: count = %d", got)
	}

	// a rescale to 1 gives one subtask both elements: it merges them
	c := opstateOperator(t, h, 0, 1, 1)
	if err := c.RestoreState(checkpoint.Restore{Split: [][]byte{st.Split[0], st2.Split[0]}}); err != nil {
		t.Fatal(err)
	}
	st3, err := c.SnapshotState(4)
	if err != nil {
		t.Fatal(err)
	}
	if got := countOf(t, st3); got != 1+5+9 {
		t.Fatalf("1 record, restored 5 and 9: count = %d", got)
	}
}

func TestOperatorStateRestoreRefusesBadElement(t *testing.T) {
	h := newHost(t, nil)
	op := opstateOperator(t, h, 1, 3, 0)
	good := append([]byte{0xc4, 8}, make([]byte, 8)...)
	err := op.RestoreState(checkpoint.Restore{Split: [][]byte{good, {0xc0}}})
	want := `element 2 of 2: plugin "opstate" (operator count, subtask 2/3) export sluice_restore: plugin returned status -1 (malformed input)`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant: %s", err, want)
	}
	err = op.RestoreState(checkpoint.Restore{Union: [][]byte{good}})
	if err == nil || !strings.Contains(err.Error(), "holds 1 union elements and 0 committables for a plugin") {
		t.Fatalf("union elements: error = %v", err)
	}
}

// A snapshot that fails is an error naming the plugin, operator and
// subtask (the engine declines the checkpoint with it); after a trap the
// operator goes on with a fresh instance.
func TestOperatorStateSnapshotFailures(t *testing.T) {
	h := newHost(t, func(c *Config) { c.MemoryLimitPages = 4 })
	for _, tt := range []struct {
		records  int
		want     string
		poisoned bool
	}{
		{7, `plugin "opstate" (operator count, subtask 1/2) export sluice_snapshot: plugin returned status -3 (user error): no snapshot at seven`, false},
		{13, `plugin "opstate" (operator count, subtask 1/2) export sluice_snapshot: wasm trap: unreachable`, true},
		{99, `plugin "opstate" (operator count, subtask 1/2) export sluice_snapshot: output limit: the snapshot emitted 240268 bytes, then 60067 more, past the limit of 256 KiB for a plugin's operator state (the instance's memory limit, the memory-pages setting; each emit counts 64 bytes besides its elements)`, false},
	} {
		op := opstateOperator(t, h, 0, 2, tt.records)
		_, err := op.SnapshotState(5)
		pe := wantErr(t, err, tt.want)
		if pe.Poisoned != tt.poisoned {
			t.Errorf("%d records: Poisoned = %v", tt.records, pe.Poisoned)
		}
		feed(t, op.Operator, 1) // the operator goes on
	}
}

// A plugin without the exports is no Snapshotter: ABI v1 as before.
func TestOperatorWithoutStateExports(t *testing.T) {
	h := newHost(t, nil)
	s := &Set{Modules: map[string]*Module{"identity": load(t, h, "identity")}}
	op, err := s.Operator("id", "identity", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := op.(runtime.Snapshotter); ok {
		t.Fatalf("%T is a runtime.Snapshotter", op)
	}
}

func TestLoadChecksOperatorStateExports(t *testing.T) {
	h := newHost(t, nil)
	for name, problems := range map[string][]string{
		"snapbad": {
			"export sluice_snapshot has signature (i32) -> i32; ABI v1 requires () -> i32",
			"export sluice_restore has signature (i32, i32) -> (); ABI v1 requires (i32, i32) -> i32",
		},
		"snaphalf": {
			"exports sluice_snapshot without sluice_restore (i32, i32) -> i32: operator state needs both (one writes it into a checkpoint, the other reads it back)",
		},
	} {
		_, err := h.Load(context.Background(), name, fixture(t, name))
		wantLoadErr(t, err, problems...)
	}
}
