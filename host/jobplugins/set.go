package jobplugins

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/plugin"
)

// NewSet loads the plugins of pipeline p into h and returns the Set a run
// of its plan g uses: modules under the pipeline's plugin names, with the
// pipeline's grants; the configs of edge plugins; the parallelism of
// upstream operators. Plugin paths are relative to p's file; with roots
// set they must lie inside one of those folders and are opened through
// os.Root (see plugin.Host.LoadFileIn). Calls run under ctx.
func NewSet(ctx context.Context, h *plugin.Host, p *pipeline.Pipeline, g *plan.JobGraph, roots []string) (*plugin.Set, error) {
	set := &plugin.Set{Context: ctx, Modules: map[string]*plugin.Module{}, Configs: map[string]map[string]any{}, Parallelism: map[string]int{}}
	names := make([]string, 0, len(p.Plugins))
	for name := range p.Plugins {
		names = append(names, name)
	}
	sort.Strings(names)
	var errs []error // every plugin that does not load, not just the first
	for _, name := range names {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx) // cancelled: compile no more
		}
		pl := p.Plugins[name]
		path := pl.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(p.File), path)
		}
		m, err := h.LoadNamed(ctx, roots, name, path)
		at := p.File // where the pipeline names the plugin
		if pl.Pos.Line > 0 {
			at = fmt.Sprintf("%s:%d:%d", p.File, pl.Pos.Line, pl.Pos.Col)
		}
		if err != nil {
			if namesPlugin(err, name) {
				errs = append(errs, fmt.Errorf("%s: %w", at, err)) // it names the plugin already
			} else {
				errs = append(errs, fmt.Errorf("%s: plugin %q: %w", at, name, err))
			}
			continue
		}
		grants, err := plugin.ParseGrants(pl.Grants)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: plugin %q: %w", at, name, err))
			continue
		}
		set.Modules[name] = m.Grant(grants)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// partitioners and key selectors are opened with their plugin's config
	// and the upstream operator's parallelism
	for _, op := range g.Operators {
		set.Parallelism[op.ID] = op.Parallelism
	}
	for _, e := range g.Edges {
		name := e.CustomPlugin
		if name == "" {
			name = e.KeyPlugin
		}
		if pl := p.Plugins[name]; pl != nil {
			set.Configs[plan.EdgeKey(e.From, e.To)] = pl.Config
		}
	}
	if err := CheckUses(ctx, p, set.Modules); err != nil {
		return nil, err
	}
	return set, nil
}
