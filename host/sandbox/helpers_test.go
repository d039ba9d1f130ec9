package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/jobplugins"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

var (
	fixtureMu  sync.Mutex
	fixtureDir string
	built      = map[string]bool{}
)

// wasm compiles testdata/name.wat with wat2wasm once per test binary and
// returns the module's path. A missing wat2wasm fails: the fixtures are
// the suite.
func wasm(tb testing.TB, name string) string {
	tb.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		tb.Fatalf("wat2wasm not found: install wabt (Debian/Ubuntu: apt-get install -y wabt; macOS: brew install wabt) to build the fixtures in host/sandbox/testdata")
	}
	if fixtureDir == "" {
		if fixtureDir, err = os.MkdirTemp("", "sluice-sandbox-"); err != nil {
			tb.Fatal(err)
		}
	}
	out := filepath.Join(fixtureDir, name+".wasm")
	if !built[name] {
		if msg, err := exec.Command(tool, filepath.Join("testdata", name+".wat"), "-o", out).CombinedOutput(); err != nil {
			tb.Fatalf("wat2wasm testdata/%s.wat: %v\n%s", name, err, msg)
		}
		built[name] = true
	}
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// tenant makes a plugin host (one tenant's runtime) from the defaults,
// changed by edit. The call deadline is generous (a loaded machine or the
// race detector must not turn a slow call into a failure): the tests of
// runaways set a short one, runaway.
func tenant(tb testing.TB, edit func(*plugin.Config)) *plugin.Host {
	tb.Helper()
	cfg := plugin.DefaultConfig()
	cfg.CallTimeout = 10 * time.Second
	cfg.RestartDelay = time.Millisecond
	cfg.RestartWindow = time.Hour // counts, not timing, decide the limit
	if edit != nil {
		edit(&cfg)
	}
	h, err := plugin.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// runaway is the call deadline of the tests whose guests never return.
const runaway = 200 * time.Millisecond

// job is what one run did.
type job struct {
	out string // the print sinks' lines
	res *runtime.Result
	err error
}

// syncBuffer is a bytes.Buffer for the print sinks of every subtask.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runYAML runs the pipeline src on h. Plugin paths written {name} are the
// compiled fixture testdata/name.wat; the pipeline lives in dir (its file
// paths are relative to it), which with the fixtures' folder is all the
// job may open. conn, when set, wraps the connectors.
func runYAML(tb testing.TB, h *plugin.Host, dir, src string, opts runtime.Options, conn func(*connector.Builtin) runtime.Connectors) job {
	tb.Helper()
	p, g := planYAML(tb, dir, src)
	ctx := context.Background()
	set, err := jobplugins.NewSet(ctx, h, p, g, []string{fixtureDir, dir})
	if err != nil {
		return job{err: err}
	}
	var out syncBuffer
	b := &connector.Builtin{Stdout: &out, Stdin: strings.NewReader(""), Root: dir, Roots: []string{dir}}
	var c runtime.Connectors = b
	if conn != nil {
		c = conn(b)
	}
	if opts.DrainTimeout == 0 {
		opts.DrainTimeout = 10 * time.Second
	}
	res, err := runtime.Run(ctx, g, runtime.Deps{Plugins: set, Connectors: c, Options: opts})
	return job{out: out.String(), res: res, err: err}
}

// planYAML parses and plans src as dir/job.yaml, with {name} plugin paths
// made absolute paths of compiled fixtures.
func planYAML(tb testing.TB, dir, src string) (*pipeline.Pipeline, *plan.JobGraph) {
	tb.Helper()
	for {
		i := strings.Index(src, "{wasm:")
		if i < 0 {
			break
		}
		j := strings.Index(src[i:], "}")
		name := src[i+len("{wasm:") : i+j]
		src = src[:i] + wasm(tb, name) + src[i+j+1:]
	}
	file := filepath.Join(dir, "job.yaml")
	p, err := pipeline.Parse(file, []byte(src), pipeline.ParseOptions{AllowAbsolutePaths: true})
	if err != nil {
		tb.Fatalf("lint:\n%v", err)
	}
	g, err := plan.Plan(p, plan.Options{})
	if err != nil {
		tb.Fatalf("plan:\n%v", err)
	}
	return p, g
}

// wantWords fails unless err's text holds every word.
func wantWords(tb testing.TB, err error, words ...string) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("no error, want one saying %q", words)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			tb.Errorf("error lacks %q:\n%v", w, err)
		}
	}
}

// healthy runs a good job on h and checks its exact output and that every
// instance of h was closed: the host still works after what went before.
func healthy(tb testing.TB, h *plugin.Host) {
	tb.Helper()
	j := runYAML(tb, h, tb.TempDir(), `version: 1
name: healthy
plugins:
  id: { path: {wasm:identity} }
operators:
  - { id: src, source: { type: elements, values: [{n: 1}, {n: 2}, {n: 3}] } }
  - { id: m, map: id }
  - { id: out, sink: { type: print } }
`, runtime.Options{}, nil)
	if j.err != nil {
		tb.Fatalf("the host no longer runs a good job: %v", j.err)
	}
	if want := "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n"; j.out != want {
		tb.Fatalf("a good job after the bad one printed %q, want %q", j.out, want)
	}
	if n := h.LiveInstances(); n != 0 {
		tb.Errorf("%d plugin instances left open", n)
	}
}

// failed checks that j failed, returned its result, and left no instance
// of h open.
func failed(tb testing.TB, h *plugin.Host, j job) {
	tb.Helper()
	if j.err == nil {
		tb.Fatalf("the job succeeded, printing %q; want it to fail", j.out)
	}
	tb.Logf("the job failed as it should: %v", j.err)
	if j.res == nil {
		tb.Errorf("a failed job returned no result (metrics)")
	}
	if n := h.LiveInstances(); n != 0 {
		tb.Errorf("%d plugin instances left open after the job failed", n)
	}
}

// poisonJob is src (elements values) -> m (testdata/poison.wat with
// on-error) -> out (print), plus a print sink "dl" of m's dead letters
// when the policy is dead-letter.
func poisonJob(values, onError string) string {
	s := `version: 1
name: poison
plugins:
  poison: { path: {wasm:poison} }
operators:
  - { id: src, source: { type: elements, values: ` + values + ` } }
  - { id: m, map: poison, on-error: ` + onError + ` }
  - { id: out, sink: { type: print } }
`
	if onError == "dead-letter" {
		s += "  - { id: dl, input: m.dead-letter, sink: { type: print, prefix: dead } }\n"
	}
	return s
}
