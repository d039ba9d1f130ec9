package partitiontest_test

import (
	"testing"

	"github.com/sluicehq/sluice/partition"
	"github.com/sluicehq/sluice/partition/partitiontest"
)

func TestHelpers(t *testing.T) {
	partitiontest.Strategy(t, "HASH", partition.Config{UpstreamParallelism: 2, DownstreamParallelism: 3}, nil)
	partitiontest.Strategy(t, "RESCALE", partition.Config{UpstreamParallelism: 2, DownstreamParallelism: 5}, nil)
	partitiontest.Custom(t, partition.KeyFunc(func(key []byte, n int) int { return len(key) % n }), nil, 3)
}

func TestHelperReportsFailures(t *testing.T) {
	rec := &recorder{TB: t}
	partitiontest.Custom(rec, partition.KeyFunc(func(_ []byte, n int) int { return n }), nil, 3)
	if rec.errors == 0 {
		t.Error("an out-of-range partitioner reported no error")
	}
}

// recorder counts Errorf calls instead of failing the test.
type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.errors++ }
