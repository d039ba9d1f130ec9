package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
)

// TestKafkaCrashExactlyOnce is issue #26's exactly-once end to end: a job
// from topic to topic, killed with SIGKILL from outside and resumed each
// time with --from latest. `host dev-kafka` is the broker, a process of
// its own that outlives every kill; the test's own franz-go producer fills
// the input topic while the job runs (kafkaCrashRecords records, keyed by
// account, so each account's records are in one partition, in order); the
// job sums each account's amounts with a keyed Wasm reduce (its
// accumulator in the checkpointed keyed state) and writes every running
// total to the output topic through the exactly-once (transactional)
// Kafka sink. The kills come after a checkpoint, while one is being
// written, and as soon as one completes (before or while the sink commits
// its transactions). At the end a read_committed consumer, franz-go's and
// kcat's, sees each running total exactly once: the totals computed here
// from the input, none missing, none twice, and none of the aborted
// transactions' records, which a read_uncommitted consumer does see.
func TestKafkaCrashExactlyOnce(t *testing.T) {
	const kills = 6
	bin := buildHost(t)
	brokers, _ := startDevKafka(t, bin, "in:4", "out:3")
	seeds := strings.Split(brokers, ",")
	dir := t.TempDir()
	wasm, err := os.ReadFile("../../plugins/reduce-sum/reduce-sum.wasm")
	if err != nil {
		t.Fatalf("%v: run make plugins", err)
	}
	writeFile(t, filepath.Join(dir, "reduce-sum.wasm"), string(wasm))
	writeFile(t, filepath.Join(dir, "eos.yaml"), kafkaCrashPipeline)
	job := &crashJob{t: t, bin: bin, dir: dir, name: "eos", env: []string{"KAFKA_BROKERS=" + brokers}}

	// the input, produced at a steady pace while the job runs and is killed
	input, want := kafkaCrashInput()
	want = canonical(t, want)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	fed := make(chan error, 1)
	go func() { fed <- produceSlowly(ctx, seeds, input) }()

	seed := uint64(time.Now().UnixNano())
	t.Logf("kill moments from seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 26))
	points := []killPoint{killAfterCheckpoint, killOnCompletion, killDuringWrite}
	midWrites, duringFeed := 0, 0
	for k := range kills {
		feeding := len(fed) == 0
		finished, mid := job.crash(rng, points[k%len(points)])
		if finished {
			t.Fatalf("kill %d: the job ended by itself; an unbounded Kafka source never does", k+1)
		}
		if mid {
			midWrites++
		}
		if feeding && len(fed) == 0 {
			duringFeed++
		}
	}
	if err := <-fed; err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	t.Logf("%d kills, %d of them while the input was being produced, %d with a checkpoint being written", kills, duringFeed, midWrites)
	if duringFeed == 0 {
		t.Errorf("no kill came while the input was being produced: make the input longer")
	}

	// the last run: until every total is committed and two checkpoints
	// more completed (so that a duplicate would have been committed too),
	// then stopped with SIGINT
	cmd, stderr := job.start()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	var committed []*kgo.Record
	var after []string
	progress, lastLen := time.Now(), -1
	for {
		select {
		case err := <-exited:
			t.Fatalf("the resumed job ended by itself: %v\n%s", err, stderr)
		default:
		}
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		committed, err = kafkatest.ReadAll(rctx, seeds, "out", true)
		rcancel()
		if err != nil {
			t.Fatalf("reading out read_committed: %v\n%s", err, stderr)
		}
		if len(committed) >= len(want) {
			if after == nil {
				_, after = job.checkpoints()
			} else if _, now := job.checkpoints(); checkpointsSince(now, after) >= 2 {
				break
			}
		}
		if len(committed) != lastLen {
			progress, lastLen = time.Now(), len(committed)
		}
		if time.Since(progress) > 15*time.Second || ctx.Err() != nil {
			t.Fatalf("out holds %d committed records of %d, and no more came for 15 s\n%s\n%s", len(committed), len(want), kafkaDiagnosis(seeds, want), stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("host run had not exited 30 s after SIGINT\n%s", stderr)
	}
	stopped = true
	summary := stderr.String()

	rctx, rcancel := context.WithTimeout(ctx, 20*time.Second)
	defer rcancel()
	committed, err = kafkatest.ReadAll(rctx, seeds, "out", true)
	if err != nil {
		t.Fatalf("reading out read_committed: %v", err)
	}
	got := make([]string, 0, len(committed))
	for _, r := range committed {
		var v struct {
			Account string `json:"account"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || string(r.Key) != v.Account {
			t.Fatalf("out holds %q, key %q: want a JSON total keyed by its account", r.Value, r.Key)
		}
		got = append(got, string(r.Value))
	}
	got = canonical(t, got)
	if !slices.Equal(got, want) {
		t.Fatalf("read_committed, out differs from the running totals of the input: %s", diffLines(want, got))
	}

	// the aborted transactions' records are in the log: a read_uncommitted
	// reader sees them, so the kills did leave transactions to abort
	all, err := kafkatest.ReadAll(rctx, seeds, "out", false)
	if err != nil {
		t.Fatalf("reading out read_uncommitted: %v", err)
	}
	t.Logf("out: %d records committed, %d more in aborted transactions", len(committed), len(all)-len(committed))
	if len(all) <= len(committed) {
		t.Errorf("out holds no record of an aborted transaction (%d records in all, %d committed): the kills hit no open transaction", len(all), len(committed))
	}
	// the last run's restore aborted what the run before it left open, and
	// its summary says how many transactions it committed and aborted
	if !regexp.MustCompile(`(?m)^sink "out" subtask \d: records-acknowledged \d+, transactions-committed [1-9]\d*, transactions-aborted \d+$`).MatchString(summary) {
		t.Errorf("the last run's summary lacks the sink's transactions:\n%s", summary)
	}

	// kcat, read_committed, sees the same records
	if kcat, err := exec.LookPath("kcat"); err == nil {
		out := runCmd(t, rctx, nil, "", kcat, "-b", brokers, "-X", "isolation.level=read_committed", "-C", "-t", "out", "-o", "beginning", "-e", "-q", "-f", "%s\n")
		if k := canonical(t, strings.Split(out, "\n")); !slices.Equal(k, want) {
			t.Errorf("kcat read_committed: %s", diffLines(want, k))
		}
	} else {
		t.Log("kcat is not installed (make tools): the read_committed check with kcat is skipped")
	}
}

const kafkaCrashPipeline = `version: 1
name: eos
parallelism: 2
checkpointing:
  interval: 150ms
  storage: ckpt
  retain: 2
restart-strategy: none
plugins:
  sum: { path: reduce-sum.wasm }
operators:
  - id: in
    source: { type: kafka, brokers: "${KAFKA_BROKERS}", topics: [in] }
  - id: totals
    key-by: account
    reduce: sum
  - id: out
    sink: { type: kafka, brokers: "${KAFKA_BROKERS}", topic: out, key-field: account, delivery: exactly-once, transactional-id-prefix: eos, transaction-timeout: 1m }
`

// kafkaCrashRecords is the input's size; produceSlowly produces it over about 8 s,
// longer than the kills take on this machine, so most come while records
// arrive.
const kafkaCrashRecords = 8000

// kafkaCrashInput is the input, keyed by account, and the running totals
// the reduce emits for it: one per record, the
// account's sum so far with the seq of its first record (the reduce's
// accumulator is the key's first record). Amounts are positive, so each
// account's totals differ and each output is one input record's.
func kafkaCrashInput() (input []*kgo.Record, totals []string) {
	sums, first := map[string]int{}, map[string]int{}
	for i := range kafkaCrashRecords {
		acct := "a" + strconv.Itoa(i*7919%53)
		amount := 1 + i%97
		input = append(input, &kgo.Record{Topic: "in", Key: []byte(acct),
			Value: fmt.Appendf(nil, `{"account":%q,"amount":%d,"seq":%d}`, acct, amount, i)})
		if _, ok := first[acct]; !ok {
			first[acct] = i
		}
		sums[acct] += amount
		totals = append(totals, fmt.Sprintf(`{"account":%q,"amount":%d,"seq":%d}`, acct, sums[acct], first[acct]))
	}
	return input, totals
}

// produceSlowly produces the records in order, 50 every 50 ms, each batch waited
// for (franz-go's idempotent producer keeps each partition's order).
func produceSlowly(ctx context.Context, brokers []string, records []*kgo.Record) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for len(records) > 0 {
		n := min(50, len(records))
		if err := cl.ProduceSync(ctx, records[:n]...).FirstErr(); err != nil {
			return err
		}
		records = records[n:]
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// kafkaDiagnosis says, for a failure, where the topics' offsets are, which
// transactions are open, and how out read_uncommitted differs from want.
func kafkaDiagnosis(brokers []string, want []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err.Error()
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var b strings.Builder
	for _, topic := range []string{"in", "out"} {
		ends, err1 := adm.ListEndOffsets(ctx, topic)
		stable, err2 := adm.ListCommittedOffsets(ctx, topic)
		fmt.Fprintf(&b, "%s: end offsets %v, last stable offsets %v (%v %v)\n", topic, offsetsOf(ends), offsetsOf(stable), err1, err2)
	}
	listed, err := adm.ListTransactions(ctx, nil, nil)
	fmt.Fprintf(&b, "transactions (%v):", err)
	listed.Each(func(t kadm.ListedTransaction) { fmt.Fprintf(&b, " %s=%s", t.TxnID, t.State) })
	b.WriteString("\n")
	if all, err := kafkatest.ReadAll(ctx, brokers, "out", false); err == nil {
		var vals []string
		for _, r := range all {
			vals = append(vals, string(r.Value))
		}
		slices.Sort(vals)
		fmt.Fprintf(&b, "out read_uncommitted against the totals: %s\n", diffLines(want, vals))
	}
	return b.String()
}

func offsetsOf(l kadm.ListedOffsets) map[int32]int64 {
	m := map[int32]int64{}
	l.Each(func(o kadm.ListedOffset) { m[o.Partition] = o.Offset })
	return m
}

// checkpointsSince counts the completed checkpoints of now with a higher
// id than every one of before.
func checkpointsSince(now, before []string) int {
	high := int64(-1)
	for _, d := range before {
		high = max(high, chkID(d))
	}
	n := 0
	for _, d := range now {
		if chkID(d) > high {
			n++
		}
	}
	return n
}

func chkID(dir string) int64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(filepath.Base(dir), "chk-"), 10, 64)
	return n
}
