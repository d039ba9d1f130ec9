package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
// connecting) as a user's run does. steady-records/s is the same records
// over the time from the first output record to the end (either side's
// start left out), cpu-ns/rec the CPU the whole process used per input
// record (the broker's included, so the two sides compare on a loaded
// machine). make bench reports the ratios.
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
		first := watchFirst(b, c, out)
		b.ResetTimer()
		start, cpu0 := time.Now(), processCPU()
		code := run(context.Background(), []string{"run", "--progress=none", "--plugin-root", root, p}, strings.NewReader(""), &stdout, &stderr)
		end := time.Now()
		wall, cpu := end.Sub(start), processCPU()-cpu0
		b.StopTimer()
		if code != 0 {
			b.Fatalf("host run: exit %d\n%s", code, stderr.String())
		}
		b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
		reportSteady(b, first(), end)
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
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
		first := watchFirst(b, c, out)
		b.ResetTimer()
		start, cpu0 := time.Now(), processCPU()
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
		end := time.Now()
		wall, cpu := end.Sub(start), processCPU()-cpu0
		b.StopTimer()
		if produceErr != nil {
			b.Fatal(produceErr)
		}
		b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
		reportSteady(b, first(), end)
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
	})
}

// processCPU is the user and system CPU time this process has used: the
// job's and the in-process broker's, whatever else loads the machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// watchFirst watches topic out's end offsets (every 2 ms) from now on; the
// function it returns stops watching and tells when the first record
// appeared there (zero if none did).
func watchFirst(b *testing.B, c *kafkatest.Cluster, out string) func() time.Time {
	b.Helper()
	cl, err := c.Client()
	if err != nil {
		b.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithCancel(context.Background())
	seen := make(chan time.Time, 1)
	go func() {
		defer close(seen)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			ends, err := adm.ListEndOffsets(ctx, out)
			if err != nil {
				continue
			}
			var n int64
			ends.Each(func(o kadm.ListedOffset) { n += max(o.Offset, 0) })
			if n > 0 {
				seen <- time.Now()
				return
			}
		}
	}()
	return func() time.Time {
		cancel()
		t := <-seen
		cl.Close()
		return t
	}
}

// reportSteady reports steady-records/s: the input records over the time
// from the first output record to the end, which leaves out either side's
// start (for sluice compiling and instantiating the plugins, connecting;
// for both the first fetch) and, for the first output to show, one
// producer linger.
func reportSteady(b *testing.B, first, end time.Time) {
	if first.IsZero() || !end.After(first) {
		return
	}
	b.ReportMetric(float64(b.N)/end.Sub(first).Seconds(), "steady-records/s")
}
