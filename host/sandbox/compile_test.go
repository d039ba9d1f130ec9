package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/plugin/fuel"
)

// TestSandbox20_CompileBomb: small modules that would hold wazero's
// compiler (which cannot be interrupted) for minutes or gigabytes, deep
// nesting, many loops, many locals, are refused at load under every
// interruption mechanism, with the limit and the function named, before
// the compiler sees them: the Host's compilation cache (to which wazero
// writes every module it compiles) is still empty after the refusals, and
// holds the good job's modules once the host has run it.
func TestSandbox20_CompileBomb(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "identity.wat"))
	if err != nil {
		t.Fatal(err)
	}
	identity := string(src)
	end := strings.LastIndex(identity, ")")
	locals := "(local" + strings.Repeat(" i32", 50000) + ")"
	bombs := []struct {
		name, funcs string
		want        []string
	}{
		{"nested blocks", "(func $deep " + strings.Repeat("block ", fuel.MaxNesting+1) + strings.Repeat("end ", fuel.MaxNesting+1) + ")",
			[]string{fmt.Sprintf("($deep): blocks nested %d deep, more than the limit of %d", fuel.MaxNesting+1, fuel.MaxNesting)}},
		{"loops", "(func $spin " + strings.Repeat("loop end ", fuel.MaxLoops+1) + ")",
			[]string{fmt.Sprintf("($spin): more than %d loops, the limit", fuel.MaxLoops)}},
		{"locals", func() string {
			var b strings.Builder
			for i := 0; i <= fuel.MaxModuleLocals/50000; i++ {
				fmt.Fprintf(&b, "(func $wide%d %s)", i, locals)
			}
			return b.String()
		}(), []string{fmt.Sprintf("more than the limit of %d for all functions together", fuel.MaxModuleLocals)}},
	}
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatal("wat2wasm not found: install wabt")
	}
	dir := t.TempDir()
	for _, intr := range []string{plugin.InterruptFuel, plugin.InterruptDeadline, plugin.InterruptNone} {
		cache := filepath.Join(dir, "cache-"+intr)
		h := tenant(t, func(c *plugin.Config) { c.Interruption, c.CacheDir = intr, cache })
		for _, b := range bombs {
			t.Run(intr+"/"+b.name, func(t *testing.T) {
				base := filepath.Join(dir, strings.ReplaceAll(b.name, " ", "_"))
				if _, err := os.Stat(base + ".wasm"); err != nil {
					if err := os.WriteFile(base+".wat", []byte(identity[:end]+b.funcs+identity[end:]), 0o644); err != nil {
						t.Fatal(err)
					}
					if msg, err := exec.Command(tool, "--debug-names", base+".wat", "-o", base+".wasm").CombinedOutput(); err != nil {
						t.Fatalf("wat2wasm: %v\n%s", err, msg)
					}
				}
				_, err := h.LoadFile(context.Background(), base+".wasm")
				wantWords(t, err, append([]string{"cannot be loaded", "is refused before compiling: function"}, b.want...)...)
				if files := cachedFiles(t, cache); len(files) != 0 {
					t.Errorf("the refused module reached the compiler: the cache holds %v", files)
				}
			})
		}
		healthy(t, h)
		if len(cachedFiles(t, cache)) == 0 {
			t.Errorf("%s: the cache holds nothing after a good job: it cannot show what was compiled", intr)
		}
	}
}

// cachedFiles lists the files under a Host's CacheDir (none when it does
// not exist yet).
func cachedFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == dir {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}
