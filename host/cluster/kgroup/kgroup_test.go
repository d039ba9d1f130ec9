package kgroup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluicehq/sluice/host/cluster"
	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
)

// ledger is what the members report: who runs which unit. A Start of a
// unit another live member runs is a double ownership.
type ledger struct {
	t     *testing.T
	mu    sync.Mutex
	owner map[string]string
	dead  map[string]bool
	acts  []string
}

func (l *ledger) handler(member string) Handler {
	return HandlerFunc(func(_ context.Context, a cluster.Action) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.dead[member] {
			return nil
		}
		l.acts = append(l.acts, a.String())
		for _, u := range a.Units {
			switch a.Kind {
			case cluster.Start:
				if o, ok := l.owner[u]; ok && o != member {
					l.t.Errorf("%s starts unit %s, which %s runs", member, u, o)
				}
				l.owner[u] = member
			case cluster.Revoke, cluster.Abandon:
				if l.owner[u] != member {
					l.t.Errorf("%s gives up unit %s, which it does not run (%q does)", member, u, l.owner[u])
				}
				delete(l.owner, u)
			}
		}
		return nil
	})
}

// kill drops a member's units at once, as the death of its process does.
func (l *ledger) kill(member string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dead[member] = true
	for u, o := range l.owner {
		if o == member {
			delete(l.owner, u)
		}
	}
}

func (l *ledger) byMember() map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]string{}
	for u, o := range l.owner {
		out[o] = append(out[o], u)
	}
	for _, us := range out {
		sort.Strings(us)
	}
	return out
}

type running struct {
	d      *Driver
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, c *kafkatest.Cluster, l *ledger, stages [][]string, name string) *running {
	t.Helper()
	cl, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{Client: cl, Group: "sluice.t", Instance: name, Stages: stages,
		SessionTimeout: time.Second, RebalanceTimeout: 2 * time.Second, Heartbeat: 100 * time.Millisecond,
		Handler: l.handler(name)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, cl: cl, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- d.Run(ctx) }()
	return r
}

// stop stops the member gracefully: it revokes its units and leaves.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Errorf("stopping: %v", err)
	}
	r.cl.Close()
}

// kill ends the member without a revoke or a LeaveGroup: its client
// closes under it, and the coordinator drops it after its session.
func (r *running) kill(t *testing.T, l *ledger) {
	t.Helper()
	l.kill(r.d.cfg.Instance)
	r.cl.Close()
	err := <-r.done
	if !errors.Is(err, kgo.ErrClientClosed) {
		t.Errorf("a killed member's Run ended with %v, want the closed client", err)
	}
	r.cancel()
}

// settle waits until the members' own reports (Owned) and the ledger say
// that every unit is run once, by the members named, in shares of each
// stage that differ by at most one (cluster.Balance balances stage by
// stage).
func settle(t *testing.T, l *ledger, stages [][]string, members map[string]*running, names ...string) map[string][]string {
	t.Helper()
	var all []string
	for _, s := range stages {
		all = append(all, s...)
	}
	sort.Strings(all)
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := l.byMember()
		ok := len(got) <= len(names)
		var union []string
		for _, name := range names {
			if !slices.Equal(got[name], sortedOwned(members[name])) {
				ok = false
			}
			union = append(union, got[name]...)
		}
		for s := range stages {
			lo, hi := 1<<30, 0
			for _, name := range names {
				n := countStage(got[name], fmt.Sprintf("s%d/", s))
				lo, hi = min(lo, n), max(hi, n)
			}
			if hi-lo > 1 {
				ok = false
			}
		}
		sort.Strings(union)
		if ok && slices.Equal(union, all) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group did not settle over %v in 20 s: units run by %v", names, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sortedOwned(r *running) []string {
	o := r.d.Owned()
	sort.Strings(o)
	return o
}

// TestJoinLeaveKill runs three members of one group against an
// in-process broker: each joins in turn, one stops gracefully, one is
// killed. After each change the group settles with every unit run once,
// in even shares; no unit is ever started by one member while another
// runs it (the ledger checks every Start); moves are sticky: a joiner
// takes units only from the others' surplus, a leaver's units go to the
// members that stay, which keep their own.
func TestJoinLeaveKill(t *testing.T) {
	c, err := kafkatest.Start(1, nil, kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var stages [][]string
	for s, n := range []int{4, 8} {
		var ids []string
		for i := range n {
			ids = append(ids, fmt.Sprintf("s%d/%d", s, i))
		}
		stages = append(stages, ids)
	}
	l := &ledger{t: t, owner: map[string]string{}, dead: map[string]bool{}}
	ms := map[string]*running{}
	defer func() {
		for _, r := range ms {
			r.cancel()
		}
	}()

	ms["a"] = start(t, c, l, stages, "a")
	// each settle also checks the shares: 12 alone, 6+6, per stage 2/1/1
	// and 3/3/2 among three
	s1 := settle(t, l, stages, ms, "a")

	ms["b"] = start(t, c, l, stages, "b")
	s2 := settle(t, l, stages, ms, "a", "b")
	subset(t, "a after b joined", s2["a"], s1["a"])

	ms["c"] = start(t, c, l, stages, "c")
	s3 := settle(t, l, stages, ms, "a", "b", "c")
	subset(t, "a after c joined", s3["a"], s2["a"])
	subset(t, "b after c joined", s3["b"], s2["b"])

	ms["b"].stop(t)
	delete(ms, "b")
	s4 := settle(t, l, stages, ms, "a", "c")
	subset(t, "a keeps its units when b leaves", s3["a"], s4["a"])
	subset(t, "c keeps its units when b leaves", s3["c"], s4["c"])

	ms["c"].kill(t, l)
	delete(ms, "c")
	s5 := settle(t, l, stages, ms, "a")
	subset(t, "a keeps its units when c is killed", s4["a"], s5["a"])
	if n := ms["a"].d.Rebalances(); n < 4 {
		t.Errorf("a took %d assignments through 2 joins, a leave and a kill", n)
	}
	ms["a"].stop(t)
	delete(ms, "a")
	if left := l.byMember(); len(left) != 0 {
		t.Errorf("after the last member stopped, units still run: %v", left)
	}
	t.Logf("%d unit actions", len(l.acts))
}

func subset(t *testing.T, what string, sub, of []string) {
	t.Helper()
	for _, u := range sub {
		if !slices.Contains(of, u) {
			t.Errorf("%s: %s runs %v, not within %v (a needless move)", what, u, sub, of)
			return
		}
	}
}

func countStage(units []string, prefix string) int {
	n := 0
	for _, u := range units {
		if len(u) >= len(prefix) && u[:len(prefix)] == prefix {
			n++
		}
	}
	return n
}

// TestLostRejoins: a heartbeat answered UNKNOWN_MEMBER_ID (the
// coordinator dropped the member, as after a long pause) is Member's Lost:
// every unit is abandoned without a revoke, and the member joins afresh
// and gets them back.
func TestLostRejoins(t *testing.T) {
	c, err := kafkatest.Start(1, nil, kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stages := [][]string{{"s0/0", "s0/1", "s0/2"}}
	l := &ledger{t: t, owner: map[string]string{}, dead: map[string]bool{}}
	ms := map[string]*running{}
	ms["a"] = start(t, c, l, stages, "a")
	defer ms["a"].cancel()
	settle(t, l, stages, ms, "a")
	before := ms["a"].d.Rebalances()
	c.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
		resp := req.(*kmsg.HeartbeatRequest).ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp, nil, true
	})
	waitAct := func(want string) {
		deadline := time.Now().Add(20 * time.Second)
		for {
			l.mu.Lock()
			found := slices.Contains(l.acts, want)
			l.mu.Unlock()
			if found {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %q in %v", want, l.acts)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitAct("a: abandon [s0/0 s0/1 s0/2]")
	deadline := time.Now().Add(20 * time.Second)
	for ms["a"].d.Rebalances() == before || len(sortedOwned(ms["a"])) != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("a did not get its units back after it was lost: %v", l.acts)
		}
		time.Sleep(20 * time.Millisecond)
	}
	settle(t, l, stages, ms, "a")
	for _, a := range l.acts {
		if strings.Contains(a, "revoke") {
			t.Errorf("a lost member revoked (%s): it must abandon", a)
		}
	}
	ms["a"].stop(t)
}

// TestSlowStartKeepsMembership: starting a unit may take longer than the
// session timeout (Wasm set-up, a restore); the driver heartbeats while
// its actions run, as a Kafka consumer's heartbeat thread does, so the
// member is not dropped (and its units handed to another) meanwhile:
// after a start of 2.5 session timeouts it still holds its units in the
// first generation, with nothing abandoned.
func TestSlowStartKeepsMembership(t *testing.T) {
	c, err := kafkatest.Start(1, nil, kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stages := [][]string{{"s0/0", "s0/1"}}
	l := &ledger{t: t, owner: map[string]string{}, dead: map[string]bool{}}
	cl, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	inner := l.handler("a")
	slow := HandlerFunc(func(ctx context.Context, a cluster.Action) error {
		if a.Kind == cluster.Start {
			time.Sleep(2500 * time.Millisecond)
		}
		return inner.Do(ctx, a)
	})
	d, err := New(Config{Client: cl, Group: "sluice.slow", Instance: "a", Stages: stages,
		SessionTimeout: time.Second, RebalanceTimeout: 2 * time.Second, Heartbeat: 100 * time.Millisecond, Handler: slow})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for len(d.Owned()) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("a never owned its units: %v", l.acts)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // past another session timeout
	l.mu.Lock()
	acts := slices.Clone(l.acts)
	l.mu.Unlock()
	for _, a := range acts {
		if strings.Contains(a, "abandon") {
			t.Errorf("a was dropped during its slow start: %v", acts)
		}
	}
	if n := d.Rebalances(); n != 1 {
		t.Errorf("%d rebalances, want the first only: %v", n, acts)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("stopping: %v", err)
	}
}
