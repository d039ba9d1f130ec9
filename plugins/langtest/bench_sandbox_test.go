package langtest

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// BenchmarkSandbox measures what the host's sandbox costs the example
// plugins: each language's valid filter (named by the language: go, c,
// rust, as) and double filter+map (double-go, ...) on batches of 1024
// transactions, once through a Host as it runs (DefaultConfig: fuel
// metering, its budget in slices through the refuel import) and once
// through a Host with Interruption "none" (no metering: a call cannot be
// stopped). The two batches alternate in one loop, each first every other
// round, so that both see the machine at the same moment. ns/record is the
// metered host's, per input record; unmetered-ns/record the other's;
// x-unmetered their ratio (ns/op is both batches together). The output
// check is on in both: it is part of the sandbox, but not of what this
// compares. host/plugin/fuel's BenchmarkOverhead measures the same on a
// hand-written WAT filter, whose loops have no calls.
func BenchmarkSandbox(b *testing.B) {
	w := langBatch(1024)
	root := repoRoot(&testing.T{})
	ctx := context.Background()
	open := func(b *testing.B, interruption, path string) runtime.Operator {
		cfg := plugin.DefaultConfig()
		cfg.Interruption = interruption
		h, err := plugin.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { h.Close(ctx) })
		return openBench(b, h, path)
	}
	for _, op := range []string{"valid", "double"} {
		for _, lang := range append([]string{"go"}, languages...) {
			name := lang
			if op != "valid" {
				name = op + "-" + lang
			}
			b.Run(name, func(b *testing.B) {
				path := modulePath(root, op, lang)
				metered, unmetered := open(b, plugin.InterruptFuel, path), open(b, plugin.InterruptNone, path)
				b.ResetTimer()
				var tm, tu time.Duration
				run := func(op runtime.Operator, total *time.Duration) {
					t0 := time.Now()
					if err := op.Process(0, w.Buf, w.Count, discard{}); err != nil {
						b.Fatal(err)
					}
					*total += time.Since(t0)
				}
				for i := 0; i < b.N; i++ {
					if i%2 == 0 { // each goes first every other round
						run(metered, &tm)
						run(unmetered, &tu)
					} else {
						run(unmetered, &tu)
						run(metered, &tm)
					}
				}
				records := float64(b.N * w.Count)
				b.ReportMetric(float64(tm.Nanoseconds())/records, "ns/record")
				b.ReportMetric(float64(tu.Nanoseconds())/records, "unmetered-ns/record")
				b.ReportMetric(float64(tm)/float64(tu), "x-unmetered")
			})
		}
	}
}
