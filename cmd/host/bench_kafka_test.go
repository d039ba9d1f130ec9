package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
)

// BenchmarkKafka is issue #26's topic → Wasm filter → Wasm map → topic
// against the limit, side by side in one run on the same in-process kfake
// broker: "sluice" runs configs/kafka/kafka-transactions.yaml's job
// (valid, enrich, bounded: latest, parallelism 2) through `host run`,
// in-process; "franz-go" is a plain consume → produce loop that copies
// every record of the same input, doing no work on it. Each op is one
// input record (b.N records are produced before the timer starts, into
// topics of their own per run); records/s is input records over the wall
// time, the sluice figure including the job's start (plugin compilation,
// connecting) as a user's run does. make bench reports the ratio.
func BenchmarkKafka(b *testing.B) {
	c, err := kafkatest.Start(1, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	round := 0
	// fill makes topics in and out (4 partitions each) for this run and
	// produces n transactions keyed by account to in: amounts -2..7, so
	// valid keeps about 7 in 10.
	fill := func(b *testing.B, n int) (in, out string) {
		b.Helper()
		round++
		in, out = fmt.Sprintf("in-%d", round), fmt.Sprintf("out-%d", round)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cl, err := c.Client(kgo.ProducerLinger(5 * time.Millisecond))
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		if _, err := kadm.NewClient(cl).CreateTopics(ctx, 4, 1, nil, in, out); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; {
			var rs []*kgo.Record
			for ; i < n && len(rs) < 1000; i++ {
				acct := fmt.Sprintf("ACC%04d", i%500)
				rs = append(rs, &kgo.Record{Topic: in, Key: []byte(acct), Value: fmt.Appendf(nil,
					`{"txnId":"T%08d","accountId":%q,"amount":%d,"currency":"USD","country":"DE","ts":%d}`, i, acct, i%10-2, 1700000000000+int64(i))})
			}
			if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
				b.Fatal(err)
			}
		}
		return in, out
	}

	b.Run("sluice", func(b *testing.B) {
		in, out := fill(b, b.N)
		p := filepath.Join(b.TempDir(), "job.yaml")
		job := fmt.Sprintf(`version: 1
name: kafka-bench
mode: automatic
parallelism: 2
plugins:
  valid: { path: %s }
  enrich: { path: %s, config: { bank: NBI } }
operators:
  - id: txns
    source: { type: kafka, brokers: %q, topics: [%s], bounded: latest }
  - id: valid
    filter: valid
  - id: enriched
    map: enrich
  - id: out
    sink: { type: kafka, brokers: %q, topic: %s, key-field: accountId }
`, filepath.Join(root, "plugins", "valid", "valid.wasm"), filepath.Join(root, "plugins", "enrich", "enrich.wasm"),
			strings.Join(c.Addrs(), ","), in, strings.Join(c.Addrs(), ","), out)
		if err := os.WriteFile(p, []byte(job), 0o644); err != nil {
			b.Fatal(err)
		}
		var stdout, stderr strings.Builder
		b.ResetTimer()
		start := time.Now()
		code := run(context.Background(), []string{"run", "--progress=none", "--plugin-root", root, p}, strings.NewReader(""), &stdout, &stderr)
		wall := time.Since(start)
		b.StopTimer()
		if code != 0 {
			b.Fatalf("host run: exit %d\n%s", code, stderr.String())
		}
		b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
	})

	b.Run("franz-go", func(b *testing.B) {
		in, out := fill(b, b.N)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cl, err := c.Client(kgo.ConsumeTopics(in), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		b.ResetTimer()
		start := time.Now()
		var produceErr error
		for seen := 0; seen < b.N; {
			fs := cl.PollFetches(ctx)
			if errs := fs.Errors(); len(errs) > 0 {
				b.Fatal(errs[0].Err)
			}
			fs.EachRecord(func(r *kgo.Record) {
				seen++
				cl.Produce(ctx, &kgo.Record{Topic: out, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}, func(_ *kgo.Record, err error) {
					if err != nil && produceErr == nil {
						produceErr = err
					}
				})
			})
		}
		if err := cl.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		b.StopTimer()
		if produceErr != nil {
			b.Fatal(produceErr)
		}
		b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
	})
}
