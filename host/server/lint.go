package server

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	connspec "github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
)

// PipelineFile is the name lint problems of a submitted pipeline carry.
const PipelineFile = "pipeline.yaml"

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
	// A plugin's path names an uploaded plugin, not a file: the CLI's
	// checks of file paths do not apply (resolvePlugins says what to use).
	k := s.kafkaPolicyFor(t.cfg.Name, "")
	kafka := k != nil
	p, err := pipeline.Parse(PipelineFile, src, pipeline.ParseOptions{AllowAbsolutePaths: true,
		MaxBytes: s.cfg.Server.MaxPipelineBytes, Connectors: connectorSet})
	if err != nil {
		return nil, lintErrorFor(problemsOf(err), kafka)
	}
	errs := policy(p, k)
	errs = append(errs, size(p)...)
	if err := pipeline.OnlySources(p); err != nil {
		errs = append(errs, problemsOf(err)...)
	}
	plugins := s.resolvePlugins(t, p, &errs)
	if len(errs) > 0 {
		return nil, lintErrorFor(errs, kafka)
	}
	g, err := plan.Plan(p, plan.Options{Slots: s.cfg.Host.Slots})
	if err != nil {
		return nil, lintErrorFor(problemsOf(err), kafka)
	}
	return &prepared{pipeline: p, graph: g, plugins: plugins, collects: collects(p)}, nil
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

// policy refuses the connectors tenants may not use, and what the Kafka
// policy k (nil: no Kafka) refuses in a kafka source or sink.
func policy(p *pipeline.Pipeline, k *kafkaPolicy) pipeline.Errors {
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
	kafkaOn := k != nil
	for _, op := range p.Operators {
		if c := op.Source; c != nil && !offered(connspec.Source, c.Type) && !(kafkaOn && c.Type == kafkaType) {
			errs = append(errs, &pipeline.Error{File: PipelineFile, Pos: c.Pos, Msg: fmt.Sprintf(
				"operator %s: source type %s is not offered by this server (it reaches the host's files, streams or network): use %s",
				op.ID, c.Type, strings.Join(tenantNames(connspec.Source, kafkaOn), " or "))})
		}
		if c := op.Sink; c != nil && !offered(connspec.Sink, c.Type) && !(kafkaOn && c.Type == kafkaType) {
			also := ""
			if kafkaOn {
				also = ", kafka"
			}
			errs = append(errs, &pipeline.Error{File: PipelineFile, Pos: c.Pos, Msg: fmt.Sprintf(
				"operator %s: sink type %s is not offered by this server (it reaches the host's files, streams or network): use collect (read it with GET /v1/jobs/{id}/output)%s or discard",
				op.ID, c.Type, also)})
		}
		if kafkaOn {
			errs = append(errs, k.lint(op)...)
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

// collects counts the collect sinks of p.
func collects(p *pipeline.Pipeline) int {
	n := 0
	for _, op := range p.Operators {
		if op.Sink != nil && op.Sink.Spec == Collect {
			n++
		}
	}
	return n
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
// this server offers: [0] without Kafka, [1] with it.
var tenantWords = func() (out [2]*strings.Replacer) {
	for i, kafka := range []bool{false, true} {
		out[i] = strings.NewReplacer(
			"one of "+strings.Join(connectorSet.Names(connspec.Sink), ", "), "one of "+strings.Join(tenantNames(connspec.Sink, kafka), ", "),
			"one of "+strings.Join(connectorSet.Names(connspec.Source), ", "), "one of "+strings.Join(tenantNames(connspec.Source, kafka), ", "),
		)
	}
	return out
}()

// notOffered drops, from the linter's problem with a connector type, a
// suggestion of a connector this server does not offer: a tenant who
// wrote "prnt" is not told to write print ([0] without Kafka, [1] with).
var notOffered = func() (out [2]*strings.Replacer) {
	for i, kafka := range []bool{false, true} {
		var pairs []string
		for _, c := range connectorSet.All() {
			if !offered(c.Role, c.Name) && !(kafka && c.Name == kafkaType) {
				pairs = append(pairs, fmt.Sprintf(" (did you mean %q?)", c.Name), "")
			}
		}
		out[i] = strings.NewReplacer(pairs...)
	}
	return out
}()

// lintError is the refusal of a pipeline with problems errs, on a server
// that offers no Kafka.
func lintError(errs pipeline.Errors) *Error { return lintErrorFor(errs, false) }

// lintErrorFor is lintError on a server that offers Kafka when kafka is
// set.
func lintErrorFor(errs pipeline.Errors, kafka bool) *Error {
	k := 0
	if kafka {
		k = 1
	}
	errs.Sort()
	e := &Error{Code: Invalid, Where: PipelineFile, Problems: make([]Problem, 0, len(errs))}
	var lines []string
	for _, pe := range errs {
		msg := tenantWords[k].Replace(pe.Msg)
		if strings.Contains(msg, " type must be one of ") {
			msg = notOffered[k].Replace(msg)
		}
		e.Problems = append(e.Problems, Problem{Line: pe.Pos.Line, Col: pe.Pos.Col, Message: msg})
		lines = append(lines, fmt.Sprintf("%d:%d: %s", pe.Pos.Line, pe.Pos.Col, msg))
	}
	e.Msg = fmt.Sprintf("the pipeline has %d problem(s): %s", len(errs), strings.Join(lines, "; "))
	if len(errs) == 1 {
		e.Msg = "the pipeline has a problem: " + lines[0]
	}
	return e
}
