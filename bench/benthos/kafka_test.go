package benthosbench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Benthos's own Kafka connector, kafka_franz, lives in Redpanda Connect,
// which this project does not use (its licence); the Benthos core module
// has no Kafka input or output. The Kafka side-by-side therefore runs
// Benthos's pipeline (a stream, a bloblang mapping, its batching and
// acknowledgement) between a franz-go input and output registered here
// through Benthos's public plugin API, doing what kafka_franz does on the
// hot path: poll fetches into a batch of messages, and produce a batch with
// each message's key from an interpolated string, waiting for the acks.
// Unlike kafka_franz it does not commit offsets to a group.

func init() {
	in := service.NewConfigSpec().
		Field(service.NewStringListField("seed_brokers")).
		Field(service.NewStringField("topic")).
		Field(service.NewIntField("count"))
	if err := service.RegisterBatchInput("franz_bench", in, func(conf *service.ParsedConfig, _ *service.Resources) (service.BatchInput, error) {
		brokers, err := conf.FieldStringList("seed_brokers")
		if err != nil {
			return nil, err
		}
		topic, err := conf.FieldString("topic")
		if err != nil {
			return nil, err
		}
		n, err := conf.FieldInt("count")
		if err != nil {
			return nil, err
		}
		return &franzIn{brokers: brokers, topic: topic, left: n}, nil
	}); err != nil {
		panic(err)
	}
	out := service.NewConfigSpec().
		Field(service.NewStringListField("seed_brokers")).
		Field(service.NewStringField("topic")).
		Field(service.NewInterpolatedStringField("key")).
		Field(service.NewIntField("max_in_flight").Default(10)) // kafka_franz's default
	if err := service.RegisterBatchOutput("franz_bench", out, func(conf *service.ParsedConfig, _ *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
		var pol service.BatchPolicy
		brokers, err := conf.FieldStringList("seed_brokers")
		if err != nil {
			return nil, pol, 0, err
		}
		topic, err := conf.FieldString("topic")
		if err != nil {
			return nil, pol, 0, err
		}
		key, err := conf.FieldInterpolatedString("key")
		if err != nil {
			return nil, pol, 0, err
		}
		inflight, err := conf.FieldInt("max_in_flight")
		if err != nil {
			return nil, pol, 0, err
		}
		return &franzOut{brokers: brokers, topic: topic, key: key}, pol, inflight, nil
	}); err != nil {
		panic(err)
	}
}

// franzIn reads count records of topic from its start, then ends.
type franzIn struct {
	brokers []string
	topic   string
	left    int
	cl      *kgo.Client
}

func (f *franzIn) Connect(context.Context) error {
	if f.cl != nil {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.brokers...), kgo.ConsumeTopics(f.topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	f.cl = cl
	return err
}

func (f *franzIn) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	if f.left <= 0 {
		return nil, nil, service.ErrEndOfInput
	}
	for {
		fs := f.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return nil, nil, errs[0].Err
		}
		batch := make(service.MessageBatch, 0, fs.NumRecords())
		fs.EachRecord(func(r *kgo.Record) {
			m := service.NewMessage(r.Value)
			m.MetaSetMut("kafka_key", string(r.Key))
			batch = append(batch, m)
		})
		if len(batch) == 0 {
			continue
		}
		f.left -= len(batch)
		return batch, func(context.Context, error) error { return nil }, nil
	}
}

func (f *franzIn) Close(context.Context) error {
	if f.cl != nil {
		f.cl.Close()
	}
	return nil
}

// franzOut produces each batch to topic and waits for the brokers.
type franzOut struct {
	brokers []string
	topic   string
	key     *service.InterpolatedString
	cl      *kgo.Client
}

func (f *franzOut) Connect(context.Context) error {
	if f.cl != nil {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.brokers...))
	f.cl = cl
	return err
}

func (f *franzOut) WriteBatch(ctx context.Context, b service.MessageBatch) error {
	rs := make([]*kgo.Record, 0, len(b))
	for _, m := range b {
		v, err := m.AsBytes()
		if err != nil {
			return err
		}
		k, err := f.key.TryString(m)
		if err != nil {
			return err
		}
		rs = append(rs, &kgo.Record{Topic: f.topic, Key: []byte(k), Value: v})
	}
	return f.cl.ProduceSync(ctx, rs...).FirstErr()
}

func (f *franzOut) Close(context.Context) error {
	if f.cl != nil {
		f.cl.Close()
	}
	return nil
}

// validEnrich is sluice's BenchmarkKafka job as one bloblang mapping:
// valid keeps amount > 0, enrich sets bank: NBI.
const validEnrich = `
mapping: |
  root = if this.amount > 0 { this.assign({"bank": "NBI"}) } else { deleted() }
`

// fillKafka makes topics in and out (4 partitions each) on the broker and
// produces n transactions to in, as sluice's BenchmarkKafka does (keyed by
// account, amounts -2..7: about 7 in 10 kept).
func fillKafka(tb testing.TB, addrs []string, in, out string, n int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		tb.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopics(ctx, 4, 1, nil, in, out); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; {
		var rs []*kgo.Record
		for ; i < n && len(rs) < 1000; i++ {
			acct := fmt.Sprintf("ACC%04d", i%500)
			rs = append(rs, &kgo.Record{Topic: in, Key: []byte(acct), Value: fmt.Appendf(nil,
				`{"txnId":"T%08d","accountId":%q,"amount":%d,"currency":"USD","country":"DE","ts":%d}`, i, acct, i%10-2, 1700000000000+int64(i))})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			tb.Fatal(err)
		}
	}
}

// kafkaStream is topic in → the mapping → topic out, reading n records.
func kafkaStream(tb testing.TB, addrs []string, in, out string, n int) *service.Stream {
	tb.Helper()
	sb := service.NewStreamBuilder()
	if err := sb.SetLoggerYAML("level: NONE"); err != nil {
		tb.Fatal(err)
	}
	if err := sb.AddInputYAML(fmt.Sprintf("franz_bench: {seed_brokers: [%q], topic: %q, count: %d}", addrs[0], in, n)); err != nil {
		tb.Fatal(err)
	}
	if err := sb.AddProcessorYAML(validEnrich); err != nil {
		tb.Fatal(err)
	}
	if err := sb.AddOutputYAML(fmt.Sprintf(`franz_bench: {seed_brokers: [%q], topic: %q, key: '${! json("accountId") }'}`, addrs[0], out)); err != nil {
		tb.Fatal(err)
	}
	s, err := sb.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkBenthosKafka is sluice's BenchmarkKafka on Benthos: b.N
// transactions produced to a topic of an in-process kfake broker before
// the timer starts, then topic → bloblang filter + enrich → topic through
// a Benthos stream (franz-go input and output, see above); records/s is
// input records over the wall time, the stream's start included, and
// cpu-ns/rec the CPU the whole process used per input record (the
// broker's included), as sluice's BenchmarkKafka reports them.
func BenchmarkBenthosKafka(b *testing.B) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	round := 0
	b.Run("franz-go", func(b *testing.B) {
		round++
		in, out := fmt.Sprintf("in-%d", round), fmt.Sprintf("out-%d", round)
		fillKafka(b, c.ListenAddrs(), in, out, b.N)
		s := kafkaStream(b, c.ListenAddrs(), in, out, b.N)
		b.ResetTimer()
		t0, cpu0 := time.Now(), processCPU()
		if err := s.Run(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
			b.Fatal(err)
		}
		wall, cpu := time.Since(t0), processCPU()-cpu0
		b.ReportMetric(float64(b.N)/wall.Seconds(), "records/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/rec")
	})
}

// The Kafka stream writes every kept record once, keyed by its account,
// with bank set.
func TestKafkaStream(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 3000
	fillKafka(t, c.ListenAddrs(), "in", "out", n)
	if err := kafkaStream(t, c.ListenAddrs(), "in", "out", n).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := 0
	for i := 0; i < n; i++ {
		if i%10-2 > 0 {
			want++
		}
	}
	var got, bad atomic.Int64
	seen := map[string]bool{}
	for got.Load() < int64(want) && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			got.Add(1)
			m := service.NewMessage(r.Value)
			v, err := m.AsStructured()
			obj, _ := v.(map[string]any)
			if err != nil || obj["bank"] != "NBI" || fmt.Sprint(obj["accountId"]) != string(r.Key) || seen[fmt.Sprint(obj["txnId"])] {
				bad.Add(1)
			}
			if amt, err := strconv.Atoi(fmt.Sprint(obj["amount"])); err != nil || amt <= 0 { // a json.Number
				bad.Add(1)
			}
			seen[fmt.Sprint(obj["txnId"])] = true
		})
	}
	if got.Load() != int64(want) || bad.Load() != 0 {
		t.Fatalf("read %d of %d kept records, %d bad", got.Load(), want, bad.Load())
	}
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
