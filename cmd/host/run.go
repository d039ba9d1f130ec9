package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/checkpoint"
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

func init() { addCommand(newRunCmd) }

func newRunCmd() *cobra.Command {
	var progress, logLevel string
	var roots []string
	var ckpt checkpointFlags
	var cl clusterRunFlags
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a pipeline: print sinks write to stdout, progress and the summary go to stderr",
		Long: `Run lints, plans and executes a pipeline on this machine. Problems in the
file are printed as file:line:col and exit 1. Print sinks write to stdout,
so it stays parseable; logs, progress and the end-of-run summary (records
per operator, rate, skew, back-pressure, hot keys) go to stderr. Ctrl-C
(SIGINT) or SIGTERM cancels the job, which ends with its summary and exit
128+signal (130 for SIGINT, 143 for SIGTERM); a second one quits at once (a print sink blocked writing to a full
pipe cannot end by itself). A failed job exits 1 with the first error, naming
the operator and subtask.

Plugin files are read, and the files of file sources and sinks are read
and written, only inside the pipeline's folder and the --plugin-root folders
(plugins) or the data-roots setting (data), both the working directory by
default, through os.Root. A job whose plugin instances could together pass
the job-memory setting (MiB) is refused before it starts. Operators follow
their on-error; the summary counts skipped and dead-lettered records and
plugin restarts (settings restart-attempts, restart-delay, restart-window).

--progress auto shows a live line (done/total, rate, ETA) when stderr is a
terminal and a plain line every few seconds otherwise; plain always prints
lines; none prints no progress.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPipeline(cmd, args[0], progress, logLevel, roots, ckpt, cl)
		},
	}
	cmd.Flags().StringVar(&progress, "progress", "auto", "progress display: auto, plain or none")
	cmd.Flags().StringVar(&logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
	cmd.Flags().Int("batch-size", 0, "records per batch between tasks (default from the host settings: 1024)")
	cmd.Flags().Duration("linger", 0, "longest a partly filled batch waits before it is sent (default 5ms)")
	cmd.Flags().Int("slots", 0, "task slots this host offers (0: unlimited); the job is refused if it needs more")
	addModeFlag(cmd)
	cmd.Flags().Int64("fuel-rate", 0, "fuel units per second the job's plugins may spend, over all instances (0: no cap)")
	addPluginLimitFlags(cmd.Flags())
	settings.AddFlags(cmd.Flags(), settings.Keys...) // the rest of the host settings
	addPluginRootFlag(cmd, &roots)
	addCheckpointFlags(cmd, &ckpt)
	addClusterRunFlags(cmd, &cl)
	return cmd
}

func runPipeline(cmd *cobra.Command, file, progress, logLevel string, roots []string, ckpt checkpointFlags, cl clusterRunFlags) error {
	stderr := &syncWriter{w: cmd.ErrOrStderr()}
	if progress != "auto" && progress != "plain" && progress != "none" {
		return fmt.Errorf("unknown --progress %q: use auto, plain or none", progress)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if err := ckpt.check(); err != nil {
		return err
	}
	if cl.brokers == "" && (cl.instance != "" || cl.maxPartitions != 0) {
		return errors.New("--instance and --max-partitions need --cluster BROKERS")
	}
	if cl.brokers != "" && (ckpt.from != "" || ckpt.savepointDir != "") {
		return errors.New("--cluster restores each unit from its own checkpoints: --from and --savepoint-dir do not apply")
	}
	hs, err := hostSettings(cmd)
	if err != nil {
		return err
	}
	p, err := readPipeline(file, roots)
	var g *plan.JobGraph
	if err == nil {
		err = pipeline.OnlySources(p)
	}
	var opts plan.Options
	if err == nil {
		if opts, err = planOptions(cmd, hs); err != nil {
			return err
		}
		g, err = plan.Plan(p, opts)
	}
	if err != nil {
		printProblems(stderr, file, err)
		return exitCode(1)
	}
	if cl.brokers != "" {
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
		return runCluster(ctx, clusterRun{file: file, p: p, g: g, hs: hs, roots: roots, opts: opts, flags: cl, log: log,
			stderr: stderr, stdin: cmd.InOrStdin(), stdout: cmd.OutOrStdout()})
	}
	ft := jobFaultTolerance(file, p, hs)
	var from *checkpoint.Reader
	if ckpt.wanted(ft) {
		if from, err = prepareCheckpointed(file, p, ft, ckpt, stderr); err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return exitCode(1)
		}
		if from != nil {
			if err := jobmaster.CheckRestore(from, g); err != nil {
				fmt.Fprintf(stderr, "error: --from %s: %v\n", ckpt.from, err)
				return exitCode(1)
			}
			fmt.Fprintf(stderr, "restoring from %s (%s %d)\n", from.Path, from.Meta.Kind, from.Meta.ID)
		}
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	// the first signal cancels the job; say so, and that a second quits
	// at once (a sink blocked on a full stdout pipe cannot end by itself)
	stopAnnounce := announceCancel(ctx, stderr, fmt.Sprintf("cancelling job %q", p.Name))
	defer stopAnnounce()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	// a signal cancels the run wherever it is, and that is no failure
	// (planning does not watch the context: loading or starting sees a
	// signal that came meanwhile)
	cancelled := func(stage string, err error) error {
		fmt.Fprintf(stderr, "cancelled: job %q while %s: %v\n", p.Name, stage, err)
		return cancelExit(ctx)
	}
	plugins, closePlugins, err := loadPlugins(ctx, log, file, p, g, hs, roots)
	if err != nil {
		if ctx.Err() != nil {
			return cancelled("loading plugins", err)
		}
		fmt.Fprintln(stderr, "error:", withBuildHint(err, err.Error()))
		return exitCode(1)
	}
	defer closePlugins()
	// file sources and sinks may use the pipeline's folder and the data roots
	conns := &connector.Builtin{Stdin: cmd.InOrStdin(), Stdout: cmd.OutOrStdout(), Root: filepath.Dir(file),
		Roots: confined(file, hs.DataRoots), RootsSetting: "data-roots"}
	if err := conns.CheckSameFiles(p); err != nil { // before a sink's Open truncates a source's file
		printProblems(stderr, file, err)
		return exitCode(1)
	}
	deps := runtime.Deps{
		Plugins:    plugins,
		Connectors: conns,
		Logger:     log,
		Options:    hs.RuntimeOptions(),
		// keyed state on Pebble, under state-dir unless the pipeline says
		StateBackends: pebblestate.Backends{Root: hs.StateDir},
	}
	if ckpt.wanted(ft) {
		return runCheckpointed(ctx, checkpointedRun{file: file, p: p, g: g, deps: deps, conns: conns, ft: ft, flags: ckpt, from: from, log: log, stderr: stderr, stopAnnounce: stopAnnounce})
	}
	job, err := runtime.Start(ctx, g, deps)
	if err != nil {
		if ctx.Err() != nil {
			return cancelled("starting (opening its connectors)", err)
		}
		fmt.Fprintln(stderr, "error:", err)
		return exitCode(1)
	}
	stopProgress := showProgress(stderr, progress, job)
	res, err := job.Wait()
	stopProgress()
	stopAnnounce()
	// a job that failed before its sources produced a record (an open
	// refused its config) has no figures to show: its error stands alone
	if res != nil && (err == nil || res.Done > 0) {
		_ = res.WriteSummary(stderr)
	}
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil: // cancelled, whatever stopped a task on the way
		fmt.Fprintln(stderr, "cancelled:", err)
		return cancelExit(ctx)
	}
	fmt.Fprintln(stderr, "error:", located(file, p, err))
	return exitCode(1)
}

// located prefixes a job's error with the place in the pipeline file it
// comes from: the key-by of the operator whose key could not be read, or
// the kind (sum: amount, map: plugin, source: ...) of the operator that
// failed.
func located(file string, p *pipeline.Pipeline, err error) string {
	var pos pipeline.Pos
	var ke *runtime.KeyError
	var oe *runtime.OpError
	if errors.As(err, &oe) {
		pos = configErrorPos(p, p.Operator(oe.Operator), err) // the value a plugin's open refused
	}
	switch {
	case pos.Line > 0:
	case errors.As(err, &ke):
		if op := p.Operator(ke.To); op != nil {
			pos = op.KeyPos["key-by"]
			if ke.What != "key-by" {
				pos = op.KeyPos["partition"]
			}
			if pos.Line == 0 {
				pos = op.Pos
			}
		}
	case errors.As(err, &oe):
		if op := p.Operator(oe.Operator); op != nil {
			if pos = op.KeyPos[string(op.Kind)]; pos.Line == 0 { // sum: amount, map: plugin...
				pos = op.Pos
			}
		}
	}
	if pos.Line == 0 {
		return err.Error()
	}
	return fmt.Sprintf("%s:%d:%d: %s", file, pos.Line, pos.Col, err)
}

// configErrorPos is where the config value a plugin's open refused was
// written: a config error (status SL_CONFIG) whose text starts
// "config KEY:" (after the SDKs' "open: "), as every SDK's getters and
// example write it, points at KEY in the operator's config when the
// plugin is the operator's (its keys win), else in the plugin's: an edge
// plugin (a partitioner, a key selector) opens with its plugin's config.
// The zero Pos otherwise.
func configErrorPos(p *pipeline.Pipeline, op *pipeline.Operator, err error) pipeline.Pos {
	var pe *plugin.PluginError
	if !errors.As(err, &pe) || pe.Status != abi.StatusConfig {
		return pipeline.Pos{}
	}
	rest, ok := strings.CutPrefix(strings.TrimPrefix(pe.Text, "open: "), "config ")
	if !ok {
		return pipeline.Pos{}
	}
	key, _, ok := strings.Cut(rest, ":")
	if !ok || key == "" {
		return pipeline.Pos{}
	}
	if op != nil && op.Plugin == pe.Plugin && pe.Edge == "" {
		if pos, ok := op.ConfigPos[key]; ok {
			return pos
		}
	}
	if pl := p.Plugins[pe.Plugin]; pl != nil {
		return pl.ConfigPos[key]
	}
	return pipeline.Pos{}
}

// printProblems prints every problem of a pipeline as file:line:col.
func printProblems(w io.Writer, file string, err error) {
	var list pipeline.Errors
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(w, e)
		}
		return
	}
	fmt.Fprintf(w, "%s: %v\n", file, err)
}

// loadPlugins compiles the pipeline's plugins (paths relative to the
// pipeline file, opened through os.Root of the pipeline's folder and the
// plugin roots) into a plugin.Set, after checking the job's plugin memory
// against its budget; nil when the pipeline has none.
func loadPlugins(ctx context.Context, log *slog.Logger, file string, p *pipeline.Pipeline, g *plan.JobGraph, hs settings.Settings, roots []string) (runtime.Plugins, func(), error) {
	if len(p.Plugins) == 0 {
		return nil, func() {}, nil
	}
	if err := jobplugins.CheckJobMemory(g, hs.MemoryPages, hs.JobMemoryBytes(), "setting job-memory"); err != nil {
		return nil, nil, err
	}
	cfg := hs.PluginConfig()
	if cfg.CacheDir != "" {
		if err := os.MkdirAll(cfg.CacheDir, 0o755); err != nil {
			// an unusable cache costs compile time, not correctness
			log.Warn("compiling plugins without a cache", "cache-dir", cfg.CacheDir, "err", err)
			cfg.CacheDir = ""
		}
	}
	h, err := plugin.New(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	closeHost := func() { _ = h.Close(context.Background()) }
	set, err := jobplugins.NewSet(ctx, h, p, g, confined(file, pluginRoots(file, roots)))
	if err != nil {
		closeHost()
		return nil, nil, err
	}
	return set, closeHost, nil
}

// confined is the folders a run may open files in: the pipeline file's
// folder and extra (the working directory when extra is empty).
func confined(file string, extra []string) []string {
	out := []string{filepath.Dir(file)}
	if len(extra) == 0 {
		if wd, err := os.Getwd(); err == nil {
			extra = []string{wd}
		}
	}
	return append(out, extra...)
}

// showProgress starts the progress display and returns its stop function.
func showProgress(w io.Writer, mode string, job *runtime.Execution) func() {
	if mode == "none" {
		return func() {}
	}
	live := mode == "auto" && isTerminal(w)
	every := 5 * time.Second
	if live {
		every = 200 * time.Millisecond
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				line := progressLine(job.Snapshot())
				if live {
					fmt.Fprintf(w, "\r\033[K%s", line)
				} else {
					fmt.Fprintln(w, line)
				}
			case <-stop:
				if live {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			}
		}
	}()
	return func() { close(stop); <-done }
}

// progressLine says how far the sources are: done/total, rate and ETA for
// a bounded job, done and rate otherwise.
func progressLine(r *runtime.Result) string {
	secs := r.Duration.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(r.Done) / secs
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", r.Job, count(r.Done))
	if r.Total > 0 {
		fmt.Fprintf(&b, "/%s records (%.0f%%)", count(r.Total), 100*float64(r.Done)/float64(r.Total))
	} else {
		b.WriteString(" records")
	}
	fmt.Fprintf(&b, ", %s records/s", count(int64(rate)))
	if r.Total > 0 && rate > 0 && r.Done < r.Total {
		eta := time.Duration(float64(r.Total-r.Done) / rate * float64(time.Second))
		fmt.Fprintf(&b, ", ETA %s", eta.Round(time.Second))
	}
	var bp int64
	for _, m := range r.Operators {
		bp = max(bp, m.MaxBackPressuredMs) // a subtask's: a sum over subtasks can exceed the time
	}
	if bp > 0 {
		fmt.Fprintf(&b, ", back-pressured %s", (time.Duration(bp) * time.Millisecond).Round(time.Millisecond))
	}
	return b.String()
}

// count writes n compactly: 950, 12.3K, 4.5M.
func count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fG", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
