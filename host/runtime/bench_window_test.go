package runtime

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
)

// BenchmarkWindow measures the window operator alone: 1000 keys, event
// times rising 1 ms a record, a watermark after every batch of 1000
// records; records/s is what the operator folds and fires.
func BenchmarkWindow(b *testing.B) {
	cases := []struct {
		name string
		kind pipeline.Kind
		w    pipeline.Window
	}{
		{"tumbling-10s-max", pipeline.KindMax, pipeline.Window{Type: pipeline.WindowTumbling, Size: 10 * time.Second}},
		{"sliding-10s-2s-count", pipeline.KindCount, pipeline.Window{Type: pipeline.WindowSliding, Size: 10 * time.Second, Slide: 2 * time.Second}},
		{"session-1s-sum", pipeline.KindSum, pipeline.Window{Type: pipeline.WindowSession, Gap: time.Second}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			c.w.StartField, c.w.EndField, c.w.Time = pipeline.DefaultStartField, pipeline.DefaultEndField, pipeline.TimeEvent
			op, err := newWindowOp(&pipeline.Operator{Kind: c.kind, Field: "price", Window: &c.w}, []string{"auction"}, 1000, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := op.Open(&OpenContext{State: NewKeyedStore(128, 0, 127), Port: func(string) int { return -1 }}); err != nil {
				b.Fatal(err)
			}
			keys := make([][]byte, 1000)
			for i := range keys {
				keys[i] = abi.AppendInt(nil, int64(i))
			}
			var out discardOut
			var w abi.Writer
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; {
				w.Reset()
				for i := 0; i < 1000 && n < b.N; i, n = i+1, n+1 {
					k := keys[(n*7919)%len(keys)]
					w.Append(int64(n), true, k, enc("auction", n%1000, "price", n%97))
				}
				if err := op.Process(0, w.Buf, w.Count, &out); err != nil {
					b.Fatal(err)
				}
				if err := op.ProcessWatermark(int64(n)-1, &out); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

type discardOut struct{}

func (discardOut) Emit(int, []byte, int) error { return nil }
