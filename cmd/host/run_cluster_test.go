package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
)

// clusterPipeline is the keyed job the cluster tests run: the highest
// amount per account (a rolling max, Flink's max: the key's first record
// with the highest amount so far), from topic in to topic ${OUT_TOPIC},
// checkpointed every 200 ms into ckpt, beside the file. A max is
// idempotent: at-least-once replays leave each key's last output as it
// is, so the last output per key is checked.
const clusterPipeline = `version: 1
name: cl
parallelism: 2
max-parallelism: 8
checkpointing:
  interval: 200ms
  storage: ckpt
restart-strategy: none
operators:
  - id: in
    source: { type: kafka, brokers: "${KAFKA_BROKERS}", topics: [in] }
  - id: top
    key-by: account
    max: amount
  - id: out
    sink: { type: kafka, brokers: "${KAFKA_BROKERS}", topic: "${OUT_TOPIC}", key-field: account, delivery: at-least-once }
`

const clusterRecords = 8000

// clusterInput is the input, keyed by account, and each account's last
// output: its first record with the highest amount.
func clusterInput() ([]*kgo.Record, map[string]string) {
	var in []*kgo.Record
	best, first := map[string]int{}, map[string]int{}
	for i := range clusterRecords {
		acct := "a" + strconv.Itoa(i*7919%53)
		amount := 1 + (i*31)%997
		in = append(in, &kgo.Record{Topic: "in", Key: []byte(acct),
			Value: fmt.Appendf(nil, `{"account":%q,"amount":%d,"seq":%d}`, acct, amount, i)})
		if _, ok := first[acct]; !ok {
			first[acct] = i
		}
		best[acct] = max(best[acct], amount)
	}
	want := map[string]string{}
	for a, b := range best {
		want[a] = fmt.Sprintf(`{"account":%q,"amount":%d,"seq":%d}`, a, b, first[a])
	}
	return in, want
}

// lastPerKey reads topic and returns each key's last value.
func lastPerKey(ctx context.Context, brokers []string, topic string) (map[string]string, int, error) {
	rs, err := kafkatest.ReadAll(ctx, brokers, topic, false)
	if err != nil {
		return nil, 0, err
	}
	last := map[string]string{}
	for _, r := range rs {
		var v any
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return nil, 0, fmt.Errorf("%s holds %q", topic, r.Value)
		}
		b, _ := json.Marshal(v)
		last[string(r.Key)] = string(b)
	}
	return last, len(rs), nil
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
		case "generation":
			r.what, r.units = "owns", f[6:]
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

// TestClusterJoinKillStop runs the keyed job on three instances, `host
// run --cluster` processes against one `host dev-kafka` process, while
// the test produces its input: b's join takes half the units from a
// (which keeps the rest), c's join takes its share from both, b is killed
// with SIGKILL and a and c take its units over, restored from their last
// completed checkpoints, then c stops gracefully (SIGTERM: it revokes its
// units and leaves) and a runs them all. Each account's last output
// equals its highest amount (with its first record's seq), as a
// single-instance run of the same job gives; from the instances' own
// reports, no unit ever ran on two at once.
func TestClusterJoinKillStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a broker and four hosts")
	}
	bin := buildHost(t)
	brokers, _ := startDevKafka(t, bin, "in:4", "out:4", "single:4")
	seeds := strings.Split(brokers, ",")
	dir := t.TempDir()
	file := filepath.Join(dir, "cl.yaml")
	writeFile(t, file, clusterPipeline)
	single := filepath.Join(dir, "single")
	if err := os.Mkdir(single, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(single, "cl.yaml"), clusterPipeline)
	input, want := clusterInput()
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
	var got, ref1 map[string]string
	var n int
	waitFor(t, 20*time.Second, "out and single hold every account's highest amount", func() bool {
		var err error
		if got, n, err = lastPerKey(ctx, seeds, "out"); err != nil {
			t.Fatal(err)
		}
		if ref1, _, err = lastPerKey(ctx, seeds, "single"); err != nil {
			t.Fatal(err)
		}
		return maps.Equal(got, want) && maps.Equal(ref1, want)
	})
	if !maps.Equal(got, ref1) {
		t.Errorf("the cluster's last outputs per key differ from the single instance's")
	}
	t.Logf("out: %d records (at-least-once: %d more than the input)", n, n-clusterRecords)
	if n < clusterRecords {
		t.Errorf("out holds %d records for %d inputs: a max emits one per input", n, clusterRecords)
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
