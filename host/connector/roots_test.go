package connector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/runtime"
)

// TestFilePathsConfinedToRoots: with Builtin.Roots, a file source or sink
// path that climbs out of the roots (with ".." or through a symbolic link)
// is an error naming the path and the root; paths inside work.
func TestFilePathsConfinedToRoots(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, base, "secret.jsonl", "{\"secret\":1}\n")
	writeFile(t, data, "in.jsonl", "{\"n\":1}\n")
	if err := os.Symlink(filepath.Join(base, "secret.jsonl"), filepath.Join(data, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	b := &Builtin{Root: data, Roots: []string{data}}

	c, _ := runSource(t, b, sourceSpec("read", "file", map[string]any{"path": "in.jsonl"}), 0, 1)
	if got := strings.Join(c.jsons(), " "); got != `{"n":1}` {
		t.Errorf("read %s", got)
	}
	_, err := runSourceErr(t, b, sourceSpec("read", "file", map[string]any{"path": "../secret.jsonl"}), 0, 1)
	wantErrContaining(t, err, `source "read": path ../secret.jsonl resolves to `+filepath.Join(base, "secret.jsonl")+", outside the allowed root "+data)
	_, err = runSourceErr(t, b, sourceSpec("read", "file", map[string]any{"path": "link.jsonl"}), 0, 1)
	wantErrContaining(t, err, `source "read": path link.jsonl escapes root `+data)

	sink, err := b.Sink(sinkSpec("out", "file", map[string]any{"path": "../escaped.jsonl"}), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantErrContaining(t, sink.Open(&runtime.OpenContext{}), `sink "out": path ../escaped.jsonl resolves to `+filepath.Join(base, "escaped.jsonl")+", outside the allowed root "+data)
	if _, err := os.Stat(filepath.Join(base, "escaped.jsonl")); !os.IsNotExist(err) {
		t.Errorf("the sink wrote outside its root: %v", err)
	}
	sink, err = b.Sink(sinkSpec("out", "file", map[string]any{"path": "sub/dir/out.jsonl"}), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Open(&runtime.OpenContext{}); err != nil {
		t.Fatalf("a sink inside its root: %v", err)
	}
	if err := sink.Close(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(data, "sub", "dir", "out.jsonl")); err != nil {
		t.Errorf("the sink did not create its file: %v", err)
	}
}
