package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/plugin/fuel"
)

// TestSandbox20_CompileBomb: small modules that would hold wazero's
// compiler (which cannot be interrupted) for minutes or gigabytes, deep
// nesting, many loops, many locals, are refused at load under every
// interruption mechanism, at once, with the limit and the function named;
// the host then runs a good job.
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
		h := tenant(t, func(c *plugin.Config) { c.Interruption = intr })
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
				start := time.Now()
				_, err := h.LoadFile(context.Background(), base+".wasm")
				wantWords(t, err, append([]string{"cannot be loaded", "is refused before compiling: function"}, b.want...)...)
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("refusing took %v: the check must come before the compiler", d)
				}
			})
		}
		healthy(t, h)
	}
}
