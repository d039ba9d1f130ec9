package pipeline

import (
	"strings"
	"testing"
)

func TestPluginPaths(t *testing.T) {
	for _, tc := range []struct {
		file, path string
		roots      []string
		allowAbs   bool
		problem    string // a substring; "" for no problem
	}{
		{file: "configs/q.yaml", path: "p.wasm"},
		{file: "configs/q.yaml", path: "plugins/p/p.wasm"},
		{file: "configs/q.yaml", path: "sub/../p.wasm"},
		{file: "configs/q.yaml", path: "../plugins/p.wasm", problem: `climbs out of the allowed plugin folders with ".." (allowed: configs): to load it, pass --plugin-root plugins (its folder, or one above it)`},
		{file: "configs/q.yaml", path: "../plugins/p.wasm", roots: []string{"."}},
		{file: "configs/q.yaml", path: "../../p.wasm", roots: []string{"."}, problem: "(allowed: configs, the working directory): to load it, pass --plugin-root .. (its folder"},
		{file: "configs/q.yaml", path: "../plugins/../../p.wasm", roots: []string{"."}, problem: "climbs out"},
		{file: "/srv/jobs/q.yaml", path: "../lib/p.wasm", roots: []string{"/srv"}},
		{file: "/srv/jobs/q.yaml", path: "../lib/p.wasm", roots: []string{"/srv/jobs"}, problem: "climbs out"},
		{file: "/srv/jobs/q.yaml", path: "../lib/p.wasm", roots: []string{"/srv/j"}, problem: "climbs out"},
		{file: "/srv/jobs/q.yaml", path: "../../p.wasm", roots: []string{"/srv/jobs/", "/srv/x", "/srv/jobs"}, problem: `with ".." (allowed: /srv/jobs, /srv/x)`}, // each once
		{file: "q.yaml", path: "/usr/lib/p.wasm", problem: "path /usr/lib/p.wasm is absolute and outside the allowed plugin folders (allowed: the working directory): to load it, pass --plugin-root /usr/lib (its folder, or one above it)"},
		// an absolute path inside the pipeline's folder or a root is the user's own file
		{file: "/srv/jobs/q.yaml", path: "/srv/jobs/p.wasm"},
		{file: "/srv/jobs/q.yaml", path: "/srv/lib/p.wasm", roots: []string{"/srv"}},
		{file: "/srv/jobs/q.yaml", path: "/srv/lib/p.wasm", roots: []string{"/srv/x"}, problem: "is absolute and outside the allowed plugin folders (allowed: /srv/jobs, /srv/x)"},
		{file: "/srv/jobs/q.yaml", path: "/srv/jobs/../lib/p.wasm", problem: "is absolute and outside"},
		{file: "q.yaml", path: "/usr/lib/p.wasm", allowAbs: true},
		{file: "q.yaml", path: "../../p.wasm", allowAbs: true},
	} {
		src := "version: 1\nname: x\nplugins:\n  p: { path: " + tc.path + " }\noperators:\n  - id: s\n    source: { type: stdin }\n"
		_, err := Parse(tc.file, []byte(src), ParseOptions{PluginRoots: tc.roots, AllowAbsolutePaths: tc.allowAbs})
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%s in %s (roots %v): %v", tc.path, tc.file, tc.roots, err)
		case tc.problem != "" && (err == nil || !strings.Contains(err.Error(), tc.problem)):
			t.Errorf("%s in %s (roots %v): got %v, want %q", tc.path, tc.file, tc.roots, err, tc.problem)
		}
	}
}
