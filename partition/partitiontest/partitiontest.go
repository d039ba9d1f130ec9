// Package partitiontest runs the partition conformance kit from a Go test:
// each failed check becomes a t.Errorf.
package partitiontest

import (
	"testing"

	"github.com/sluicehq/sluice/partition"
)

// Custom runs partition.CheckCustom on user partitioner p with n channels
// and reports every failed check to t.
func Custom(t testing.TB, p partition.BatchPartitioner, keys [][]byte, n int) {
	t.Helper()
	report(t, partition.CheckCustom(p, keys, n))
}

// Strategy runs partition.CheckPartitioner on built-in strategy name and
// reports every failed check to t.
func Strategy(t testing.TB, name string, cfg partition.Config, keyHashes []int32) {
	t.Helper()
	report(t, partition.CheckPartitioner(name, cfg, keyHashes))
}

func report(t testing.TB, r partition.Report) {
	t.Helper()
	for _, f := range r.Failures() {
		t.Errorf("conformance %s: %s", f.Check, f.Detail)
	}
}
