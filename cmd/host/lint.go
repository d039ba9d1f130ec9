package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/jobplugins"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/settings"
)

func init() { addCommand(newLintCmd) }

func newLintCmd() *cobra.Command {
	var roots []string
	cmd := &cobra.Command{
		Use:   "lint FILE...",
		Short: "Check pipeline files and print every problem as file:line:col",
		Long: `Lint parses each pipeline file and plans it, and prints every problem it
finds as file:line:col: message. It exits 1 when any file has a problem and
0 (printing nothing) when all are clean. Every plugin file must exist (build
the plugins before linting: make plugins for the examples). It is checked against
ABI v1 and the host's limits (memory-pages, max-module-bytes) from its header;
then it is compiled (through the compilation cache) and asked what it is
(its sluice_describe, in the sandbox), so a plugin used as the wrong kind,
keyed state without a key-by or a side output the plugin does not declare
is reported as run would. Its open is not called: a config value it refuses
shows when the job runs. The paths of file sources and sinks are held to the
pipeline's folder and the data roots (--data-roots) as run holds them; the
files need not exist. A file with problems of its own (an unknown key, a bad
value) still has its file paths checked; the plan and the plugins are checked
once it parses.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hs, err := hostSettings(cmd)
			if err != nil {
				return err
			}
			bad := false
			for _, file := range args {
				if lintFile(cmd.Context(), cmd.OutOrStdout(), file, roots, hs) {
					bad = true
				}
			}
			if bad {
				return exitCode(1)
			}
			return nil
		},
	}
	addPluginRootFlag(cmd, &roots)
	settings.AddFlags(cmd.Flags(), "memory-pages", "max-module-bytes", "cache-dir", "call-timeout", "data-roots")
	return cmd
}

// lintFile prints the problems of one file and reports whether it had any.
// A file that parses is also planned (without a host slot limit), so a
// forward edge between unequal parallelisms or a batch job reading an
// unbounded source is reported too.
func lintFile(ctx context.Context, w io.Writer, file string, roots []string, hs settings.Settings) bool {
	p, err := readPipelineAs(file, roots, true)
	// file sources and sinks are held to the data roots as run holds them
	conns := &connector.Builtin{Root: filepath.Dir(file), Roots: confined(file, hs.DataRoots), RootsSetting: "data-roots"}
	var parsed pipeline.Errors
	if p != nil && errors.As(err, &parsed) {
		// the file has problems: the checks that need no plan still look
		// at what decoded, so that fixing one problem does not bring the
		// next to light; a problem where one is already reported is left
		// out (it may follow from that one)
		var more pipeline.Errors
		errors.As(joinProblems(conns.CheckPaths(p), conns.CheckSameFiles(p)), &more)
		at := map[pipeline.Pos]bool{}
		for _, e := range parsed {
			at[e.Pos] = true
		}
		for _, e := range more {
			if !at[e.Pos] {
				parsed = append(parsed, e)
			}
		}
		err = parsed.Err() // sorted by position
	}
	if err == nil {
		_, err = plan.Plan(p, plan.Options{})
	}
	if err == nil {
		err = joinProblems(joinProblems(joinProblems(pipeline.OnlySources(p), conns.CheckPaths(p)), conns.CheckSameFiles(p)), lintPluginFiles(ctx, file, roots, p, hs))
	}
	if err == nil {
		return false
	}
	var list pipeline.Errors
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(w, e)
		}
	} else {
		fmt.Fprintf(w, "%s: %v\n", file, err)
	}
	return true
}

// joinProblems merges the problem lists of a and b into one, sorted by
// position; an error that is not a list wins as it is.
func joinProblems(a, b error) error {
	var all pipeline.Errors
	for _, err := range []error{a, b} {
		var list pipeline.Errors
		switch {
		case err == nil:
		case errors.As(err, &list):
			all = append(all, list...)
		default:
			return err
		}
	}
	return all.Err()
}

// lintPluginFiles checks every plugin file of p that exists against ABI v1
// and the host's limits, reading its header (plugin.CheckFile); then it
// compiles those that pass (through the compilation cache) and holds the
// pipeline's use of each to what it says of itself (jobplugins.CheckUses:
// its kind, keyed state without a key-by, side outputs it does not
// declare), as run does before it starts. Only sluice_describe runs, in
// the sandbox; open is not called, so a config value the plugin refuses
// shows at run time.
func lintPluginFiles(ctx context.Context, file string, roots []string, p *pipeline.Pipeline, hs settings.Settings) error {
	cfg := plugin.DefaultConfig()
	cfg.MemoryLimitPages = hs.MemoryPages
	cfg.MaxModuleBytes = hs.MaxModuleBytes
	cfg.CallTimeout = hs.CallTimeout
	var errs pipeline.Errors
	loadable := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(p.Plugins)) {
		pl := p.Plugins[name]
		path := pluginPath(file, pl)
		problems, err := plugin.CheckFile(path, cfg)
		if errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, missingPlugin(file, name, pl))
			continue
		}
		if err != nil {
			problems = []string{err.Error()}
		}
		for _, msg := range problems {
			errs = append(errs, &pipeline.Error{File: file, Pos: pl.Pos, Msg: fmt.Sprintf("plugin %s (%s) %s", name, pl.Path, msg)})
		}
		if len(problems) == 0 {
			loadable[name] = path
		}
	}
	if len(loadable) == 0 { // the others are described whatever one's header says
		return errs.Err()
	}
	if hs.CacheDir != "" && os.MkdirAll(hs.CacheDir, 0o755) == nil {
		cfg.CacheDir = hs.CacheDir
	}
	h, err := plugin.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer h.Close(context.Background())
	modules := map[string]*plugin.Module{}
	for _, name := range slices.Sorted(maps.Keys(loadable)) {
		m, err := h.LoadNamed(ctx, confined(file, pluginRoots(file, roots)), name, loadable[name])
		if err != nil { // a LoadError: plugin "name" (path) ...
			errs = append(errs, &pipeline.Error{File: file, Pos: p.Plugins[name].Pos, Msg: err.Error()})
			continue
		}
		modules[name] = m
	}
	if err := jobplugins.CheckUses(ctx, p, modules); err != nil {
		var list pipeline.Errors
		if !errors.As(err, &list) {
			return err
		}
		errs = append(errs, list...)
	}
	errs.Sort()
	return errs.Err()
}

// pluginPath is where a plugin's file is: its path, from the pipeline
// file's folder when relative.
func pluginPath(file string, pl *pipeline.Plugin) string {
	if filepath.IsAbs(pl.Path) {
		return pl.Path
	}
	return filepath.Join(filepath.Dir(file), pl.Path)
}

// missingPlugin is the problem of a plugin whose file does not exist.
func missingPlugin(file, name string, pl *pipeline.Plugin) *pipeline.Error {
	path := pluginPath(file, pl)
	where := pl.Path
	if path != pl.Path {
		where += " (" + path + ")"
	}
	return &pipeline.Error{File: file, Pos: pl.Pos, Msg: fmt.Sprintf("plugin %s: %s does not exist; %s", name, where, buildHint(path))}
}

// missingPlugins lists the plugins of p whose files do not exist (plan's
// check; lint checks each file further).
func missingPlugins(file string, p *pipeline.Pipeline) error {
	var errs pipeline.Errors
	for _, name := range slices.Sorted(maps.Keys(p.Plugins)) {
		if _, err := os.Stat(pluginPath(file, p.Plugins[name])); errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, missingPlugin(file, name, p.Plugins[name]))
		}
	}
	return errs.Err()
}

// readPipeline parses a pipeline file the way every command does:
// ${VAR} from the environment, plugin paths confined to the pipeline's
// folder and roots (the working directory when roots is empty).
func readPipeline(file string, roots []string) (*pipeline.Pipeline, error) {
	return readPipelineAs(file, roots, false)
}

// readPipelineAs is readPipeline that, with partial, also returns what
// decoded of a file with problems (pipeline.ParseOptions.Partial).
func readPipelineAs(file string, roots []string, partial bool) (*pipeline.Pipeline, error) {
	for _, r := range roots {
		if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("--plugin-root %s: not a folder", r)
		}
	}
	opts := pipeline.ParseOptions{Lookup: os.LookupEnv, PluginRoots: pluginRoots(file, roots), Partial: partial, Connectors: connector.Set()}
	return pipeline.ParseFile(file, opts)
}

// pluginRoots are the folders besides the pipeline file's own that its
// plugin paths may reach: the --plugin-root folders, else the working
// directory and the project the pipeline file is in (the nearest folder
// above it holding .git), so that configs/quickstart.yaml's
// ../plugins/... loads from the repository's root and from configs/ alike.
func pluginRoots(file string, flag []string) []string {
	if len(flag) > 0 {
		return flag
	}
	var out []string
	if wd, err := os.Getwd(); err == nil {
		out = append(out, wd)
	}
	if p := projectRoot(file); p != "" && !slices.Contains(out, p) {
		out = append(out, p)
	}
	return out
}

// projectRoot is the nearest folder at or above file's that holds .git,
// or "".
func projectRoot(file string) string {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// addPluginRootFlag adds --plugin-root, the folders a plugin path may
// reach with "..".
func addPluginRootFlag(cmd *cobra.Command, roots *[]string) {
	cmd.Flags().StringArrayVar(roots, "plugin-root", nil,
		"a folder plugin paths may reach (with \"..\" or absolute) besides the pipeline's own (repeatable; default: the working directory and the git checkout holding the pipeline)")
}
