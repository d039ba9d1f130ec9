package jobplugins

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plugin"
)

// built loads a plugin of plugins/ (make plugins builds it).
func built(t *testing.T, name string) *plugin.Module {
	t.Helper()
	path := filepath.Join("..", "..", "plugins", name, name+".wasm")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("plugin %s is not built (%s): run make plugins first", name, path)
	}
	h, err := plugin.New(context.Background(), plugin.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	m, err := h.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCheckUsesWindowFunctions: a window's process function must be a
// process-window plugin and a process-window plugin needs a window; a
// reduce plugin, which keeps keyed state, serves a keyed window and a
// window-all (whose state has one key).
func TestCheckUsesWindowFunctions(t *testing.T) {
	mods := map[string]*plugin.Module{"top": built(t, "top-bids"), "sum": built(t, "reduce-sum"), "proc": wat(t, "keyedproc", 0)}
	const src = `version: 1
name: w
plugins:
  top: { path: top.wasm }
  sum: { path: sum.wasm }
  proc: { path: proc.wasm }
operators:
  - id: src
    source: { type: generator, preset: bids, count: 10, watermarks: { strategy: monotonous } }
  - id: w
    %s
    %s
  - id: out
    sink: { type: discard }
`
	cases := []struct{ win, fn, want string }{
		{"window-all: { type: tumbling, size: 10s }", "process: top", ""},
		{"key-by: auction\n    window: { type: tumbling, size: 10s }", "process: top", ""},
		{"window-all: { type: tumbling, size: 10s }", "reduce: sum", ""},
		{"key-by: auction\n    window: { type: sliding, size: 10s, slide: 5s }", "reduce: sum", ""},
		{"key-by: auction", "process: top", `w.yaml:12:5: operator "w" uses plugin "top", a process-window plugin (its sluice_describe), without a window: add window: (or window-all:) to the operator`},
		{"key-by: auction\n    window: { type: tumbling, size: 10s }", "process: proc", `w.yaml:13:5: operator "w" has a window whose function is plugin "proc", a process (its sluice_describe): a window's process function is a process-window plugin (the Go SDK's sdk.ProcessWindow), given the window's records when it fires`},
	}
	for _, c := range cases {
		text := fmt.Sprintf(src, c.win, c.fn)
		p, err := pipeline.Parse("w.yaml", []byte(text), pipeline.ParseOptions{})
		if err != nil {
			t.Fatalf("%s / %s: %v", c.win, c.fn, err)
		}
		err = CheckUses(context.Background(), p, mods)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s / %s:\n got %s\nwant %s", c.win, c.fn, got, c.want)
		}
	}
}
