// Package server is sluice's multi-tenant job server as a Go API: tenants
// authenticated by hashed tokens, their quotas, a content-addressed plugin
// store per tenant, and a job manager that lints, plans, admits and runs
// pipelines concurrently in one process, each job on its own plugin.Host
// with its tenant's limits (its fuel-rate shared by all its jobs). Monitoring is Go methods (Jobs, JobMetrics,
// Exceptions, Usage, Monitor); host/web adapts them to HTTP.
//
// Isolation rule: every method takes the Principal making the request.
// A tenant reaches only its own jobs and plugins; another tenant's id is
// NotFound, exactly like an id that never existed. The admin reaches
// everything but submits and uploads nothing.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/settings"
)

// Config is what a Server is made from.
type Config struct {
	Host   settings.Settings // engine and plugin settings: batch sizes, cache, host slots
	Server settings.Server   // tenants, rate limits, output tails, drain timeout
	Logger *slog.Logger      // nil: discard
	// Now is the rate limiter's clock; nil is time.Now. Tests pass a
	// fixed clock so that refills never race the test.
	Now func() time.Time
	// SampleEvery is how often a running job's metrics are sampled for
	// the per-second rates (busy, idle, back-pressured ms per second);
	// 0 is one second.
	SampleEvery time.Duration
	// Parses bounds the pipelines parsed at once over the server (each
	// tenant parses one at a time besides): parsing a pipeline costs about
	// 30 times its size in memory, however it ends. 0 is DefaultParses.
	Parses int
}

// DefaultParses is how many pipelines a server parses at once by default.
const DefaultParses = 2

// Server runs many tenants' jobs in one process. Its methods are safe for
// concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	creds   []credential
	tenants map[string]*tenant
	names   []string // tenant names, sorted
	limit   *limiter
	parses  chan struct{}       // a token per pipeline being parsed, at most Config.Parses
	parsing func(tenant string) // a test's hook, called while a parse holds its tokens

	ctx    context.Context // parent of every job; cancelled by Shutdown
	cancel context.CancelFunc

	mu        sync.Mutex
	jobs      map[string]*Job
	closing   bool
	slotsUsed int // over every tenant, against Host.Slots
	wg        sync.WaitGroup
}

// tenant is one tenant's state. Its maps are guarded by Server.mu.
type tenant struct {
	cfg     settings.Tenant
	plugins map[string]*storedPlugin // by digest
	byName  map[string]string        // name -> digest
	running map[string]*Job
	ended   []*Job            // oldest first, at most Server.JobHistory
	jobs    int               // admitted and not ended: running, or starting (compiling plugins)
	parse   chan struct{}     // holds a token while one of the tenant's pipelines is parsed
	pacer   *plugin.FuelPacer // its fuel-rate, shared by its jobs' plugin hosts; nil: no cap
	slots   int
	pages   int64

	submitted, finished, failed, canceled, refused, rateLimited atomic.Int64
}

// New builds a Server from its settings. It runs nothing until a job is
// submitted; Shutdown stops it.
func New(cfg Config) (*Server, error) {
	if err := cfg.Host.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Server.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Server.Tenants) == 0 && cfg.Server.AdminTokenSHA256 == "" {
		return nil, errors.New("server: no tenants and no admin: list tenants in the host config (tenants: or tenants-file:)")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = time.Second
	}
	if cfg.Parses <= 0 {
		cfg.Parses = DefaultParses
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, tenants: map[string]*tenant{}, jobs: map[string]*Job{},
		limit: newLimiter(cfg.Server.RateLimit, cfg.Server.RateBurst, cfg.Now), parses: make(chan struct{}, cfg.Parses)}
	if h := cfg.Server.AdminTokenSHA256; h != "" {
		sum, _ := decodeHash(h)
		s.creds = append(s.creds, credential{hash: sum, who: Principal{Admin: true}})
	}
	for _, t := range cfg.Server.Tenants {
		if t.InstancePages == 0 {
			t.InstancePages = cfg.Host.MemoryPages
		}
		if t.CallTimeout <= 0 {
			t.CallTimeout = cfg.Host.CallTimeout
		}
		sum, ok := decodeHash(t.TokenSHA256)
		if !ok {
			return nil, fmt.Errorf("tenant %s: token-sha256 is not 64 hex digits", t.Name)
		}
		s.creds = append(s.creds, credential{hash: sum, who: Principal{Tenant: t.Name}})
		s.tenants[t.Name] = &tenant{cfg: t, plugins: map[string]*storedPlugin{}, byName: map[string]string{}, running: map[string]*Job{},
			parse: make(chan struct{}, 1), pacer: plugin.NewFuelPacer(cmp.Or(t.FuelRate, cfg.Host.FuelRate))}
		s.names = append(s.names, t.Name)
	}
	sort.Strings(s.names)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Ready reports whether the server accepts jobs (false once Shutdown
// began).
func (s *Server) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closing
}

// Shutdown stops accepting jobs, lets the running ones end by themselves
// for up to the drain-timeout setting (a bounded job finishes, an
// unbounded one does not), cancels the rest, and waits until every job has
// ended and its plugin host (every instance) is closed. It returns early
// with ctx's error if ctx ends first; calling it again waits again.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	running := s.runningLocked()
	s.mu.Unlock()
	if len(running) > 0 {
		s.log.Info("shutdown: draining jobs", "running", len(running), "drain_timeout", s.cfg.Server.DrainTimeout)
		dctx, stop := context.WithTimeout(ctx, s.cfg.Server.DrainTimeout)
		for _, j := range running {
			select {
			case <-j.done:
			case <-dctx.Done():
			}
		}
		stop()
	}
	// Cancel what still runs: the jobs listed, and through s.ctx any job a
	// submission started meanwhile.
	s.mu.Lock()
	running = s.runningLocked()
	s.mu.Unlock()
	for _, j := range running {
		s.log.Info("shutdown: cancelling job", "job", j.ID, "tenant", j.Tenant)
		j.cancel("the server is shutting down")
	}
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shutdown: jobs still ending: %w", ctx.Err())
	}
}

func (s *Server) runningLocked() []*Job {
	var out []*Job
	for _, j := range s.jobs {
		if !j.ended() {
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// tenantOf returns p's tenant; the admin has none.
func (s *Server) tenantOf(p Principal, action string) (*tenant, error) {
	if p.Admin {
		return nil, errorf(Forbidden, "admin", "the admin token cannot %s: use a tenant's token (the job or plugin belongs to a tenant)", action)
	}
	t := s.tenants[p.Tenant]
	if t == nil {
		return nil, errorf(Forbidden, p.String(), "unknown tenant")
	}
	return t, nil
}
