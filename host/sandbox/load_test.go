package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/host/plugin"
)

// Row 11: missing exports, another ABI version, a command instead of a
// reactor, unknown imports, not wasm at all, truncated wasm and an
// oversized module are refused at load, saying what is missing or
// different; the size cap applies before anything is parsed or compiled.
func TestSandbox11_RefusedAtLoad(t *testing.T) {
	h := tenant(t, func(c *plugin.Config) { c.MaxModuleBytes = 4096 })
	dir := t.TempDir()
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	identity, err := os.ReadFile(wasm(t, "identity"))
	if err != nil {
		t.Fatal(err)
	}
	garbage := make([]byte, 5000) // not wasm, and too big
	for _, tt := range []struct {
		name, path string
		want       []string
	}{
		{"missing exports", wasm(t, "missing_export"), []string{"missing export sluice_open (i32, i32, i32, i32, i32) -> i32"}},
		{"wrong ABI version", wasm(t, "abiv2"), []string{
			"built for ABI v2 (it exports sluice_abi_v2), but this host speaks ABI v1 (marker sluice_abi_v1)",
			"imports sluice_v2.emit: built for ABI v2, but this host provides module sluice_v1 (ABI v1)"}},
		{"no marker", wasm(t, "nomarker"), []string{"missing the ABI marker export sluice_abi_v1"}},
		{"command, not reactor", wasm(t, "command"), []string{"exports _start, so it is a WASI command, not a reactor"}},
		{"unknown imports", wasm(t, "unknown_import"), []string{
			"imports env.abort, which this host does not provide",
			"imports sluice_v1.sleep, which ABI v1 does not define",
			"imports sluice_v1.emit as (i32) -> i32; ABI v1 defines it as (i32, i32, i32, i32) -> i32",
			"imports wasi_snapshot_preview1.sock_listen, which the host's WASI does not provide"}},
		{"wrong signature", wasm(t, "badsig"), []string{"has signature"}},
		{"not wasm", file("text.wasm", []byte("#!/bin/sh\nrm -rf /\n")), []string{`is not a WebAssembly module: it starts with "#!/bin/s", not the wasm magic \0asm`}},
		{"truncated wasm", file("cut.wasm", identity[:len(identity)/2]), []string{"is a truncated WebAssembly module"}},
		{"oversized", file("big.wasm", garbage), []string{"is 5000 bytes, above the limit of 4096 bytes (the max-module-bytes setting)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.LoadFile(context.Background(), tt.path)
			wantWords(t, err, append([]string{"cannot be loaded"}, tt.want...)...)
			problems, err := plugin.CheckFile(tt.path, h.Config())
			if err != nil || len(problems) == 0 {
				t.Errorf("the header check (lint) passes it: %v", err)
			}
		})
	}
	healthy(t, h)
}
