package plan

import (
	"path/filepath"

	"github.com/sluicehq/sluice/host/pipeline"
)

// state resolves where the keyed state of spec lives: its own state:
// setting key by key, else the pipeline's, else the host's default
// (Options.StateBackend, StateDir), else the heap. Plugin operators, the
// built-in aggregations and windows keep their state on Pebble in
// STREAMING mode; BATCH mode's sorted input keeps its cells on the heap
// (Note says so).
// A relative dir is taken from the pipeline file's folder.
func (pl *planner) state(spec *pipeline.Operator) State {
	st := State{Backend: pl.opts.StateBackend, Dir: pl.opts.StateDir}
	relDir := false
	for _, s := range []*pipeline.StateSpec{pl.p.State, spec.State} {
		if s == nil {
			continue
		}
		if _, ok := s.KeyPos["backend"]; ok {
			st.Backend = s.Backend
		}
		if _, ok := s.KeyPos["dir"]; ok {
			st.Dir, relDir = s.Dir, true
		}
		if _, ok := s.KeyPos["disk-quota"]; ok {
			st.DiskQuota = s.DiskQuotaMiB << 20
		}
	}
	if relDir && st.Dir != "" && !filepath.IsAbs(st.Dir) && pl.p.File != "" {
		st.Dir = filepath.Join(filepath.Dir(pl.p.File), st.Dir)
	}
	if st.Backend == "" {
		st.Backend = pipeline.BackendHeap
	}
	if st.Backend != pipeline.BackendPebble {
		for _, s := range []*pipeline.StateSpec{pl.p.State, spec.State} {
			for _, k := range []string{"dir", "disk-quota"} {
				if pos, ok := s.KeyPosOf(k); ok {
					pl.errorf(pos, "operator '%s': state %s applies to the pebble backend, and its backend is %s: write backend: pebble", spec.ID, k, st.Backend)
				}
			}
		}
	}
	if st.Backend == pipeline.BackendPebble && pl.g.Mode == pipeline.Batch {
		st = State{Backend: pipeline.BackendHeap, Note: "pebble asked; BATCH mode sorts keyed input on the heap"}
	}
	if st.Backend != pipeline.BackendPebble {
		st.Dir, st.DiskQuota = "", 0
	}
	return st
}
