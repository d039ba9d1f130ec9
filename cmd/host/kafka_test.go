package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
)

// The Kafka examples live in configs/kafka/, out of the globs of the tests
// that lint, plan and run every config of configs/ without a broker (and
// of make run): the tests here start a broker and run them.

// TestKafkaConfigs lints the Kafka examples and runs them against an
// in-process broker: the producer fills txns, the job reads it to its end
// and writes the valid transactions, enriched, to valid-txns, each keyed
// by its account.
func TestKafkaConfigs(t *testing.T) {
	c, err := kafkatest.Start(1, map[string]int32{"txns": 4, "valid-txns": 4})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Setenv("KAFKA_BROKERS", strings.Join(c.Addrs(), ","))
	t.Chdir("../..")
	t.Setenv("SLUICE_SLOTS", "")
	runHost := func(t *testing.T, args ...string) (int, string, string) { // in the project folder, as make run
		var out, errb strings.Builder
		code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	fill, job := "configs/kafka/kafka-fill-txns.yaml", "configs/kafka/kafka-transactions.yaml"
	if code, out, errs := runHost(t, "lint", fill, job); code != 0 || out != "" || errs != "" {
		t.Fatalf("lint: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := runHost(t, "run", "--progress=none", fill); code != 0 {
		t.Fatalf("%s: exit %d\n%s", fill, code, errs)
	}
	code, _, errs := runHost(t, "run", "--progress=none", job)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s", job, code, errs)
	}
	if !strings.Contains(errs, `job "kafka-transactions" (batch)`) {
		t.Errorf("bounded: latest should end the job, run as batch:\n%s", errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	in, err := c.ReadAll(ctx, "txns", false)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.ReadAll(ctx, "valid-txns", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 1000 || len(out) == 0 || len(out) >= len(in) {
		t.Fatalf("txns holds %d records, valid-txns %d: want 1000 and some of them", len(in), len(out))
	}
	for _, r := range out {
		var v struct {
			AccountID string `json:"accountId"`
			Bank      string `json:"bank"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || v.Bank != "NBI" || string(r.Key) != v.AccountID {
			t.Fatalf("record %s key %q: want JSON enriched with bank NBI, keyed by accountId (%v)", r.Value, r.Key, err)
		}
	}
	if !regexp.MustCompile(fmt.Sprintf(`(?m)^out +sink +2 +%d `, len(out))).MatchString(errs) {
		t.Errorf("the summary's out sink should count the %d records of valid-txns:\n%s", len(out), errs)
	}
	// the source's Kafka metrics: each partition of txns read to its end
	for p := range 4 {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^source "txns" subtask \d topic txns partition %d: currentOffset \d+, committedOffset -1, records-lag 0$`, p)).MatchString(errs) {
			t.Errorf("the summary lacks the Kafka metrics of txns partition %d:\n%s", p, errs)
		}
	}
}

// TestDevKafkaFlags: bad --topic values are refused with what to write.
func TestDevKafkaFlags(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"txns:0", `--topic "txns:0": the partition count after the colon must be a whole number of at least 1`},
		{":3", `--topic ":3": the topic needs a name`},
	} {
		code, _, errs := runHost(t, "dev-kafka", "--topic", tc.flag)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("--topic %s: exit %d %s\nwant %s", tc.flag, code, errs, tc.want)
		}
	}
}

// kcatPath is Debian's kcat, the independent Kafka client of the end to
// end test; scripts/tools.sh installs it (make tools).
func kcatPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatalf("kcat is not installed: the Kafka end-to-end test needs it as the client that is not sluice. Install it with make tools (scripts/tools.sh) or apt-get install kcat")
	}
	return p
}

// startDevKafka starts `host dev-kafka` as a process on a free port with
// topics and returns the brokers it prints and the process.
func startDevKafka(t *testing.T, bin string, topics ...string) (string, *exec.Cmd) {
	t.Helper()
	args := []string{"dev-kafka", "--port", "0"}
	for _, tp := range topics {
		args = append(args, "--topic", tp)
	}
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	s := bufio.NewScanner(stdout)
	brokers := ""
	for s.Scan() {
		l := s.Text()
		if b, ok := strings.CutPrefix(l, "brokers: "); ok {
			brokers = b
		}
		if strings.HasPrefix(l, "ready") {
			break
		}
	}
	if brokers == "" {
		t.Fatalf("dev-kafka printed no brokers line before it was ready (%v)", s.Err())
	}
	go func() { // keep reading, so the process never blocks on its stdout
		for s.Scan() {
		}
	}()
	return brokers, cmd
}

// runCmd runs a command in the project folder with env added and returns
// its stdout; it fails the test, with stderr, when the command fails.
func runCmd(t *testing.T, ctx context.Context, env []string, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, errb.String())
	}
	return string(out)
}

// canonical rewrites each JSON line with sorted keys and sorts the lines,
// so two runs' records compare one by one whatever the partitions' order.
func canonical(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("not JSON: %q: %v", l, err)
		}
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

// TestKafkaEndToEndWithKcat: the other side is not sluice. `host
// dev-kafka` runs as its own process; kcat produces the transactions to
// txns; `host run` runs configs/kafka/kafka-transactions.yaml (topic ->
// Wasm filter -> Wasm map -> topic); kcat reads valid-txns back, and every
// record (and its key) equals what the same filter and map compute from
// the same transactions read from a file. dev-kafka then stops cleanly on
// SIGINT.
func TestKafkaEndToEndWithKcat(t *testing.T) {
	kcat := kcatPath(t)
	bin := buildHost(t)
	brokers, dev := startDevKafka(t, bin, "txns:4", "valid-txns:3")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()

	// dev-kafka made the topics with their partition counts
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	topics, err := kadm.NewClient(cl).ListTopics(ctx, "txns", "valid-txns")
	cl.Close()
	if err != nil || len(topics["txns"].Partitions) != 4 || len(topics["valid-txns"].Partitions) != 3 {
		t.Fatalf("dev-kafka's topics: %v %v", topics, err)
	}

	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// the input: 600 transactions as JSON lines
	gen := filepath.Join(dir, "gen.yaml")
	writeFile(t, gen, "version: 1\nname: gen\noperators:\n  - id: txns\n    source: { type: generator, preset: transactions, count: 600, seed: 11 }\n  - id: out\n    sink: { type: file, path: input.jsonl }\n")
	runCmd(t, ctx, nil, "", bin, "run", "--progress=none", gen)
	input, err := os.ReadFile(filepath.Join(dir, "input.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// kcat produces them, one message a line, spread over txns' partitions
	runCmd(t, ctx, nil, string(input), kcat, "-b", brokers, "-P", "-t", "txns", "-p", "-1")

	// the job, from topic to topic
	runCmd(t, ctx, []string{"KAFKA_BROKERS=" + brokers}, "", bin, "run", "--progress=none", filepath.Join("configs", "kafka", "kafka-transactions.yaml"))
	// kcat reads valid-txns to its end: key, a tab, the value
	got := runCmd(t, ctx, nil, "", kcat, "-b", brokers, "-C", "-t", "valid-txns", "-o", "beginning", "-e", "-q", "-f", "%k\t%s\n")
	var values []string
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		key, value, ok := strings.Cut(l, "\t")
		var v struct {
			AccountID string `json:"accountId"`
		}
		if !ok || json.Unmarshal([]byte(value), &v) != nil || key != v.AccountID {
			t.Fatalf("kcat read %q: want the accountId as the key, a tab, the JSON value", l)
		}
		values = append(values, value)
	}

	// the same filter and map over the same transactions from a file
	ref := filepath.Join(dir, "ref.yaml")
	writeFile(t, ref, fmt.Sprintf(`version: 1
name: ref
mode: automatic
parallelism: 2
plugins:
  valid: { path: %s }
  enrich: { path: %s, config: { bank: NBI } }
operators:
  - id: txns
    source: { type: file, path: input.jsonl }
  - id: valid
    filter: valid
  - id: enriched
    map: enrich
  - id: out
    parallelism: 1
    sink: { type: file, path: ref.jsonl }
`, rel(t, dir, filepath.Join(root, "plugins", "valid", "valid.wasm")), rel(t, dir, filepath.Join(root, "plugins", "enrich", "enrich.wasm"))))
	runCmd(t, ctx, nil, "", bin, "run", "--progress=none", "--plugin-root", root, ref)
	want, err := os.ReadFile(filepath.Join(dir, "ref.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	g, w := canonical(t, values), canonical(t, strings.Split(string(want), "\n"))
	if len(w) == 0 || len(w) >= 600 {
		t.Fatalf("the reference kept %d of 600 transactions: the filter should keep some", len(w))
	}
	if len(g) != len(w) {
		t.Errorf("valid-txns holds %d records, the same job from a file writes %d", len(g), len(w))
	}
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			t.Fatalf("record %d (sorted) differs:\nkafka %s\nfile  %s", i, g[i], w[i])
		}
	}

	if err := dev.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := dev.Wait(); err != nil {
		t.Errorf("dev-kafka after SIGINT: %v, want exit 0", err)
	}
}

func rel(t *testing.T, from, to string) string {
	t.Helper()
	r, err := filepath.Rel(from, to)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPlanKafkaPartitions: host plan asks a Kafka source's brokers for the
// partition counts and prints which subtask reads which partitions, by
// Flink's KafkaSourceEnumerator (txns's start index is 2 of 3:
// ("txns".hashCode() * 31 & 0x7FFFFFFF) % 3); brokers that do not answer
// get a line saying so, and the plan is printed all the same.
func TestPlanKafkaPartitions(t *testing.T) {
	c, err := kafkatest.Start(1, map[string]int32{"txns": 4, "audit": 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := filepath.Join(t.TempDir(), "k.yaml")
	writeFile(t, p, "version: 1\nname: k\nparallelism: 3\noperators:\n  - id: in\n    source: { type: kafka, brokers: \"${KAFKA_BROKERS}\", topics: [txns, audit] }\n  - id: out\n    sink: { type: discard }\n")
	t.Setenv("KAFKA_BROKERS", strings.Join(c.Addrs(), ","))
	code, out, errs := runHost(t, "plan", p)
	want := fmt.Sprintf("\nkafka source in (brokers %s): partitions per subtask (Flink's KafkaSourceEnumerator)\n", strings.Join(c.Addrs(), ",")) +
		// audit's one partition: ("audit".hashCode() * 31 & 0x7FFFFFFF) % 3 is 2
		"  subtask 0: txns [1]\n  subtask 1: txns [2]\n  subtask 2: audit [0]; txns [0 3]\n"
	if code != 0 || errs != "" || !strings.Contains(out, "slots needed") || !strings.HasSuffix(out, want) {
		t.Fatalf("exit %d\n%s%s\nwant it to end with:\n%s", code, out, errs, want)
	}

	c.Close() // now nothing answers
	code, out, _ = runHost(t, "plan", p)
	if code != 0 || !strings.Contains(out, "slots needed") ||
		!regexp.MustCompile(`\nkafka source in: partitions per subtask not shown: the brokers did not answer within 2s: .*127\.0\.0\.1`).MatchString(out) {
		t.Errorf("exit %d, want the plan and a line saying the brokers did not answer:\n%s", code, out)
	}
}

// TestKafkaIdleSourceCheckpoints: a Kafka source with nothing to read
// still takes its checkpoints' barriers, so the job's checkpoints keep
// completing: topic quiet has 10 records in partition 0 and none in
// partition 1, so one source subtask reads 10 records and then waits and
// the other waits from the start. The job runs until five checkpoints
// completed after the source read the 10 records (checkpoint ids from
// the checkpoint folder), then is cancelled; its summary counts the
// completed checkpoints and none failed, and each completion committed
// the source's offsets to the group: partition 0 at 10, its end.
func TestKafkaIdleSourceCheckpoints(t *testing.T) {
	c, err := kafkatest.Start(1, map[string]int32{"quiet": 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "quiet", Partition: 0, Value: fmt.Appendf(nil, `{"n":%d}`, i)})
	}
	if err := c.Produce(ctx, true, recs...); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "idle.yaml")
	writeFile(t, p, fmt.Sprintf(`version: 1
name: idle
parallelism: 2
checkpointing: { interval: 20ms, storage: ckpt, retain: 1 }
restart-strategy: none
operators:
  - id: in
    source: { type: kafka, brokers: %q, topics: [quiet], group-id: g }
  - id: out
    sink: { type: discard }
`, strings.Join(c.Addrs(), ",")))
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var out, errb strings.Builder
	exited := make(chan int, 1)
	go func() { exited <- run(rctx, []string{"run", "--progress=none", p}, strings.NewReader(""), &out, &errb) }()

	adm, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	// the first checkpoint that committed partition 0 at its end, then
	// five more
	var from int64 = -1
	for {
		if ctx.Err() != nil {
			stop()
			<-exited
			t.Fatalf("no five checkpoints completed after the source read everything\n%s", errb.String())
		}
		select {
		case code := <-exited:
			t.Fatalf("the job ended by itself (exit %d)\n%s", code, errb.String())
		default:
		}
		last := latestCheckpoint(t, filepath.Join(dir, "ckpt", "idle"))
		if from < 0 {
			offs, err := kadm.NewClient(adm).FetchOffsets(ctx, "g")
			if err == nil {
				if o, ok := offs.Lookup("quiet", 0); ok && o.At == 10 {
					from = last
				}
			}
		} else if last >= from+5 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if code := <-exited; code == 0 {
		t.Errorf("cancelled, the job exited 0\n%s", errb.String())
	}
	summary := errb.String()
	m := regexp.MustCompile(`checkpoints: numberOfCompletedCheckpoints (\d+), numberOfFailedCheckpoints (\d+)`).FindStringSubmatch(summary)
	if m == nil {
		t.Fatalf("the summary has no checkpoint counts:\n%s", summary)
	}
	if n, _ := strconv.Atoi(m[1]); int64(n) < from+5 || m[2] != "0" && m[2] != "1" {
		t.Errorf("the summary counts %s completed and %s failed checkpoints, want at least %d, and none failed but the one the cancellation may abort:\n%s", m[1], m[2], from+5, summary)
	}
	if !regexp.MustCompile(`(?m)^source "in" subtask \d topic quiet partition 0: currentOffset 9, committedOffset 10, records-lag 0$`).MatchString(summary) {
		t.Errorf("the summary should show partition 0 read and committed to its end:\n%s", summary)
	}
}

// latestCheckpoint is the highest id of a completed checkpoint (its
// _metadata written) under jobDir, -1 before one.
func latestCheckpoint(t *testing.T, jobDir string) int64 {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(jobDir, "chk-*"))
	high := int64(-1)
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "_metadata")); err == nil {
			high = max(high, chkID(d))
		}
	}
	return high
}
