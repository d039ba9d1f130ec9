package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/jobmaster"
	"github.com/sluicehq/sluice/host/jobplugins"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// Submit lints, plans and admits a tenant's pipeline, then starts it. A
// pipeline larger than the max-pipeline-bytes setting is TooLarge; one
// with problems is Invalid with every problem at its line and column; a
// job over a quota is QuotaExceeded with the numbers. The job
// runs on its own plugin host with the tenant's limits until it ends or
// is cancelled; ctx only bounds the submission (compiling plugins).
func (s *Server) Submit(ctx context.Context, p Principal, src []byte) (JobStatus, error) {
	return s.SubmitWith(ctx, p, src, SubmitOptions{})
}

// SubmitOptions are how a submitted job starts.
type SubmitOptions struct {
	// From is a savepoint or checkpoint folder (or its _metadata) that the
	// job starts from, as Flink's savepointPath: absolute, or relative to
	// the tenant's checkpoint folder, and inside it either way. The job
	// must checkpoint (checkpointing: interval).
	From string
	// AllowNonRestoredState drops the state of operators the pipeline no
	// longer has, as Flink's allowNonRestoredState; without it such
	// state is refused.
	AllowNonRestoredState bool
}

// SubmitWith is Submit with options: a job restored from a savepoint.
func (s *Server) SubmitWith(ctx context.Context, p Principal, src []byte, opts SubmitOptions) (JobStatus, error) {
	t, err := s.tenantOf(p, "submit jobs")
	if err != nil {
		return JobStatus{}, err
	}
	if !s.Ready() { // before parsing: it would be refused after
		return JobStatus{}, errorf(Unavailable, "server", "the server is shutting down: it accepts no new job")
	}
	if limit := s.cfg.Server.MaxPipelineBytes; len(src) > limit {
		return JobStatus{}, errorf(TooLarge, "pipeline", "the pipeline is %d bytes, the limit is %d (server setting max-pipeline-bytes)", len(src), limit)
	}
	pr, err := s.prepareBounded(ctx, t, src)
	if err != nil {
		return JobStatus{}, err
	}
	u := need(pr.graph, t.cfg.InstancePages)
	s.mu.Lock()
	err = s.admitLocked(t, u)
	s.mu.Unlock()
	if err != nil {
		if CodeOf(err) == QuotaExceeded {
			t.refused.Add(1)
		}
		return JobStatus{}, err
	}
	j, err := s.start(ctx, t, pr, u, opts)
	if err != nil {
		s.mu.Lock()
		s.unreserveLocked(t, u)
		s.mu.Unlock()
		return JobStatus{}, err
	}
	t.submitted.Add(1)
	s.log.Info("job started", "job", j.ID, "tenant", j.Tenant, "job_name", j.Name, "slots", u.slots, "memory_pages", u.pages)
	return j.status(), nil
}

// start builds the job's plugin host and connectors and starts it. The
// quota is reserved.
func (s *Server) start(ctx context.Context, t *tenant, pr *prepared, u usage, opts SubmitOptions) (*Job, error) {
	j := &Job{ID: newID(), Tenant: t.cfg.Name, Name: pr.graph.Name, Mode: string(pr.graph.Mode), Submitted: time.Now(),
		graph: pr.graph, planJSON: writePlan(pr.graph), plugins: map[string]string{}, need: u,
		out: newTail(s.cfg.Server.OutputRecords, s.cfg.Server.OutputBytes), done: make(chan struct{}), state: Running}
	j.meter = &meter{onError: j.addException}
	ft, ckpt, err := s.faultTolerance(t, pr.pipeline)
	if err != nil {
		return nil, err
	}
	var from *checkpoint.Reader
	if opts.From != "" {
		if !ckpt {
			return nil, errorf(Invalid, "from", "a job restored from a savepoint must checkpoint: set checkpointing: interval in the pipeline")
		}
		if from, err = s.openFrom(t, pr, opts); err != nil {
			return nil, err
		}
		j.restoredFrom = from.Path
	}
	jctx, stop := context.WithCancel(s.ctx)
	j.stop = stop
	conns := newConnectors(j.out, s.kafkaPolicyFor(t.cfg.Name, j.ID))
	deps := runtime.Deps{
		Connectors: conns,
		Logger:     s.log.With("job", j.ID, "tenant", j.Tenant),
		Options:    s.cfg.Host.RuntimeOptions(),
	}
	if len(pr.plugins) > 0 {
		set, h, err := s.loadPlugins(ctx, jctx, t, pr, j)
		if err != nil {
			stop()
			return nil, err
		}
		j.host = h
		deps.Plugins = &meteredPlugins{inner: set, m: j.meter}
	}
	// Shutdown waits for every job counted in wg, and cancels s.ctx, the
	// parent of every job: a job counted here cannot outlive it.
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		j.closeHost()
		stop()
		return nil, errorf(Unavailable, "server", "the server is shutting down: it accepts no new job")
	}
	s.wg.Add(1)
	s.mu.Unlock()
	var exec running
	if ckpt {
		conns.builtin.Checkpointed = true
		j.master, err = startMastered(jctx, j.ID, pr.graph, ft, deps, from, j.restarted)
		j.checkpointed, exec = true, j.master
	} else {
		exec, err = runtime.Start(jctx, pr.graph, deps)
	}
	if err != nil {
		s.wg.Done()
		j.closeHost()
		stop()
		// a batch job with an unbounded source, a source or sink refusing
		// its options: the pipeline's doing
		return nil, errorf(Invalid, "job "+pr.graph.Name, "cannot start: %v", err)
	}
	j.exec = exec
	s.mu.Lock()
	s.jobs[j.ID] = j
	t.running[j.ID] = j
	s.mu.Unlock()
	go s.watch(j)
	return j, nil
}

// loadPlugins compiles the job's plugins on a new host with the tenant's
// limits; the host is the job's and closes when it ends.
func (s *Server) loadPlugins(ctx, jctx context.Context, t *tenant, pr *prepared, j *Job) (*plugin.Set, *plugin.Host, error) {
	h, err := s.newPluginHost(ctx, t)
	if err != nil {
		return nil, nil, errorf(Internal, "plugin host", "%v", err)
	}
	set := &plugin.Set{Context: jctx, Modules: map[string]*plugin.Module{}, Configs: map[string]map[string]any{}, Parallelism: map[string]int{}}
	names := make([]string, 0, len(pr.plugins))
	for n := range pr.plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		sp := pr.plugins[name]
		m, err := h.Load(ctx, name, sp.bin)
		if err != nil {
			_ = h.Close(context.Background())
			return nil, nil, errorf(Unprocessable, "plugin "+name, "%v", err)
		}
		set.Modules[name] = m
		j.plugins[name] = sp.digest
	}
	for _, op := range pr.graph.Operators {
		set.Parallelism[op.ID] = op.Parallelism
	}
	for _, e := range pr.graph.Edges {
		name := e.CustomPlugin
		if name == "" {
			name = e.KeyPlugin
		}
		if pl := pr.pipeline.Plugins[name]; pl != nil {
			set.Configs[plan.EdgeKey(e.From, e.To)] = pl.Config
		}
	}
	if err := jobplugins.CheckUses(ctx, pr.pipeline, set.Modules); err != nil {
		_ = h.Close(context.Background())
		var uses pipeline.Errors
		if errors.As(err, &uses) {
			e := lintError(uses) // each use at its line and column, as lint's problems
			e.Code = Unprocessable
			return nil, nil, e
		}
		return nil, nil, errorf(Unprocessable, "pipeline", "%v", err)
	}
	return set, h, nil
}

// newID returns a job id: 32 hex digits, as Flink's JobID.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// openFrom opens and checks the savepoint a job starts from: inside the
// tenant's checkpoint folder, every byte whole, no state of an operator
// the job lacks (unless allowed), the max parallelism the state was
// written with.
func (s *Server) openFrom(t *tenant, pr *prepared, opts SubmitOptions) (*checkpoint.Reader, error) {
	dir := s.tenantCheckpointDir(t)
	path := opts.From
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	if rel, err := filepath.Rel(dir, path); err != nil || !filepath.IsLocal(rel) {
		return nil, errorf(Invalid, "from", "%q is outside the tenant's checkpoint folder: name a savepoint under it (the external_path GET /v1/jobs/{id}/checkpoints shows), or relative to it", opts.From)
	}
	r, err := checkpoint.Open(path)
	if err == nil {
		err = r.Verify()
	}
	// The tenant sees paths relative to its checkpoint folder, never the
	// server's own folders, and the API's flag, not the CLI's.
	tenantText := func(err error) string {
		t := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
		t = strings.ReplaceAll(t, dir, ".")
		return strings.ReplaceAll(t, "restore with --allow-non-restored-state", "submit with &allow-non-restored-state=true")
	}
	if err != nil {
		return nil, errorf(Invalid, "from", "%s", tenantText(err))
	}
	ids := make([]string, len(pr.pipeline.Operators))
	for i, op := range pr.pipeline.Operators {
		ids[i] = op.ID
	}
	if _, err := r.CheckOperators(ids, opts.AllowNonRestoredState); err != nil {
		return nil, errorf(Invalid, "from", "%s", tenantText(err))
	}
	if err := jobmaster.CheckRestore(r, pr.graph); err != nil {
		return nil, errorf(Invalid, "from", "%s", tenantText(err))
	}
	return r, nil
}
