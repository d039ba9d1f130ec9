package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
)

// clusterPipeline is the keyed job the cluster tests run: each account's
// running total (a keyed Wasm reduce), from topic in to topic
// ${OUT_TOPIC} through an exactly-once (transactional) Kafka sink,
// checkpointed exactly-once every 200 ms into ckpt, beside the file. A sum
// is not idempotent: a replayed record would show as a total twice.
const clusterPipeline = `version: 1
name: cl
parallelism: 2
max-parallelism: 8
checkpointing:
  interval: 200ms
  storage: ckpt
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
    sink: { type: kafka, brokers: "${KAFKA_BROKERS}", topic: "${OUT_TOPIC}", key-field: account, delivery: exactly-once, transactional-id-prefix: "${OUT_TOPIC}", transaction-timeout: 1m }
`

// committedTotals reads topic read_committed, as canonical JSON lines.
func committedTotals(t *testing.T, ctx context.Context, brokers []string, topic string) []string {
	t.Helper()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rs, err := kafkatest.ReadAll(rctx, brokers, topic, true)
	if err != nil {
		t.Fatalf("reading %s read_committed: %v", topic, err)
	}
	lines := make([]string, len(rs))
	for i, r := range rs {
		lines[i] = string(r.Value)
	}
	return canonical(t, lines)
}

type clusterInstance struct {
	name   string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan struct{} // closed when it exited
	killed int64         // Unix ns of the SIGKILL, 0 if none
}

func startInstance(t *testing.T, bin, file string, env []string, args ...string) *clusterInstance {
	t.Helper()
	in := &clusterInstance{stderr: &lockedBuffer{}, exited: make(chan struct{})}
	in.cmd = exec.Command(bin, append([]string{"run", "--progress=none"}, append(args, file)...)...)
	in.cmd.Env = append(os.Environ(), env...)
	in.cmd.Stderr = in.stderr
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = in.cmd.Wait(); close(in.exited) }()
	t.Cleanup(func() {
		_ = in.cmd.Process.Kill()
		<-in.exited
		if t.Failed() {
			t.Logf("%s stderr:\n%s", in.name, in.stderr.String())
		}
	})
	return in
}

// report is one line of an instance's cluster report.
type report struct {
	at       int64
	instance string
	what     string // start, revoke, abandon, owns
	units    []string
}

func reports(in *clusterInstance) []report {
	var out []report
	for _, l := range strings.Split(in.stderr.String(), "\n") {
		rest, ok := strings.CutPrefix(l, "cluster: ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 4 || f[1] != "instance" {
			continue
		}
		at, _ := strconv.ParseInt(f[0], 10, 64)
		r := report{at: at, instance: strings.TrimSuffix(f[2], ":"), what: f[3]}
		switch r.what {
		case "start", "revoke", "abandon":
			r.units = f[4:]
		case "generation": // generation N (rebalance D) owns units...
			i := slices.Index(f, "owns")
			if i < 0 {
				continue
			}
			r.what, r.units = "owns", f[i+1:]
		default:
			continue
		}
		out = append(out, r)
	}
	return out
}

// owned is what the instance last reported it owns.
func owned(in *clusterInstance) []string {
	var last []string
	for _, r := range reports(in) {
		if r.what == "owns" {
			last = r.units
		}
	}
	return last
}

// checkNoDoubleOwnership checks from the instances' reports that no unit
// ran on two instances at once: a unit runs from its start report
// (said before it starts) to its revoke or abandon report (said after it
// stopped), or to the instance's SIGKILL, or on.
func checkNoDoubleOwnership(t *testing.T, ins ...*clusterInstance) {
	t.Helper()
	type span struct {
		instance string
		from, to int64
	}
	spans := map[string][]span{}
	for _, in := range ins {
		open := map[string]int64{}
		for _, r := range reports(in) {
			for _, u := range r.units {
				switch r.what {
				case "start":
					open[u] = r.at
				case "revoke", "abandon":
					spans[u] = append(spans[u], span{in.name, open[u], r.at})
					delete(open, u)
				}
			}
		}
		end := int64(1 << 62)
		if in.killed != 0 {
			end = in.killed
		}
		for u, from := range open {
			spans[u] = append(spans[u], span{in.name, from, end})
		}
	}
	for u, ss := range spans {
		for i := range ss {
			for j := range ss {
				if i != j && ss[i].instance != ss[j].instance && ss[i].from < ss[j].to && ss[j].from < ss[i].to {
					t.Errorf("unit %s ran on %s (%d-%d) and %s (%d-%d) at once", u, ss[i].instance, ss[i].from, ss[i].to, ss[j].instance, ss[j].from, ss[j].to)
				}
			}
		}
	}
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var allUnits = []string{"s0/0", "s0/1", "s1/0", "s1/1", "s1/2", "s1/3", "s1/4", "s1/5", "s1/6", "s1/7"}

// settled says whether the instances' last reports own every unit once,
// in shares of each stage that differ by at most one.
func settled(ins ...*clusterInstance) bool {
	var all []string
	lo, hi := map[string]int{}, map[string]int{}
	for i, in := range ins {
		o := owned(in)
		all = append(all, o...)
		for _, st := range []string{"s0/", "s1/"} {
			n := 0
			for _, u := range o {
				if strings.HasPrefix(u, st) {
					n++
				}
			}
			if i == 0 || n < lo[st] {
				lo[st] = n
			}
			hi[st] = max(hi[st], n)
		}
	}
	slices.Sort(all)
	return slices.Equal(all, allUnits) && hi["s0/"]-lo["s0/"] <= 1 && hi["s1/"]-lo["s1/"] <= 1
}

// keeps checks that an instance still owns what it owned before a change
// that should only take away from others (or add to it).
func keeps(t *testing.T, in *clusterInstance, before []string, why string) {
	t.Helper()
	now := owned(in)
	for _, u := range before {
		if !slices.Contains(now, u) {
			t.Errorf("%s: %s gave up %s (owned %v, now %v)", why, in.name, u, before, now)
		}
	}
}

// TestClusterJoinKillStop runs the keyed job (a running total per account,
// exactly-once) on three instances, `host
// run --cluster` processes against one `host dev-kafka` process, while
// the test produces its input: b's join takes half the units from a
// (which keeps the rest), c's join takes its share from both, b is killed
// with SIGKILL and a and c take its units over, restored from their last
// completed checkpoints, then c stops gracefully (SIGTERM: it revokes its
// units and leaves) and a runs them all. A read_committed reader of the
// output sees each running total exactly once, as a single-instance run
// of the same job writes them, though the kill and the stop left records
// of aborted transactions in it; from the instances' own reports, no unit
// ever ran on two at once.
func TestClusterJoinKillStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker and four hosts")
	}
	bin := buildHost(t)
	brokers, _ := startDevKafka(t, bin, "in:4", "out:4", "single:4")
	seeds := strings.Split(brokers, ",")
	dir := t.TempDir()
	file := filepath.Join(dir, "cl.yaml")
	wasm, err := os.ReadFile("../../plugins/reduce-sum/reduce-sum.wasm")
	if err != nil {
		t.Fatalf("%v: run make plugins", err)
	}
	single := filepath.Join(dir, "single")
	if err := os.Mkdir(single, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, single} {
		writeFile(t, filepath.Join(d, "cl.yaml"), clusterPipeline)
		writeFile(t, filepath.Join(d, "reduce-sum.wasm"), string(wasm))
	}
	input, totals := kafkaCrashInput() // 8000 records keyed by account, and the running totals
	want := canonical(t, totals)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// the first half of the input from the start, the second from c's
	// join on: it takes at least 4 s (50 records per 50 ms), so b is killed
	// while records arrive
	half := len(input) / 2
	fed1, fed2 := make(chan error, 1), make(chan error, 1)
	go func() { fed1 <- produceSlowly(ctx, seeds, input[:half]) }()

	env := []string{"KAFKA_BROKERS=" + brokers, "OUT_TOPIC=out"}
	start := func(name string) *clusterInstance {
		in := startInstance(t, bin, file, env, "--cluster", brokers, "--instance", name, "--session-timeout", "6s")
		in.name = name
		return in
	}
	a := start("a")
	waitFor(t, 15*time.Second, "a owns every unit", func() bool { return settled(a) })
	ref := startInstance(t, bin, filepath.Join(single, "cl.yaml"), []string{"KAFKA_BROKERS=" + brokers, "OUT_TOPIC=single"})
	ref.name = "single"
	b := start("b")
	waitFor(t, 15*time.Second, "a and b share the units", func() bool { return settled(a, b) })
	keeps(t, a, owned(a), "b joined") // trivially, and below against this
	aHalf, bHalf := owned(a), owned(b)
	c := start("c")
	waitFor(t, 15*time.Second, "a, b and c share the units", func() bool { return settled(a, b, c) })
	for _, in := range []*clusterInstance{a, b} {
		before := aHalf
		if in == b {
			before = bHalf
		}
		for _, u := range owned(in) {
			if !slices.Contains(before, u) {
				t.Errorf("c joined, and %s gained %s: a join moves units only to the newcomer", in.name, u)
			}
		}
	}
	aThird, cThird := owned(a), owned(c)
	if err := <-fed1; err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	go func() { fed2 <- produceSlowly(ctx, seeds, input[half:]) }()
	time.Sleep(time.Second) // b runs and checkpoints its units
	b.killed = time.Now().UnixNano()
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-b.exited
	if len(fed2) != 0 {
		t.Errorf("the second half of the input was produced before b was killed: kill sooner")
	}
	waitFor(t, 20*time.Second, "a and c take b's units over", func() bool { return settled(a, c) })
	keeps(t, a, aThird, "b was killed")
	keeps(t, c, cThird, "b was killed")
	aNow := owned(a)
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("c had not stopped 20 s after SIGTERM")
	}
	waitFor(t, 15*time.Second, "a takes c's units over", func() bool { return settled(a) })
	keeps(t, a, aNow, "c stopped")
	if err := <-fed2; err != nil {
		t.Fatalf("producing the input: %v", err)
	}
	var got, ref1 []string
	waitFor(t, 30*time.Second, "out and single hold every running total, committed", func() bool {
		got, ref1 = committedTotals(t, ctx, seeds, "out"), committedTotals(t, ctx, seeds, "single")
		return len(got) >= len(want) && len(ref1) >= len(want)
	})
	// two more checkpoints of every unit: a duplicate would be committed by now
	time.Sleep(time.Second)
	got, ref1 = committedTotals(t, ctx, seeds, "out"), committedTotals(t, ctx, seeds, "single")
	if !slices.Equal(got, want) {
		t.Errorf("read_committed, out differs from the running totals of the input: %s", diffLines(want, got))
	}
	if !slices.Equal(got, ref1) {
		t.Errorf("read_committed, out differs from the single instance's output: %s", diffLines(ref1, got))
	}
	all, err := kafkatest.ReadAll(ctx, seeds, "out", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("out: %d running totals committed, %d records in all (the rest in aborted transactions)", len(got), len(all))
	if len(all) <= len(got) {
		t.Errorf("out holds no record of an aborted transaction (%d in all, %d committed): the kill and the stop hit no open transaction", len(all), len(got))
	}
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("a had not stopped 20 s after SIGTERM")
	}
	for _, in := range []*clusterInstance{a, c} {
		if !strings.Contains(in.stderr.String(), "left group sluice.cl") {
			t.Errorf("%s did not leave the group on SIGTERM", in.name)
		}
	}
	checkNoDoubleOwnership(t, a, b, c)
	// each generation's rebalance, as the instances measured it
	for _, in := range []*clusterInstance{a, b, c} {
		var pauses []string
		for _, l := range strings.Split(in.stderr.String(), "\n") {
			if _, rest, ok := strings.Cut(l, " (rebalance "); ok {
				d, _, _ := strings.Cut(rest, ")")
				if _, err := time.ParseDuration(d); err != nil {
					t.Errorf("%s: rebalance %q: %v", in.name, d, err)
				}
				pauses = append(pauses, d)
			}
		}
		t.Logf("%s: rebalances %s", in.name, strings.Join(pauses, " "))
	}
	restored := 0
	for _, in := range []*clusterInstance{a, c} {
		for _, r := range strings.Split(in.stderr.String(), "\n") {
			if f := strings.Fields(r); len(f) > 4 && f[4] == "restore" && strings.Contains(r, "from checkpoint") {
				if at, _ := strconv.ParseInt(f[1], 10, 64); at > b.killed {
					restored++
				}
			}
		}
	}
	if restored == 0 {
		t.Errorf("after b was killed, no instance restored a unit from a checkpoint")
	}
}
