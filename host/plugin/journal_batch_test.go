package plugin

import (
	"errors"
	"testing"
)

// batchState is a MemoryState that batches calls as the Pebble backend
// does (runtime.CallBatcher), recording what the journal asks of it.
type batchState struct {
	*MemoryState
	calls     []string
	commitErr error
}

func (b *batchState) BeginCall()        { b.calls = append(b.calls, "begin") }
func (b *batchState) CommitCall() error { b.calls = append(b.calls, "commit"); return b.commitErr }
func (b *batchState) AbortCall()        { b.calls = append(b.calls, "abort") }

// TestJournalBatchedStore: over a store that batches calls the journal
// logs nothing and reads nothing back: begin, commit and undo become the
// store's BeginCall, CommitCall and AbortCall, and a failed commit is the
// call's error.
func TestJournalBatchedStore(t *testing.T) {
	st := &batchState{MemoryState: NewMemoryState()}
	j := newJournal(st)
	j.begin()
	if err := j.Put(0, []byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := j.Delete(0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if len(j.log) != 0 {
		t.Fatalf("the journal logged %d values over a batching store", len(j.log))
	}
	if err := j.undo(); err != nil {
		t.Fatal(err)
	}
	j.begin()
	if err := j.commit(); err != nil {
		t.Fatal(err)
	}
	st.commitErr = errors.New("past the disk quota")
	j.begin()
	if err := j.commit(); err == nil || err.Error() != "past the disk quota" {
		t.Fatalf("commit: %v", err)
	}
	want := []string{"begin", "abort", "begin", "commit", "begin", "commit"}
	if len(st.calls) != len(want) {
		t.Fatalf("calls %v, want %v", st.calls, want)
	}
	for i := range want {
		if st.calls[i] != want[i] {
			t.Fatalf("calls %v, want %v", st.calls, want)
		}
	}
	// a plain store keeps the value journal
	plain := newJournal(NewMemoryState())
	plain.begin()
	if err := plain.Put(0, []byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if len(plain.log) != 1 || plain.batch != nil {
		t.Fatalf("a plain store's journal: %d entries", len(plain.log))
	}
}
