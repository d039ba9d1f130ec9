// Package roots confines file paths to allowed folders: a path must lie
// inside one of the roots, lexically, and is then opened through an
// os.Root of that root, so that neither ".." nor a symbolic link leads out
// of it. The host opens plugin modules and the files of file sources and
// sinks this way.
package roots

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Error is a path outside the allowed roots.
type Error struct {
	Path  string   // as given
	Full  string   // made absolute
	Roots []string // the allowed roots, absolute, each once
	Err   error    // set when os.Root refused the path (a symbolic link out)
	// Setting names the setting that chooses the roots (data-roots for
	// file sources and sinks), so the message says how to allow a path;
	// "" names none. The caller that knows it sets it.
	Setting string
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("path %s escapes root %s: %v", e.Path, e.Roots[0], e.Err)
	}
	hint := ""
	if e.Setting != "" {
		hint = " (the " + e.Setting + " setting chooses the allowed roots besides the pipeline's folder)"
	}
	if len(e.Roots) == 0 {
		return fmt.Sprintf("path %s: no root is allowed%s", e.Path, hint)
	}
	if len(e.Roots) == 1 {
		return fmt.Sprintf("path %s resolves to %s, outside the allowed root %s%s", e.Path, e.Full, e.Roots[0], hint)
	}
	return fmt.Sprintf("path %s resolves to %s, outside the allowed roots %s%s", e.Path, e.Full, strings.Join(e.Roots, ", "), hint)
}

// ErrOutside is what errors.Is finds in an *Error.
var ErrOutside = errors.New("path outside the allowed roots")

func (e *Error) Is(target error) bool { return target == ErrOutside }

// Resolve returns the root that holds path (both made absolute against
// the working directory) and path relative to it.
func Resolve(roots []string, path string) (root, rel string, err error) {
	full, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	abs := make([]string, 0, len(roots))
	for _, r := range roots {
		ar, err := filepath.Abs(r)
		if err != nil {
			continue
		}
		if slices.Contains(abs, ar) {
			continue // the pipeline's folder is often the working directory too
		}
		abs = append(abs, ar)
		rel, err := filepath.Rel(ar, full)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return ar, rel, nil
		}
	}
	return "", "", &Error{Path: path, Full: full, Roots: abs}
}

// within runs f on path relative to an os.Root of the root holding it;
// f's error is turned into an escape when os.Root refused the path.
func within[T any](roots []string, path string, f func(r *os.Root, rel string) (T, error)) (T, error) {
	var zero T
	root, rel, err := Resolve(roots, path)
	if err != nil {
		return zero, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return zero, err
	}
	defer r.Close()
	v, err := f(r, rel)
	return v, escaped(path, root, err)
}

// Open opens path for reading through an os.Root of the root holding it.
func Open(roots []string, path string) (*os.File, error) {
	return within(roots, path, func(r *os.Root, rel string) (*os.File, error) { return r.Open(rel) })
}

// Stat describes path through an os.Root of the root holding it: a path
// outside the roots, or leading out by a symbolic link, is refused before
// anything about what it names is told.
func Stat(roots []string, path string) (os.FileInfo, error) {
	return within(roots, path, func(r *os.Root, rel string) (os.FileInfo, error) { return r.Stat(rel) })
}

// Create creates or truncates path for writing, making its parent
// folders, through an os.Root of the root holding it.
func Create(roots []string, path string) (*os.File, error) {
	return within(roots, path, func(r *os.Root, rel string) (*os.File, error) {
		if dir := filepath.Dir(rel); dir != "." {
			if err := r.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
		return r.Create(rel)
	})
}

// escaped turns os.Root's refusal of a path that leads out of its root
// into an *Error naming the path and the root; other errors pass.
func escaped(path, root string, err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &Error{Path: path, Roots: []string{root}, Err: err}
	}
	return err
}
