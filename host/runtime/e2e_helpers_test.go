package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// End-to-end helpers: pipelines from YAML (the files in configs/ or inline
// text), the real connectors and the real Wasm plugins (`make plugins`),
// the print sink's stdout parsed back into records with their subtask.

const configsDir = "../../configs"

// line is one line of print output.
type line struct {
	Prefix  string
	Subtask int // from "prefix:N> ", -1 without a number (parallelism 1)
	JSON    string
	Fields  map[string]any
}

var printLine = regexp.MustCompile(`^(?:([^:>]*?)(?::(\d+))?> )?(\{.*\})$`)

func parseLines(t testing.TB, out string) []line {
	t.Helper()
	var lines []line
	for _, s := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if s == "" {
			continue
		}
		m := printLine.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("not a print line: %q", s)
		}
		l := line{Prefix: m[1], Subtask: -1, JSON: m[3]}
		if m[2] != "" {
			n, _ := strconv.Atoi(m[2])
			l.Subtask = n - 1
		}
		d := json.NewDecoder(strings.NewReader(l.JSON))
		d.UseNumber()
		if err := d.Decode(&l.Fields); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		lines = append(lines, l)
	}
	return lines
}

// run holds what one run did.
type run struct {
	lines []line
	out   string
	res   *runtime.Result
	err   error
}

// syncBuffer is a bytes.Buffer safe for the print sinks of every subtask.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// runPipeline parses file (a path) or, when src is not empty, src as if it
// were file; edit may change the pipeline before planning.
func runPipeline(t testing.TB, file, src string, edit func(*pipeline.Pipeline), opts runtime.Options) run {
	t.Helper()
	wd, _ := os.Getwd()
	popts := pipeline.ParseOptions{PluginRoots: []string{filepath.Join(wd, "../..")}}
	var p *pipeline.Pipeline
	var err error
	if src != "" {
		p, err = pipeline.Parse(file, []byte(strings.TrimSpace(src)+"\n"), popts)
	} else {
		p, err = pipeline.ParseFile(file, popts)
	}
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if edit != nil {
		edit(p)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	plugins := loadPlugins(t, file, p)
	var stdout syncBuffer
	deps := runtime.Deps{
		Plugins:    plugins,
		Connectors: &connector.Builtin{Stdout: &stdout, Stdin: strings.NewReader(""), Root: filepath.Dir(file)},
		Options:    opts,
	}
	res, err := runtime.Run(context.Background(), g, deps)
	out := stdout.b.String()
	return run{lines: parseLines(t, out), out: out, res: res, err: err}
}

// loadPlugins compiles the pipeline's plugins once per test binary; a
// plugin that was not built skips the test.
func loadPlugins(t testing.TB, file string, p *pipeline.Pipeline) runtime.Plugins {
	t.Helper()
	if len(p.Plugins) == 0 {
		return nil
	}
	set := &plugin.Set{Modules: map[string]*plugin.Module{}, Configs: map[string]map[string]any{}}
	for name, pl := range p.Plugins {
		path := filepath.Join(filepath.Dir(file), pl.Path)
		m, err := module(path)
		if os.IsNotExist(err) {
			t.Fatalf("plugin %s is not built (%s): run make plugins first (make test does)", name, path)
		}
		if err != nil {
			t.Fatalf("plugin %s: %v", name, err)
		}
		set.Modules[name] = m
	}
	return set
}

var (
	hostOnce sync.Once
	host     *plugin.Host
	hostErr  error
	modMu    sync.Mutex
	modules  = map[string]*plugin.Module{}
)

func module(path string) (*plugin.Module, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	hostOnce.Do(func() {
		cfg := plugin.DefaultConfig()
		if dir, err := os.UserCacheDir(); err == nil {
			cfg.CacheDir = filepath.Join(dir, "sluice", "wasm-test")
			_ = os.MkdirAll(cfg.CacheDir, 0o755)
		}
		host, hostErr = plugin.New(context.Background(), cfg)
	})
	if hostErr != nil {
		return nil, hostErr
	}
	modMu.Lock()
	defer modMu.Unlock()
	abs, _ := filepath.Abs(path)
	if m := modules[abs]; m != nil {
		return m, nil
	}
	m, err := host.LoadFile(context.Background(), abs)
	if err == nil {
		modules[abs] = m
	}
	return m, err
}

// multiset returns the lines as "prefix json" with the subtask dropped,
// sorted.
func multiset(lines []line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Prefix + " " + l.JSON
	}
	sort.Strings(out)
	return out
}

func field(t testing.TB, l line, name string) json.Number {
	t.Helper()
	v, ok := l.Fields[name].(json.Number)
	if !ok {
		t.Fatalf("%s: no number %q", l.JSON, name)
	}
	return v
}

func intOf(t testing.TB, l line, name string) int64 {
	t.Helper()
	n, err := field(t, l, name).Int64()
	if err != nil {
		t.Fatalf("%s: %q is not an int", l.JSON, name)
	}
	return n
}
