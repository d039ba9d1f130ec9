package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/roots"
	"github.com/sluicehq/sluice/host/runtime"
)

// Row 14: crafted configs (path traversal in plugin paths, a YAML alias
// bomb, very deep nesting, unknown or duplicate keys, a huge file) are
// lint errors with file:line:col; at run time plugin and data paths are
// confined to the allowed roots through os.Root, symbolic links included.
func TestSandbox14_CraftedConfig(t *testing.T) {
	head := "version: 1\nname: x\n"
	ops := "operators:\n  - { id: s, source: { type: elements, values: [1] } }\n"
	bomb := head + "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" +
		"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n" +
		"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n" + ops
	for _, tt := range []struct{ name, src, want string }{
		{"path traversal", head + "plugins:\n  p: { path: ../../../../etc/evil.wasm }\n" + ops,
			`job.yaml:4:3: plugin p: path ../../../../etc/evil.wasm climbs out of the allowed plugin folders with ".."`},
		{"absolute path", head + "plugins:\n  p: { path: /etc/evil.wasm }\n" + ops,
			"job.yaml:4:3: plugin p: path /etc/evil.wasm is absolute and outside the allowed plugin folders (allowed: "},
		{"alias bomb", bomb, "job.yaml:1:1: the document expands to more than 100000 nodes (aliases expanded): refusing it"},
		{"deep nesting", head + "x: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n" + ops,
			"job.yaml:1:1: nesting is deeper than 64 levels"},
		{"unknown key", head + "paralelism: 2\n" + ops, `job.yaml:3:1: unknown key "paralelism" in the pipeline (did you mean "parallelism"?)`},
		{"duplicate key", head + "name: y\n" + ops, `job.yaml:3:1: duplicate key "name" in the pipeline (first at line 2)`},
		{"huge file", head + ops + "#" + strings.Repeat("x", pipeline.DefaultMaxBytes) + "\n", "file is larger than 4194304 bytes: refusing it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "job.yaml")
			if err := os.WriteFile(file, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := pipeline.ParseFile(file, pipeline.ParseOptions{})
			var list pipeline.Errors
			if !errors.As(err, &list) {
				t.Fatalf("error %v (%T), want lint errors", err, err)
			}
			wantWords(t, err, strings.Replace(tt.want, "job.yaml", file, 1))
		})
	}

	h := tenant(t, nil)
	t.Run("plugin symlink out of its root", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Symlink(wasm(t, "identity"), filepath.Join(dir, "id.wasm")); err != nil {
			t.Fatal(err)
		}
		_, err := h.LoadFileIn(context.Background(), []string{dir}, filepath.Join(dir, "id.wasm"))
		wantWords(t, err, `plugin "id"`, "cannot be loaded: path "+filepath.Join(dir, "id.wasm")+" escapes root "+dir)
		_, err = h.LoadFileIn(context.Background(), []string{dir}, wasm(t, "identity"))
		wantWords(t, err, "outside the allowed root "+dir)
	})
	t.Run("data paths", func(t *testing.T) {
		dir := t.TempDir()
		j := runYAML(t, h, dir, `version: 1
name: steal
operators:
  - { id: src, source: { type: file, path: ../../../../../../etc/passwd } }
  - { id: out, sink: { type: print } }
`, runtime.Options{}, nil)
		failed(t, h, j)
		wantWords(t, j.err, `operator "src" (subtask 1/1): source "src": path ../../../../../../etc/passwd resolves to /etc/passwd, outside the allowed root `+dir)
		if !errors.Is(j.err, roots.ErrOutside) || j.out != "" {
			t.Errorf("errors.Is(err, ErrOutside) %v; printed %q", errors.Is(j.err, roots.ErrOutside), j.out)
		}
	})
	healthy(t, h)
}
