package plugin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/runtime"
)

// Set implements runtime.Plugins over loaded modules, so the engine can
// make one instance per subtask.
type Set struct {
	// Context bounds every call of the instances the Set makes (each call
	// also has its own deadline). Nil is context.Background().
	Context context.Context
	// Modules by plugin name, as the pipeline names them.
	Modules map[string]*Module
	// Configs by operator id, and by plan.EdgeKey ("from->to") for the
	// partitioner or key selector of an edge. An operator's
	// OpenContext.Config, when not nil, takes precedence.
	Configs map[string]map[string]any
	// Parallelism of upstream operators by id, and the max parallelism:
	// what a partitioner or key selector of an edge is opened with (1 and
	// 128 when absent, Flink's defaults).
	Parallelism    map[string]int
	MaxParallelism int
}

var _ runtime.Plugins = (*Set)(nil)

func (s *Set) module(plugin, user string) (*Module, error) {
	m, ok := s.Modules[plugin]
	if !ok {
		names := make([]string, 0, len(s.Modules))
		for n := range s.Modules {
			names = append(names, n)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("%s: no plugin named %q (loaded: %s)", user, plugin, strings.Join(names, ", "))
	}
	return m, nil
}

func (s *Set) ctx() context.Context {
	if s.Context == nil {
		return context.Background()
	}
	return s.Context
}

// Operator returns a new operator instance of plugin for operator opID.
// The wasm instance is made when the engine opens it.
func (s *Set) Operator(opID, plugin string, subtask int) (runtime.Operator, error) {
	m, err := s.module(plugin, "operator "+opID)
	if err != nil {
		return nil, err
	}
	op := m.NewOperator(s.ctx(), opID, s.Configs[opID])
	op.r.who.subtask = subtask
	return op.Stateful(), nil
}

// Partitioner returns a custom partitioner instance of plugin for the
// upstream subtask of edge from->to.
func (s *Set) Partitioner(plugin, from, to string, subtask int) (runtime.CustomPartitioner, error) {
	m, err := s.module(plugin, "edge "+plan.EdgeKey(from, to))
	if err != nil {
		return nil, err
	}
	p, maxP := s.parallelism(from)
	part, err := m.NewPartitioner(s.ctx(), from, to, subtask, p, maxP, s.Configs[plan.EdgeKey(from, to)])
	if err != nil {
		return nil, err
	}
	return part, nil
}

// KeySelector returns a key-selector instance of plugin for the upstream
// subtask of edge from->to.
func (s *Set) KeySelector(plugin, from, to string, subtask int) (runtime.KeySelector, error) {
	m, err := s.module(plugin, "edge "+plan.EdgeKey(from, to))
	if err != nil {
		return nil, err
	}
	p, maxP := s.parallelism(from)
	ks, err := m.NewKeySelector(s.ctx(), from, to, subtask, p, maxP, s.Configs[plan.EdgeKey(from, to)])
	if err != nil {
		return nil, err
	}
	return ks, nil
}

func (s *Set) parallelism(op string) (int, int) {
	p, maxP := s.Parallelism[op], s.MaxParallelism
	if p <= 0 {
		p = 1
	}
	if maxP <= 0 {
		maxP = 128
	}
	return p, maxP
}
