package server

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
)

// PipelineFile is the name lint problems of a submitted pipeline carry.
const PipelineFile = "pipeline.yaml"

// What tenants may use: sources and sinks that touch neither the host's
// files nor its standard streams.
var (
	tenantSources = []string{"elements", "generator"}
	tenantSinks   = []string{"collect", "discard"}
)

// prepared is a submitted pipeline that passed lint and planning.
type prepared struct {
	pipeline *pipeline.Pipeline
	graph    *plan.JobGraph
	plugins  map[string]*storedPlugin // by the name the pipeline gives
	collects int                      // collect sinks
}

// prepare lints a tenant's pipeline, applies the server's connector
// policy, resolves its plugins in the tenant's store and plans it. Every
// problem with a place comes back at once, as an Invalid *Error with
// Problems.
func (s *Server) prepare(t *tenant, src []byte) (*prepared, error) {
	marked, collects, errs := markCollect(src)
	// A plugin's path names an uploaded plugin, not a file: the CLI's
	// checks of file paths do not apply (resolvePlugins says what to use).
	p, err := pipeline.Parse(PipelineFile, marked, pipeline.ParseOptions{AllowAbsolutePaths: true,
		MaxBytes: s.cfg.Server.MaxPipelineBytes})
	if err != nil {
		return nil, lintError(append(errs, withoutDiscardOptions(problemsOf(err), errs)...))
	}
	restoreCollect(p, collects)
	errs = append(errs, policy(p)...)
	errs = append(errs, size(p)...)
	if err := pipeline.OnlySources(p); err != nil {
		errs = append(errs, problemsOf(err)...)
	}
	plugins := s.resolvePlugins(t, p, &errs)
	if len(errs) > 0 {
		return nil, lintError(errs)
	}
	g, err := plan.Plan(p, plan.Options{Slots: s.cfg.Host.Slots})
	if err != nil {
		return nil, lintError(problemsOf(err))
	}
	return &prepared{pipeline: p, graph: g, plugins: plugins, collects: len(collects)}, nil
}

// prepareBounded is prepare holding a parse token of t (one pipeline of
// a tenant at a time) and one of the server (Config.Parses at once): a
// pipeline's YAML tree costs about 30 times its bytes however the parse
// ends, so a burst of large submissions would otherwise take that many
// times the memory at once. A submission waiting for its turn gives up
// when ctx ends (the client went away).
func (s *Server) prepareBounded(ctx context.Context, t *tenant, src []byte) (*prepared, error) {
	release, err := acquire(ctx, t.parse, "one of tenant "+t.cfg.Name+"'s pipelines")
	if err != nil {
		return nil, err
	}
	defer release()
	release, err = acquire(ctx, s.parses, "other pipelines")
	if err != nil {
		return nil, err
	}
	defer release()
	if s.parsing != nil {
		s.parsing(t.cfg.Name)
	}
	return s.prepare(t, src)
}

// acquire takes a token of sem, waiting until one is free or ctx ends.
func acquire(ctx context.Context, sem chan struct{}, whose string) (func(), error) {
	refuse := func() (func(), error) {
		return nil, errorf(Unavailable, "server", "gave up waiting while the server parsed or compiled %s: %v", whose, context.Cause(ctx))
	}
	if ctx.Err() != nil {
		return refuse()
	}
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	default:
	}
	wait := time.NewTimer(QueueWait)
	defer wait.Stop()
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return refuse()
	case <-wait.C:
		return nil, errorf(Unavailable, Busy, "waited %s while the server parsed or compiled %s: retry later", QueueWait, whose)
	}
}

// QueueWait is the longest a request waits for a parse token: past it the
// server answers 503 with Retry-After rather than hold the request until
// the HTTP server's write timeout drops the connection with no reply.
var QueueWait = 20 * time.Second

// Busy is the Where of the refusal of a request that waited QueueWait.
const Busy = "server busy"

// maxOperators and maxSubtasks bound what a submitted pipeline may ask to
// plan: the plan holds every operator's key-group ranges per subtask, so a
// file of thousands of operators at parallelism 32768 cost 11 GB to plan,
// before the slots quota could refuse it. A job that could run on any
// host is far below both; one within them but over the quota gets the
// quota's answer.
const (
	maxOperators = 1000
	maxSubtasks  = 1 << 20
)

// size refuses, before planning, a pipeline too large to plan.
func size(p *pipeline.Pipeline) pipeline.Errors {
	if len(p.Operators) > maxOperators {
		return pipeline.Errors{&pipeline.Error{File: PipelineFile, Pos: p.KeyPos["operators"], Msg: fmt.Sprintf(
			"%d operators: this server plans at most %d", len(p.Operators), maxOperators)}}
	}
	total, widest := 0, (*pipeline.Operator)(nil)
	widestPar := 0
	for _, op := range p.Operators {
		par := p.ParallelismOf(op)
		if total += par; par > widestPar {
			widest, widestPar = op, par
		}
	}
	if total <= maxSubtasks {
		return nil
	}
	pos := widest.KeyPos["parallelism"]
	if pos.Line == 0 {
		pos = p.KeyPos["parallelism"]
	}
	return pipeline.Errors{&pipeline.Error{File: PipelineFile, Pos: pos, Msg: fmt.Sprintf(
		"%d subtasks (operator %s alone has %d): this server plans at most %d; lower the parallelism", total, widest.ID, widestPar, maxSubtasks)}}
}

// policy refuses the connectors tenants may not use.
func policy(p *pipeline.Pipeline) pipeline.Errors {
	var errs pipeline.Errors
	names := make([]string, 0, len(p.Plugins))
	for name := range p.Plugins {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if pl := p.Plugins[name]; len(pl.Grants) > 0 {
			// the server runs every plugin on the fake clock and the
			// seeded random source: ignoring the grant would run a job
			// other than the one written
			errs = append(errs, &pipeline.Error{File: PipelineFile, Pos: pl.GrantsPos, Msg: fmt.Sprintf(
				"plugin %s: grant %s is not offered by this server: its plugins see a fake clock and a seeded random source, so a job's output does not depend on when or where it runs; remove grant",
				name, strings.Join(pl.Grants, ", "))})
		}
	}
	for _, op := range p.Operators {
		if c := op.Source; c != nil && !contains(tenantSources, c.Type) {
			errs = append(errs, &pipeline.Error{File: PipelineFile, Pos: c.Pos, Msg: fmt.Sprintf(
				"operator %s: source type %s is not offered by this server (it reads the host's files or streams): use %s",
				op.ID, c.Type, strings.Join(tenantSources, " or "))})
		}
		if c := op.Sink; c != nil && !contains(tenantSinks, c.Type) {
			errs = append(errs, &pipeline.Error{File: PipelineFile, Pos: c.Pos, Msg: fmt.Sprintf(
				"operator %s: sink type %s is not offered by this server (it writes to the host's files or stdout): use collect (read it with GET /v1/jobs/{id}/output) or discard",
				op.ID, c.Type)})
		}
	}
	return errs
}

// resolvePlugins finds each plugin the pipeline declares in the tenant's
// store: its path is the name it was uploaded under, or sha256:<hex>.
func (s *Server) resolvePlugins(t *tenant, p *pipeline.Pipeline, errs *pipeline.Errors) map[string]*storedPlugin {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]*storedPlugin{}
	var known []string
	for n := range t.byName {
		known = append(known, n)
	}
	sort.Strings(known)
	for name, pl := range p.Plugins {
		sp := t.lookupLocked(pl.Path)
		if sp == nil {
			list := "none uploaded yet: POST /v1/plugins?name=" + name
			if len(known) > 0 {
				list = "uploaded: " + strings.Join(known, ", ")
			}
			what := "names no plugin of tenant " + t.cfg.Name
			if strings.ContainsAny(pl.Path, `/\`) || strings.HasSuffix(pl.Path, ".wasm") {
				what = "is a file path: this server loads no files, only the plugins tenant " + t.cfg.Name + " uploaded"
			}
			*errs = append(*errs, &pipeline.Error{File: PipelineFile, Pos: pl.Pos, Msg: fmt.Sprintf(
				"plugin %s: path %q %s (give an uploaded plugin's name or its sha256:<hex> digest; %s)",
				name, pl.Path, what, list)})
			continue
		}
		out[name] = sp
	}
	return out
}

// withoutDiscardOptions drops the linter's complaint about an option of
// a collect sink (which it saw as discard) where markCollect already
// reported it in the collect sink's words.
func withoutDiscardOptions(list, collectProblems pipeline.Errors) pipeline.Errors {
	at := map[pipeline.Pos]bool{}
	for _, e := range collectProblems {
		at[e.Pos] = true
	}
	out := list[:0:0]
	for _, e := range list {
		if !(at[e.Pos] && strings.Contains(e.Msg, "in sink discard")) {
			out = append(out, e)
		}
	}
	return out
}

// problemsOf turns a parse or plan error into problems; an error with no
// place becomes one problem at 0:0.
func problemsOf(err error) pipeline.Errors {
	var list pipeline.Errors
	if errors.As(err, &list) {
		return list
	}
	return pipeline.Errors{{File: PipelineFile, Msg: err.Error()}}
}

// tenantWords rewrites the linter's lists of connector types to what
// this server offers.
var tenantWords = strings.NewReplacer(
	"one of discard, file, print", "one of "+strings.Join(tenantSinks, ", "),
	"one of elements, file, generator, stdin", "one of "+strings.Join(tenantSources, ", "),
)

func lintError(errs pipeline.Errors) *Error {
	errs.Sort()
	e := &Error{Code: Invalid, Where: PipelineFile, Problems: make([]Problem, 0, len(errs))}
	var lines []string
	for _, pe := range errs {
		msg := tenantWords.Replace(pe.Msg)
		e.Problems = append(e.Problems, Problem{Line: pe.Pos.Line, Col: pe.Pos.Col, Message: msg})
		lines = append(lines, fmt.Sprintf("%d:%d: %s", pe.Pos.Line, pe.Pos.Col, msg))
	}
	e.Msg = fmt.Sprintf("the pipeline has %d problem(s): %s", len(errs), strings.Join(lines, "; "))
	if len(errs) == 1 {
		e.Msg = "the pipeline has a problem: " + lines[0]
	}
	return e
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
