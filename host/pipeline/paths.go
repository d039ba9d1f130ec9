package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// checkPluginPaths holds plugin paths to the folders a pipeline may load
// from: the pipeline file's folder and opts.PluginRoots. The check is
// lexical: it reads no file, so planning never needs the .wasm to exist.
func (d *decoder) checkPluginPaths(p *Pipeline, opts ParseOptions) {
	names := make([]string, 0, len(p.Plugins))
	for n := range p.Plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pl := p.Plugins[n]
		if pl.Path == "" || opts.AllowAbsolutePaths {
			continue
		}
		if msg := pathProblem(p.File, pl.Path, opts.PluginRoots); msg != "" {
			d.errs.errorf(d.file, pl.Pos, "plugin %s: %s", n, msg)
		}
	}
}

// pathProblem says what is wrong with a plugin path, or "": a relative
// path resolves from the pipeline file's folder, and a path that climbs
// out of it with ".." or is absolute must lie inside that folder or one
// of roots.
func pathProblem(file, path string, roots []string) string {
	slashed := filepath.ToSlash(path)
	abs := filepath.IsAbs(path) || strings.HasPrefix(slashed, "/")
	if !abs && !hasDotDot(slashed) {
		return ""
	}
	full := path
	if !abs {
		full = filepath.Join(filepath.Dir(file), path)
	}
	var allowed, seen []string // each root once, as given: the pipeline's folder is often a root too
	for _, root := range append([]string{filepath.Dir(file)}, roots...) {
		if within(full, root) {
			return ""
		}
		if abs, err := filepath.Abs(root); err != nil || !slices.Contains(seen, abs) {
			if filepath.Clean(root) == "." {
				root = "the working directory"
			}
			allowed, seen = append(allowed, root), append(seen, abs)
		}
	}
	// the flag takes a folder relative to the working directory, as the
	// path resolves (run from the pipeline's folder, ".." is above it)
	dir := filepath.Dir(full)
	if wd, err := os.Getwd(); err == nil && !abs {
		if abs, err := filepath.Abs(dir); err == nil {
			if rel, err := filepath.Rel(wd, abs); err == nil {
				dir = rel
			}
		}
	}
	how := "climbs out of the allowed plugin folders with \"..\""
	if abs {
		how = "is absolute and outside the allowed plugin folders"
	}
	return "path " + path + " " + how + " (allowed: " + strings.Join(allowed, ", ") +
		"): to load it, pass --plugin-root " + dir + " (its folder, or one above it)"
}

func hasDotDot(slashed string) bool {
	for _, seg := range strings.Split(slashed, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// within reports whether path lies inside root (both made absolute
// against the working directory, compared lexically).
func within(path, root string) bool {
	ap, err1 := filepath.Abs(path)
	ar, err2 := filepath.Abs(root)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(ar, ap)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
