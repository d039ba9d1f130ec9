package checkpoint

import (
	"bytes"
	"testing"

	"github.com/sluicehq/sluice/partition"
)

// testdata/v1/job/chk-3 is a checkpoint written by the format-1 code
// (writeCheckpoint(t, "testdata/v1", 3, 2, 128) before format 2): it must
// restore, at its own parallelism and rescaled, for as long as this build
// claims to read format 1.
func TestRestoresFormat1(t *testing.T) {
	r, skipped, err := Latest("testdata/v1/job")
	if err != nil || len(skipped) > 0 {
		t.Fatalf("Latest: %v %v", err, skipped)
	}
	if r.Meta.ID != 3 {
		t.Fatalf("id %d", r.Meta.ID)
	}
	for _, p := range []int{1, 2, 3} {
		for sub := range p {
			got, err := r.Restore("sum", sub, p, 128)
			if err != nil {
				t.Fatal(err)
			}
			start, end := partition.KeyGroupRange(128, p, sub)
			for kg := start; kg <= end; kg++ {
				if want := kgContent("sum", kg); !bytes.Equal(got.KeyGroups[kg], want) {
					t.Fatalf("p %d subtask %d key group %d: %q, want %q", p, sub, kg, got.KeyGroups[kg], want)
				}
			}
			if len(got.Union) != 2 {
				t.Fatalf("union %q", got.Union)
			}
		}
	}
}
