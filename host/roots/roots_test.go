package roots

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	root, rel, err := Resolve([]string{a, b}, filepath.Join(b, "x", "y.jsonl"))
	if err != nil || root != b || rel != filepath.Join("x", "y.jsonl") {
		t.Errorf("Resolve inside the second root: %q %q %v", root, rel, err)
	}
	_, _, err = Resolve([]string{a, b}, filepath.Join(a, "..", "z"))
	if !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), "outside the allowed roots "+a+", "+b) {
		t.Errorf("outside: %v", err)
	}
	// a root given twice (the pipeline's folder is the working directory)
	// is listed once
	_, _, err = Resolve([]string{a, a + "/", b, a}, filepath.Join(a, "..", "z"))
	var re *Error
	if !errors.As(err, &re) || len(re.Roots) != 2 || !strings.HasSuffix(err.Error(), "outside the allowed roots "+a+", "+b) {
		t.Errorf("duplicate roots: %v", err)
	}
	re.Setting = "data-roots"
	if want := "outside the allowed roots " + a + ", " + b + " (the data-roots setting chooses the allowed roots besides the pipeline's folder)"; !strings.HasSuffix(re.Error(), want) {
		t.Errorf("with the setting: %v", re)
	}
	if _, _, err := Resolve([]string{a}, a+"-sibling/file"); !errors.Is(err, ErrOutside) {
		t.Errorf("a sibling folder sharing the root's prefix: %v", err)
	}
}

func TestOpenAndCreateStayInside(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "secret"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(root, "up")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open([]string{root}, filepath.Join(root, "link")); !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), "escapes root "+root) {
		t.Errorf("open through a symbolic link out: %v", err)
	}
	if _, err := Create([]string{root}, filepath.Join(root, "up", "planted")); !errors.Is(err, ErrOutside) {
		t.Errorf("create through a symbolic link out: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "planted")); !os.IsNotExist(err) {
		t.Errorf("a file was created outside the root: %v", err)
	}
	f, err := Create([]string{root}, filepath.Join(root, "a", "b", "out"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if f, err = Open([]string{root}, filepath.Join(root, "a", "b", "out")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Stat tells what a path names only inside the roots
	if fi, err := Stat([]string{root}, filepath.Join(root, "a", "b", "out")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("stat inside: %v %v", fi, err)
	}
	if _, err := Stat([]string{root}, filepath.Join(root, "link")); !errors.Is(err, ErrOutside) {
		t.Errorf("stat through a symbolic link out: %v", err)
	}
	if _, err := Stat([]string{root}, filepath.Join(base, "secret")); !errors.Is(err, ErrOutside) {
		t.Errorf("stat outside: %v", err)
	}
}
