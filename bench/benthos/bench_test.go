package benthosbench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// generate is the input: records like sluice's transactions preset, with
// amount uniform in [-10000, 10000] (about half > 0).
const generate = `
generate:
  count: %d
  interval: ""
  batch_size: %d
  mapping: |
    let n = counter()
    root.txnId = "t%%09d".format($n)
    root.accountId = "acct-%%04d".format(random_int(max: 999))
    root.amount = random_int(max: 20000) - 10000
    root.currency = ["EUR", "USD", "GBP"].index(random_int(max: 2))
    root.country = ["NL", "DE", "US", "FR", "GB", "ES", "IT", "BE"].index(random_int(max: 7))
    root.ts = 1700000000000 + $n
`

// filterDouble is the pipeline: the bloblang filter and the double.
const filterDouble = `
mapping: |
  root = if this.amount > 0 { this.assign({"amount": this.amount * 2}) } else { deleted() }
`

// build returns a stream of n records in batches of batch; when consume is
// nil the output is drop, else consume receives every message. Without
// process, the mapping is left out (the generator's own cost).
func build(tb testing.TB, n, batch int, process bool, consume func(*service.Message)) *service.Stream {
	tb.Helper()
	sb := service.NewStreamBuilder()
	if err := sb.SetLoggerYAML("level: NONE"); err != nil {
		tb.Fatal(err)
	}
	if err := sb.AddInputYAML(fmt.Sprintf(generate, n, batch)); err != nil {
		tb.Fatal(err)
	}
	if process {
		if err := sb.AddProcessorYAML(filterDouble); err != nil {
			tb.Fatal(err)
		}
	}
	if consume == nil {
		if err := sb.AddOutputYAML("drop: {}"); err != nil {
			tb.Fatal(err)
		}
	} else if err := sb.AddConsumerFunc(func(_ context.Context, m *service.Message) error {
		consume(m)
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	s, err := sb.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkBenthos runs generate → mapping → drop with b.N records, with
// the generator's default batch size (1) and with batches of 1024, and
// generate → drop alone (batches of 1024: what the generator costs); the
// figure is records/s (generated records over wall time, as sluice's
// BenchmarkQuickstart reports it).
func BenchmarkBenthos(b *testing.B) {
	for _, v := range []struct {
		name    string
		batch   int
		process bool
	}{{"batch1", 1, true}, {"batch1024", 1024, true}, {"generate-only-batch1024", 1024, false}} {
		b.Run(v.name, func(b *testing.B) {
			s := build(b, b.N, v.batch, v.process, nil)
			b.ResetTimer()
			t0 := time.Now()
			if err := s.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
			wall := time.Since(t0)
			b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
		})
	}
}

// The pipeline keeps the records with amount > 0 and doubles them.
func TestFilterDouble(t *testing.T) {
	const n = 2000
	var kept, bad atomic.Int64
	s := build(t, n, 16, true, func(m *service.Message) {
		v, err := m.AsStructured()
		if err != nil {
			bad.Add(1)
			return
		}
		obj := v.(map[string]any)
		amt, err := toInt(obj["amount"])
		if err != nil || amt <= 0 || amt%2 != 0 || len(obj) != 6 {
			bad.Add(1)
		}
		kept.Add(1)
	})
	if err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if bad.Load() != 0 || kept.Load() < n/3 || kept.Load() > 2*n/3 {
		t.Fatalf("kept %d of %d, %d bad", kept.Load(), n, bad.Load())
	}
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case float64:
		return int64(x), nil
	}
	return 0, fmt.Errorf("amount is %T", v)
}
