package checkpoint

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestChannelStateRoundTrip: channel state written as an operator's
// entries comes back in order at the same parallelism, is refused at
// another one, and counts as state of an operator the job has.
func TestChannelStateRoundTrip(t *testing.T) {
	batches := [][]ChannelBatch{
		{{Input: 0, Count: 2, Data: []byte("ab")}, {Input: 1, Count: 1, Data: []byte("c")}},
		{},
	}
	w, err := CreateCheckpoint(t.TempDir(), "job", 1)
	if err != nil {
		t.Fatal(err)
	}
	var files []SubtaskFile
	for sub, bs := range batches {
		st := SubtaskState{Operator: ChannelStateID("sum"), Subtask: sub, Parallelism: 2, MaxParallelism: 128}
		for _, b := range bs {
			st.Split = append(st.Split, AppendChannelBatch(nil, b))
		}
		f, err := w.Write(st)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := w.Publish(time.Now(), files); err != nil {
		t.Fatal(err)
	}
	r, err := Open(w.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for sub, want := range batches {
		got, err := r.ChannelState("sum", sub, 2, 128)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("subtask %d: %+v, want %+v", sub, got, want)
		}
	}
	if _, err := r.ChannelState("sum", 0, 3, 128); !errors.Is(err, ErrRescaleChannelState) {
		t.Errorf("at parallelism 3: %v", err)
	}
	if bs, err := r.ChannelState("other", 0, 3, 128); err != nil || bs != nil {
		t.Errorf("an operator without channel state: %v %v", bs, err)
	}
	if _, err := r.CheckOperators(WithChannelState([]string{"sum"}), false); err != nil {
		t.Errorf("the job has the operator: %v", err)
	}
	if _, err := r.CheckOperators(WithChannelState([]string{"total"}), false); !errors.Is(err, ErrNonRestoredState) {
		t.Errorf("the job lost the operator: %v", err)
	}
	if head, ok := ChannelStateOf(ChannelStateID("sum")); !ok || head != "sum" {
		t.Errorf("ChannelStateOf: %q %v", head, ok)
	}
	for _, bad := range [][]byte{nil, {2, 0, 0}, {1, 5, 0}, {1, 0, 9}} {
		if _, err := ParseChannelBatch(bad); err == nil {
			t.Errorf("ParseChannelBatch(%v) accepted", bad)
		}
	}
}
