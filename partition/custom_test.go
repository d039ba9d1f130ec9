package partition

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

// batchOf builds a batch of envelopes [nil, key, {}] with int keys.
func batchOf(keys ...int64) ([]byte, int) {
	var w abi.Writer
	for _, k := range keys {
		w.Append(0, false, abi.AppendInt(nil, k), []byte{0x80})
	}
	return w.Buf, w.Count
}

// fixed returns the channels chans whatever the batch.
func fixed(chans ...int32) BatchPartitioner {
	return BatchPartitionerFunc(func(_ []byte, count, _ int, out []int32) error {
		copy(out[:count], chans)
		return nil
	})
}

func TestCustomChannelOutOfRange(t *testing.T) {
	tests := []struct {
		name  string
		chans []int32
		want  ChannelError
		text  string
	}{
		{"n itself", []int32{0, 3, 4}, ChannelError{Record: 2, Count: 3, Channel: 4, N: 4},
			"partition: CUSTOM partitioner returned channel 4 for record 2 of 3, want [0, 4)"},
		{"negative", []int32{-1, 0, 0}, ChannelError{Record: 0, Count: 3, Channel: -1, N: 4},
			"returned channel -1 for record 0 of 3, want [0, 4)"},
		{"far", []int32{0, 1 << 30, 0}, ChannelError{Record: 1, Count: 3, Channel: 1 << 30, N: 4},
			"returned channel 1073741824 for record 1 of 3"},
	}
	batch, count := batchOf(1, 2, 3)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCustom(fixed(tt.chans...), 4)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Partition(batch, count, make([]int32, count))
			var ce *ChannelError
			if !errors.As(err, &ce) || *ce != tt.want || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("Partition = %v, want %+v (%q)", err, tt.want, tt.text)
			}
		})
	}
}

func TestCustomInRange(t *testing.T) {
	c, _ := NewCustom(fixed(0, 3, 2), 4)
	batch, count := batchOf(1, 2, 3)
	out := make([]int32, count)
	if err := c.Partition(batch, count, out); err != nil || out[1] != 3 || c.Name() != NameCustom || c.N() != 4 {
		t.Errorf("Partition = %v, out %v", err, out)
	}
	if a := testing.AllocsPerRun(100, func() { _ = c.Partition(batch, count, out) }); a != 0 {
		t.Errorf("%v allocations per batch", a)
	}
}

func TestCustomErrors(t *testing.T) {
	userErr := errors.New("boom")
	failing, _ := NewCustom(BatchPartitionerFunc(func([]byte, int, int, []int32) error { return userErr }), 2)
	batch, count := batchOf(1)
	if err := failing.Partition(batch, count, make([]int32, 1)); !errors.Is(err, userErr) || !strings.Contains(err.Error(), "CUSTOM partitioner: boom") {
		t.Errorf("user error: %v", err)
	}
	ok, _ := NewCustom(fixed(0, 0), 2)
	if err := ok.Partition(batch, 2, make([]int32, 1)); err == nil || !strings.Contains(err.Error(), "out holds 1 channels for 2 records") {
		t.Errorf("short out: %v", err)
	}
	if err := ok.Partition(nil, -1, nil); err == nil {
		t.Error("negative count: no error")
	}
	if _, err := NewCustom(nil, 2); err == nil {
		t.Error("NewCustom(nil): no error")
	}
	if _, err := NewCustom(fixed(), 0); err == nil || !strings.Contains(err.Error(), "downstream parallelism 0") {
		t.Errorf("NewCustom(n=0): %v", err)
	}
}

func TestKeyFunc(t *testing.T) {
	mod := KeyFunc(func(key []byte, n int) int {
		v, _ := abi.ReadInt(key)
		return int(v) % n
	})
	c, _ := NewCustom(mod, 3)
	batch, count := batchOf(4, 5, 6)
	out := make([]int32, count)
	if err := c.Partition(batch, count, out); err != nil || out[0] != 1 || out[1] != 2 || out[2] != 0 {
		t.Errorf("Partition = %v, out %v", err, out)
	}
	// A KeyFunc result outside [0, n) keeps its full value in the error.
	big, _ := NewCustom(KeyFunc(func([]byte, int) int { return 1 << 40 }), 3)
	var ce *ChannelError
	if err := big.Partition(batch, count, out); !errors.As(err, &ce) || ce.Channel != 1<<40 || ce.Record != 0 {
		t.Errorf("Partition = %v", err)
	}
	if err := c.Partition(batch[:len(batch)-1], count, out); err == nil {
		t.Error("truncated batch: no error")
	}
}
