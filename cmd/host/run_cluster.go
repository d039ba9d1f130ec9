package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/cluster"
	"github.com/sluicehq/sluice/host/cluster/kgroup"
	"github.com/sluicehq/sluice/host/cluster/unitjob"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/jobmaster"
	"github.com/sluicehq/sluice/host/jobplugins"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/host/settings"
	"github.com/sluicehq/sluice/host/state/pebblestate"
)

// clusterRunFlags are host run's flags for running one job on several
// instances (docs/cluster.md).
type clusterRunFlags struct {
	brokers        string
	instance       string
	maxPartitions  int
	sessionTimeout time.Duration
}

func addClusterRunFlags(cmd *cobra.Command, f *clusterRunFlags) {
	cmd.Flags().StringVar(&f.brokers, "cluster", "", "run the job together with other instances over these Kafka brokers (host:port,...): the consumer group sluice.<job> decides which units this instance runs (docs/cluster.md)")
	cmd.Flags().StringVar(&f.instance, "instance", "", "with --cluster: this instance's name, unique among the job's instances")
	cmd.Flags().IntVar(&f.maxPartitions, "max-partitions", 0, "with --cluster: cap on an internal topic's partitions (0: one partition per key group); every instance must give the same")
	cmd.Flags().DurationVar(&f.sessionTimeout, "session-timeout", 6*time.Second, "with --cluster: how long the group waits for a silent (killed) instance before its units move")
}

// clusterRun is what runCluster needs of runPipeline.
type clusterRun struct {
	file   string
	p      *pipeline.Pipeline
	g      *plan.JobGraph
	hs     settings.Settings
	roots  []string
	opts   plan.Options
	flags  clusterRunFlags
	log    *slog.Logger
	stderr io.Writer
	stdin  io.Reader
	stdout io.Writer
}

// runCluster runs this instance's share of the job: it joins the job's
// consumer group and runs, as a job of its own with checkpoints in the
// job's (shared) storage, each unit the group gives it, restored from the
// unit's last completed checkpoint.
func runCluster(ctx context.Context, r clusterRun) error {
	fail := func(err error) error {
		fmt.Fprintln(r.stderr, "error:", err)
		return exitCode(1)
	}
	if r.flags.instance == "" {
		return fail(errors.New("--cluster needs --instance NAME, unique among the job's instances"))
	}
	ft := jobFaultTolerance(r.file, r.p, r.hs)
	if !ft.On() || ft.Checkpoint.Storage == "" {
		return fail(errors.New("--cluster: the job must checkpoint (checkpointing: interval and storage, a folder every instance sees): a unit that moves is restored from its last completed checkpoint there"))
	}
	var brokers []string
	for _, b := range strings.Split(r.flags.brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	l, err := cluster.Plan(r.g, cluster.Config{Brokers: brokers, MaxPartitions: r.flags.maxPartitions})
	if err != nil {
		return fail(err)
	}
	jobs := map[string]*unitjob.Job{}
	graphs := map[string]*plan.JobGraph{}
	topics := map[string]int{}
	for _, ids := range l.UnitIDs() {
		for _, id := range ids {
			j, err := unitjob.Build(r.p, r.g, l, id, ft.Checkpoint.Mode == checkpoint.ExactlyOnce)
			if err != nil {
				return fail(err)
			}
			g, err := plan.Plan(j.Pipeline, r.opts)
			if err != nil {
				return fail(fmt.Errorf("cluster: unit %s: %w", id, err))
			}
			jobs[id], graphs[id] = j, g
			for t, n := range j.Topics {
				topics[t] = n
			}
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return fail(err)
	}
	defer cl.Close()
	if err := ensureTopics(ctx, cl, topics); err != nil {
		return fail(fmt.Errorf("cluster: internal topics: %w", err))
	}
	var host *plugin.Host
	if len(r.p.Plugins) > 0 {
		if host, err = plugin.New(ctx, r.hs.PluginConfig()); err != nil {
			return fail(err)
		}
		defer host.Close(context.Background())
	}
	conns := &connector.Builtin{Stdin: r.stdin, Stdout: r.stdout, Root: dirOf(r.file),
		Roots: confined(r.file, r.hs.DataRoots), RootsSetting: "data-roots", Checkpointed: true}
	in := &instance{r: r, ft: ft, jobs: jobs, graphs: graphs, conns: conns, host: host,
		running: map[string]*runningUnit{}, from: map[string]int64{}}
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	in.failRun = cancelRun
	d, err := kgroup.New(kgroup.Config{Client: cl, Group: l.Group, Instance: r.flags.instance, Stages: l.UnitIDs(),
		SessionTimeout: r.flags.sessionTimeout, RebalanceTimeout: 2 * r.flags.sessionTimeout,
		Checkpoints: in.checkpoints, Handler: kgroup.HandlerFunc(in.do),
		OnAssigned: func(gen int, owned []string, pause time.Duration) {
			in.say("generation %d (rebalance %v) owns %s", gen, pause.Round(time.Millisecond), strings.Join(owned, " "))
		}})
	if err != nil {
		return fail(err)
	}
	in.say("joining group %s (%d units in %d stages)", l.Group, len(jobs), len(l.Stages))
	err = d.Run(runCtx)
	if cause := context.Cause(runCtx); err == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	if err != nil {
		return fail(err)
	}
	in.say("left group %s", l.Group)
	if ctx.Err() != nil {
		return cancelExit(ctx)
	}
	return nil
}

func dirOf(file string) string {
	if i := strings.LastIndexAny(file, `/\`); i >= 0 {
		return file[:i]
	}
	return "."
}

// ensureTopics creates the internal topics that do not exist, each with
// the planner's partition count, and refuses one with another count.
func ensureTopics(ctx context.Context, cl *kgo.Client, topics map[string]int) error {
	adm := kadm.NewClient(cl)
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		n := topics[t]
		resp, err := adm.CreateTopic(tctx, int32(n), -1, nil, t)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("creating %s (%d partitions): %w", t, n, err)
		}
	}
	details, err := adm.ListTopics(tctx, names...)
	if err != nil {
		return err
	}
	for _, t := range names {
		d, ok := details[t]
		if !ok || d.Err != nil {
			return fmt.Errorf("topic %s: %v", t, d.Err)
		}
		if got := len(d.Partitions); got != topics[t] {
			return fmt.Errorf("topic %s has %d partitions, the layout %d: another layout (--max-partitions, max parallelism) made it", t, got, topics[t])
		}
	}
	return nil
}

// instance carries out the driver's unit actions.
type instance struct {
	r       clusterRun
	ft      faultTolerance
	jobs    map[string]*unitjob.Job
	graphs  map[string]*plan.JobGraph
	conns   *connector.Builtin
	host    *plugin.Host
	failRun context.CancelCauseFunc

	mu      sync.Mutex
	running map[string]*runningUnit
	from    map[string]int64 // unit -> the checkpoint its next start restores
}

type runningUnit struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// say prints one line of the instance's report, stamped in Unix
// nanoseconds (the multi-process test orders the instances' reports by
// it).
func (in *instance) say(format string, args ...any) {
	fmt.Fprintf(in.r.stderr, "cluster: %d instance %s: %s\n", time.Now().UnixNano(), in.r.flags.instance, fmt.Sprintf(format, args...))
}

// checkpoints is each unit's last completed checkpoint in the storage.
// A unit with no folder, or no checkpoint in it, has none and starts
// afresh; a folder whose checkpoints all fail to read is an error, as
// `host run --from latest` refuses it: the unit must not start over the
// state (and the pre-committed output) it had.
func (in *instance) checkpoints(units []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, u := range units {
		j := in.jobs[u]
		if j == nil {
			continue
		}
		dir := checkpoint.JobDir(in.ft.Checkpoint.Storage, j.Name)
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		rd, skipped, err := checkpoint.Latest(dir)
		switch {
		case err == nil:
			out[u] = int64(rd.Meta.ID)
		case len(skipped) > 0 || !errors.Is(err, checkpoint.ErrNoCheckpoint):
			return nil, fmt.Errorf("unit %s: its checkpoints cannot be restored: %w", u, err)
		}
	}
	return out, nil
}

func (in *instance) do(ctx context.Context, a cluster.Action) error {
	switch a.Kind {
	case cluster.Restore:
		in.mu.Lock()
		for _, u := range a.Units {
			in.from[u] = a.Checkpoint
		}
		in.mu.Unlock()
		if a.Checkpoint > 0 {
			in.say("restore %s from checkpoint %d", strings.Join(a.Units, " "), a.Checkpoint)
		}
		return nil
	case cluster.Start:
		// said before they start, as a revoke is said once they stopped:
		// each report's moment is on the safe side of what it reports
		in.say("start %s", strings.Join(a.Units, " "))
		for _, u := range a.Units {
			if err := in.start(u); err != nil {
				return err
			}
		}
		return nil
	case cluster.Revoke, cluster.Abandon:
		for _, u := range a.Units {
			in.stop(u)
		}
		in.say("%s %s", a.Kind, strings.Join(a.Units, " "))
		return nil
	}
	return fmt.Errorf("unknown action %v", a)
}

// start runs unit u's job, restored from its checkpoint when it has one.
func (in *instance) start(u string) error {
	j, g := in.jobs[u], in.graphs[u]
	if j == nil {
		return fmt.Errorf("the group assigned unit %s, which the layout does not have: do all instances run the same job file?", u)
	}
	in.mu.Lock()
	cp := in.from[u]
	in.mu.Unlock()
	var from *checkpoint.Reader
	if cp > 0 {
		rd, skipped, err := checkpoint.Latest(checkpoint.JobDir(in.ft.Checkpoint.Storage, j.Name))
		for _, s := range skipped {
			in.say("unit %s: skipping %v", u, s.Err)
		}
		if err != nil {
			return fmt.Errorf("unit %s: restoring checkpoint %d: %w", u, cp, err)
		}
		from = rd
	}
	var plugins runtime.Plugins
	if in.host != nil && len(j.Pipeline.Plugins) > 0 {
		set, err := jobplugins.NewSet(context.Background(), in.host, j.Pipeline, g, confined(in.r.file, pluginRoots(in.r.file, in.r.roots)))
		if err != nil {
			return fmt.Errorf("unit %s: %w", u, err)
		}
		plugins = set
	}
	deps := runtime.Deps{Plugins: plugins, Connectors: j.Connectors(in.conns), Logger: in.r.log,
		Options: in.r.hs.RuntimeOptions(), StateBackends: pebblestate.Backends{Root: in.r.hs.StateDir}}
	startExec := func(ctx context.Context, acks jobmaster.Acks, restore *checkpoint.Reader) (jobmaster.Execution, error) {
		return startExecution(ctx, g, deps, acks, restore, in.ft.Checkpoint)
	}
	m, err := jobmaster.New(jobmaster.Config{Job: j.Name, Checkpoint: in.ft.Checkpoint, Restart: in.ft.Restart, From: from, Log: in.r.log}, startExec)
	if err != nil {
		return fmt.Errorf("unit %s: %w", u, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ru := &runningUnit{cancel: cancel, done: make(chan struct{})}
	in.mu.Lock()
	in.running[u] = ru
	in.mu.Unlock()
	go func() {
		defer close(ru.done)
		_, err := m.Run(ctx)
		if ctx.Err() != nil {
			return // revoked
		}
		if err == nil {
			in.say("unit %s finished", u)
			return
		}
		ru.err = err
		in.failRun(fmt.Errorf("unit %s: %s", u, located(in.r.file, in.r.p, err)))
	}()
	return nil
}

// stop cancels unit u's job and waits for it to end.
func (in *instance) stop(u string) {
	in.mu.Lock()
	ru := in.running[u]
	delete(in.running, u)
	in.mu.Unlock()
	if ru == nil {
		return
	}
	ru.cancel()
	<-ru.done
}
