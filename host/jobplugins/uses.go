package jobplugins

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plugin"
)

// CheckUses holds the pipeline's use of each plugin to what the plugin
// says of itself (sluice_describe): an operator's kind must be the
// plugin's (a map plugin behind `filter:` would change records a filter
// only keeps or drops), a key-by or custom partition plugin must be a key
// selector or a partitioner, and a side output read from a plugin operator
// must be one the plugin declares (an unknown tag would read nothing,
// silently).
// A plugin without sluice_describe (a hand-written module) says nothing,
// and is taken at the pipeline's word. Each module is described once. The
// refusal is a pipeline.Errors, one problem per use at the pipeline's
// file:line:col, as lint gives them.
func CheckUses(ctx context.Context, p *pipeline.Pipeline, modules map[string]*plugin.Module) error {
	infos := map[string]*plugin.Info{}
	describe := func(name string) (*plugin.Info, error) {
		if info, ok := infos[name]; ok {
			return info, nil
		}
		m := modules[name]
		if m == nil {
			return nil, nil
		}
		info, err := m.Inspect(ctx)
		if err != nil {
			if namesPlugin(err, name) { // a PluginError: plugin "valid" export ...
				return nil, err
			}
			return nil, fmt.Errorf("plugin %q: %w", name, err)
		}
		if info.KindFrom != abi.ExportDescribe {
			infos[name] = nil
			return nil, nil
		}
		infos[name] = &info
		return &info, nil
	}
	var errs pipeline.Errors
	problem := func(pos pipeline.Pos, format string, args ...any) {
		errs = append(errs, &pipeline.Error{File: p.File, Pos: pos, Msg: fmt.Sprintf(format, args...)})
	}
	byID := map[string]*pipeline.Operator{}
	for _, op := range p.Operators {
		byID[op.ID] = op
	}
	for _, op := range p.Operators {
		if op.Plugin != "" {
			info, err := describe(op.Plugin)
			if err != nil {
				return err
			}
			if info != nil && op.Kind == pipeline.KindProcess && (op.Window != nil) != (info.Kind == abi.KindProcessWindow) {
				pos := op.KeyPos[string(op.Kind)]
				if pos.Line == 0 {
					pos = op.Pos
				}
				if op.Window != nil {
					problem(pos, "operator %q has a window whose function is plugin %q, a %s (its sluice_describe): a window's process function is a process-window plugin (the Go SDK's sdk.ProcessWindow), given the window's records when it fires", op.ID, op.Plugin, info.Kind)
				} else {
					problem(pos, "operator %q uses plugin %q, a process-window plugin (its sluice_describe), without a window: add window: (or window-all:) to the operator", op.ID, op.Plugin)
				}
			} else if info != nil && !serves(info.Kind, op.Kind) {
				pos := op.KeyPos[string(op.Kind)]
				if pos.Line == 0 {
					pos = op.Pos
				}
				problem(pos, "operator %q uses plugin %q as a %s, but the plugin is a %s (its sluice_describe): %s",
					op.ID, op.Plugin, op.Kind, info.Kind, useAs(info.Kind, op.Plugin, op.Kind))
			}
			if info != nil && info.Keyed && op.KeyBy == nil && (op.Window == nil || !op.Window.All) { // a window-all keys its state by one key
				pos := op.KeyPos[string(op.Kind)]
				if pos.Line == 0 {
					pos = op.Pos
				}
				problem(pos, "operator %q uses plugin %q, which keeps keyed state (its sluice_describe), but has no key-by: keyed state needs one (add key-by: FIELD to the operator)",
					op.ID, op.Plugin)
			}
		}
		var edges []edgeUse
		if op.KeyBy != nil && op.KeyBy.Plugin != "" {
			edges = append(edges, edgeUse{op.KeyBy.Plugin, abi.KindKeySelector, "key-by", op.KeyBy.Pos})
		}
		for _, part := range op.Partitions() {
			if part.Plugin != "" {
				edges = append(edges, edgeUse{part.Plugin, abi.KindPartitioner, "custom partition", part.Pos})
			}
		}
		for _, e := range edges {
			info, err := describe(e.plugin)
			if err != nil {
				return err
			}
			if info != nil && info.Kind != e.want {
				problem(e.pos, "the %s of operator %q uses plugin %q, which is a %s, not a %s", e.what, op.ID, e.plugin, info.Kind, e.want)
			}
		}
		for _, in := range op.Inputs {
			up := byID[in.Operator]
			if in.SideOutput == "" || up == nil || up.Plugin == "" {
				continue
			}
			if in.SideOutput == pipeline.DeadLetter && up.OnError == pipeline.DeadLetter {
				continue // the host's own side output, not the plugin's
			}
			info, err := describe(up.Plugin)
			if err != nil {
				return err
			}
			if info != nil && !slices.Contains(info.Outputs, in.SideOutput) {
				declared := "none"
				if len(info.Outputs) > 0 {
					declared = strings.Join(info.Outputs, ", ")
				}
				problem(in.Pos, "operator %q reads side output %q of %q, which its plugin %q does not declare (its side outputs: %s)",
					op.ID, in.SideOutput, up.ID, up.Plugin, declared)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	errs.Sort()
	return errs
}

// edgeUse is a plugin an operator's input edge runs: a key selector or a
// custom partitioner.
type edgeUse struct {
	plugin string
	want   abi.Kind
	what   string
	pos    pipeline.Pos
}

// serves reports whether a plugin of kind k may run an operator of kind
// op: its own kind, and for a process plugin (the general kind: any number
// of records to any output, from either input) also flat-map and the two
// connected kinds (the C, Rust and AssemblyScript SDKs describe a
// two-input plugin as a process taking port 1).
func serves(k abi.Kind, op pipeline.Kind) bool {
	if string(k) == string(op) {
		return true
	}
	if k == abi.KindProcessWindow && op == pipeline.KindProcess {
		return true // with a window: checked by the caller
	}
	return k == abi.KindProcess && (op == pipeline.KindFlatMap || op == pipeline.KindCoMap || op == pipeline.KindCoProcess)
}

// useAs says how the pipeline can use a plugin of kind k.
func useAs(k abi.Kind, name string, used pipeline.Kind) string {
	two := func(k pipeline.Kind) bool { return k == pipeline.KindCoMap || k == pipeline.KindCoProcess }
	switch {
	case k == abi.KindPartitioner:
		return fmt.Sprintf("a partitioner goes on an input: partition: { custom: %s, key: FIELD }", name)
	case k == abi.KindKeySelector:
		return fmt.Sprintf("a key selector goes on an input: key-by: { plugin: %s }", name)
	case two(used) && !two(pipeline.Kind(k)):
		// write map: on a connect and lint refuses the connect instead
		return fmt.Sprintf("a %s reads one input: write %s: %s with input: [first, second] (a union) instead of connect, or use a co-map or co-process plugin", k, k, name)
	case !two(used) && two(pipeline.Kind(k)):
		return fmt.Sprintf("a %s reads two inputs: write %s: %s with connect: [first, second]", k, k, name)
	}
	return fmt.Sprintf("write %s: %s", k, name)
}

// namesPlugin reports whether err's text starts with the plugin's name, as
// a PluginError's and a LoadError's do, so that a caller adds no second
// `plugin "name":` before it.
func namesPlugin(err error, name string) bool {
	prefix := fmt.Sprintf("plugin %q", name)
	rest, ok := strings.CutPrefix(err.Error(), prefix)
	return ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, ":"))
}
