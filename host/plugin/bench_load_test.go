package plugin

import (
	"os"
	"testing"
)

// BenchmarkLoadBeforeCompile: what Load does to a module before wazero
// compiles it, without a cache: decode it, check it against the ABI and
// meter it (package fuel), for the WAT identity fixture and the Go build
// of the example plugin valid (about 3 MB).
func BenchmarkLoadBeforeCompile(b *testing.B) {
	run := func(b *testing.B, bin []byte) {
		h := newHost(b, nil)
		wasi, err := wasiSignatures()
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(bin)))
		b.ReportAllocs()
		for b.Loop() {
			w, dec, err := parseWasm(bin)
			if err != nil {
				b.Fatal(err)
			}
			if p := check(w, h.cfg.MemoryLimitPages, wasi); len(p) > 0 {
				b.Fatal(p)
			}
			if _, err := h.intr.prepare(bin, dec); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("wat", func(b *testing.B) { run(b, fixture(b, "identity")) })
	b.Run("go", func(b *testing.B) {
		bin, err := os.ReadFile(goPluginBench(b, "valid"))
		if err != nil {
			b.Fatal(err)
		}
		run(b, bin)
	})
}
