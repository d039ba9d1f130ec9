package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadRefusesBadModules(t *testing.T) {
	h := newHost(t, func(c *Config) { c.MemoryLimitPages = 256 })
	tests := []struct {
		fixture  string
		problems []string
	}{
		{"nomarker", []string{
			"missing the ABI marker export sluice_abi_v1 () -> (): it was not built with a sluice ABI v1 SDK",
		}},
		{"abiv2", []string{
			"built for ABI v2 (it exports sluice_abi_v2), but this host speaks ABI v1 (marker sluice_abi_v1)",
			"imports sluice_v2.emit: built for ABI v2, but this host provides module sluice_v1 (ABI v1)",
		}},
		{"unregistered", []string{
			"missing the ABI marker export sluice_abi_v1 () -> (): it was not built with a sluice ABI v1 SDK, or it is not registered " +
				"(Go: import the SDK and register an operator in init; Rust: sluice::filter!(...) or the like; C: SLUICE_OPERATOR(plugin); " +
				"AssemblyScript: export * from the SDK's assembly/operator)",
			"missing export sluice_process (i32, i32, i32, i32) -> i32 (or sluice_partition (i32, i32, i32, i32) -> i32 for a partitioner)",
			"missing export sluice_buffer (i32) -> i32",
			"missing export sluice_open (i32, i32, i32, i32, i32) -> i32",
		}},
		{"missing_export", []string{
			"missing export sluice_open (i32, i32, i32, i32, i32) -> i32",
		}},
		{"badsig", []string{
			"export sluice_buffer has signature (i64) -> i32; ABI v1 requires (i32) -> i32",
			"export sluice_process has signature (i32, i32) -> i32; ABI v1 requires (i32, i32, i32, i32) -> i32",
		}},
		{"unknown_import", []string{
			"imports env.abort, which this host does not provide: an AssemblyScript plugin is built with --use abort=<sdk>/assembly/abort/sluiceAbort (sdk/assemblyscript/README.md)",
			"imports sluice_v1.sleep, which ABI v1 does not define",
			"imports sluice_v1.emit as (i32) -> i32; ABI v1 defines it as (i32, i32, i32, i32) -> i32",
			"imports wasi_snapshot_preview1.sock_listen, which the host's WASI does not provide",
		}},
		{"timer_noontimer", []string{
			"imports sluice_v1.timer_register but does not export sluice_on_timer (i32, i64, i32, i32) -> i32: the host calls it back when a timer fires " +
				"(Go: sdk.KeyedProcess(fn).OnTimer(onTimer))",
			"imports sluice_v1.timer_delete as (i32, i32, i32, i32) -> i32; ABI v1 defines it as (i32, i32, i32, i64) -> i32",
		}},
		{"command", []string{
			"exports _start, so it is a WASI command, not a reactor: build it as a library (Go: -buildmode=c-shared; C: -mexec-model=reactor)",
		}},
		{"hiddenmem", []string{
			`exports a table named "memory"; ABI v1 requires its linear memory under that name`,
		}},
		{"bigmem", []string{
			"declares 300 pages (18.8 MiB) of initial memory, above the host's limit of 256 pages (16 MiB)",
		}},
		// Every problem at once, in one error.
		{"multi", []string{
			"missing the ABI marker export sluice_abi_v1 () -> (): it was not built with a sluice ABI v1 SDK",
			"missing export sluice_buffer (i32) -> i32",
			"exports _start, so it is a WASI command, not a reactor: build it as a library (Go: -buildmode=c-shared; C: -mexec-model=reactor)",
			"imports env.now, which this host does not provide (plugins may import only from sluice_v1 and wasi_snapshot_preview1)",
			"declares 300 pages (18.8 MiB) of initial memory, above the host's limit of 256 pages (16 MiB)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			_, err := h.Load(context.Background(), tt.fixture, fixture(t, tt.fixture))
			le := wantLoadErr(t, err, tt.problems...)
			if le.Plugin != tt.fixture {
				t.Errorf("Plugin = %q", le.Plugin)
			}
			want := fmt.Sprintf("plugin %q cannot be loaded: %s", tt.fixture, tt.problems[0])
			if len(tt.problems) > 1 {
				want = fmt.Sprintf("plugin %q cannot be loaded: %d problems:\n  - %s", tt.fixture, len(tt.problems), strings.Join(tt.problems, "\n  - "))
			}
			if err.Error() != want {
				t.Errorf("error text\n got: %s\nwant: %s", err, want)
			}
		})
	}
	if len(h.compiled) != 0 {
		t.Errorf("%d modules compiled; refused modules must not reach the compiler", len(h.compiled))
	}
}

func TestLoadRefusesWhatIsNotWasm(t *testing.T) {
	h := newHost(t, nil)
	identity := fixture(t, "identity")
	tests := []struct {
		name, want string
		bin        []byte
	}{
		{"script", `is not a WebAssembly module: it starts with "#!/bin/s", not the wasm magic \0asm`, []byte("#!/bin/sh\necho hi\n")},
		{"empty", "is not a WebAssembly module: the file is empty", nil},
		{"header", "is a truncated WebAssembly module: the file ends after 6 bytes, inside the 8-byte header", identity[:6]},
		{"component", "is not a WebAssembly module: binary format version 0x0001000d (a component or a newer format), want 1", []byte("\x00asm\x0d\x00\x01\x00")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Load(context.Background(), tt.name, tt.bin)
			wantLoadErr(t, err, tt.want)
		})
	}
	t.Run("truncated", func(t *testing.T) {
		_, err := h.Load(context.Background(), "half", identity[:len(identity)/2])
		le := wantLoadErr(t, err, mustProblem(t, err))
		if !strings.HasPrefix(le.Problems[0], "is a truncated WebAssembly module: section ") || !strings.Contains(le.Problems[0], "claims") {
			t.Errorf("problem = %q, want a truncated section", le.Problems[0])
		}
	})
}

func mustProblem(t *testing.T, err error) string {
	var le *LoadError
	if !errors.As(err, &le) || len(le.Problems) != 1 {
		t.Fatalf("error = %v, want a *LoadError with one problem", err)
	}
	return le.Problems[0]
}

func TestLoadSizeCapBeforeCompiling(t *testing.T) {
	h := newHost(t, func(c *Config) { c.MaxModuleBytes = 100 })
	path := fixturePath(t, "identity")
	size := len(fixture(t, "identity"))
	_, err := h.LoadFile(context.Background(), path)
	le := wantLoadErr(t, err, fmt.Sprintf("is %d bytes, above the limit of 100 bytes (the max-module-bytes setting)", size))
	if want := fmt.Sprintf("plugin \"identity\" (%s) cannot be loaded: is %d bytes, above the limit of 100 bytes (the max-module-bytes setting)", path, size); le.Error() != want {
		t.Errorf("error text\n got: %s\nwant: %s", le, want)
	}
	_, err = h.Load(context.Background(), "identity", fixture(t, "identity"))
	wantLoadErr(t, err, "is more than 100 bytes, the limit (the max-module-bytes setting)")
	if len(h.compiled) != 0 {
		t.Error("an oversized module reached the compiler")
	}
}

func TestLoadFileErrors(t *testing.T) {
	h := newHost(t, nil)
	_, err := h.LoadFile(context.Background(), filepath.Join(t.TempDir(), "absent.wasm"))
	wantLoadErr(t, err, "the file does not exist")
	_, err = h.LoadFile(context.Background(), t.TempDir())
	wantLoadErr(t, err, "is a directory, not a .wasm file")
}

func TestCompileOncePerModule(t *testing.T) {
	h := newHost(t, nil)
	a := load(t, h, "identity")
	b, err := h.LoadFile(context.Background(), fixturePath(t, "identity"))
	if err != nil {
		t.Fatal(err)
	}
	if a.compiled != b.compiled || len(h.compiled) != 1 {
		t.Errorf("the same bytes compiled %d times", len(h.compiled))
	}
	if b.Name() != "identity" || b.Info().Path == "" {
		t.Errorf("name %q path %q", b.Name(), b.Info().Path)
	}
}

func TestCompilationCacheDir(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		h := newHost(t, func(c *Config) { c.CacheDir = dir })
		op := open(t, load(t, h, "identity"), runtimeOpenContext())
		out := &sink{}
		if err := op.Process(0, record(nil, 1, 5), 1, out); err != nil || out.records() != 1 {
			t.Fatalf("run %d: %v, %d records", i, err, out.records())
		}
		op.Close(nil)
		h.Close(context.Background())
	}
	n := 0
	filepath.Walk(dir, func(_ string, fi os.FileInfo, _ error) error {
		if fi != nil && !fi.IsDir() {
			n++
		}
		return nil
	})
	if n == 0 {
		t.Error("the compilation cache directory is empty")
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.MemoryLimitPages = 0 }, "plugin config: MemoryLimitPages is 0, want 1 to 65535 (64 KiB pages)"},
		{func(c *Config) { c.MemoryLimitPages = 65536 }, "plugin config: MemoryLimitPages is 65536, want 1 to 65535 (64 KiB pages)"},
		{func(c *Config) { c.CallTimeout = 0 }, "plugin config: CallTimeout is 0s, want a positive duration: every call into a plugin needs a deadline"},
		{func(c *Config) { c.MaxOutputBytes = -1 }, "plugin config: MaxOutputBytes is -1, want 1 to 1073741824"},
		{func(c *Config) { c.MaxModuleBytes = 0 }, "plugin config: MaxModuleBytes is 0, want 1 to 1073741824"},
		{func(c *Config) { c.StderrCap = 2 << 20 }, "plugin config: StderrCap is 2097152, want 0 to 1048576"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.edit(&c)
		if err := c.Validate(); err == nil || err.Error() != tt.want {
			t.Errorf("Validate() = %v, want %s", err, tt.want)
		}
		if _, err := New(context.Background(), c); err == nil {
			t.Errorf("New accepted %+v", c)
		}
	}
	if d := DefaultConfig(); d.AllowClock || d.AllowRandom || d.CallTimeout != 5*time.Second || !d.CheckOutput {
		t.Errorf("DefaultConfig() = %+v", d)
	}
}

// WASI is instantiated by the first load of a module that imports it, not
// before: a Host of WASI-free guests does not compile its functions.
func TestWASIOnlyForModulesThatImportIt(t *testing.T) {
	h := newHost(t, nil)
	op := open(t, load(t, h, "identity"), runtimeOpenContext())
	defer op.Close(nil)
	if h.rt.Module(wasiModule) != nil {
		t.Fatal("WASI instantiated for a module that does not import it")
	}
	script := open(t, load(t, h, "script"), runtimeOpenContext())
	defer script.Close(nil)
	if h.rt.Module(wasiModule) == nil {
		t.Fatal("WASI not instantiated for a module that imports it")
	}
	load(t, h, "poison") // a second WASI guest: instantiated once only
	out := &sink{}
	if err := op.Process(0, record(nil, 1, 5), 1, out); err != nil || out.records() != 1 {
		t.Fatalf("identity after WASI: %v, %d records", err, out.records())
	}
}
