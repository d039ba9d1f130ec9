package plugin

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/abi"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Host runs plugins: one wazero runtime (compiler engine) with the
// limits of its Config, the sluice_v1 host functions and, from the first
// module that imports it, WASI. It is safe for concurrent use; the
// instances it creates are not.
type Host struct {
	cfg   Config
	rt    wazero.Runtime
	cache wazero.CompilationCache // nil without CacheDir
	intr  interrupter

	mu       sync.Mutex
	compiled map[[sha256.Size]byte]wazero.CompiledModule
	closed   bool
	wasiUp   bool // WASI instantiated in rt (under mu)

	live atomic.Int64 // instances made and not closed yet
}

// LiveInstances is the number of instances the Host made that are not
// closed yet: 0 once every job using it ended.
func (h *Host) LiveInstances() int64 { return h.live.Load() }

// New builds a Host. Close releases it.
func New(ctx context.Context, cfg Config) (*Host, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Host{cfg: cfg, intr: newInterrupter(cfg), compiled: map[[sha256.Size]byte]wazero.CompiledModule{}}
	rc := wazero.NewRuntimeConfigCompiler().WithMemoryLimitPages(cfg.MemoryLimitPages)
	rc = h.intr.configure(rc)
	if cfg.CacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("plugin compilation cache %s: %w", cfg.CacheDir, err)
		}
		h.cache = c
		rc = rc.WithCompilationCache(c)
	}
	h.rt = wazero.NewRuntimeWithConfig(ctx, rc)
	if err := h.instantiateHostModules(ctx); err != nil {
		_ = h.Close(ctx)
		return nil, err
	}
	return h, nil
}

// Config returns the Host's configuration.
func (h *Host) Config() Config { return h.cfg }

// instantiateHostModules instantiates the sluice_v1 host functions and
// the interrupter's. WASI waits for a module that imports it (useWASI):
// its ~45 functions are compiled anew by every runtime (wazero caches no
// host module on disk), about half of a warm-cache start, and of the
// example plugins only Go's import it.
func (h *Host) instantiateHostModules(ctx context.Context) error {
	b := h.rt.NewHostModuleBuilder(abi.ImportModule)
	for _, f := range hostFuncs {
		t := importSigs[f.name]
		b.NewFunctionBuilder().
			WithGoModuleFunction(f.fn, wazeroTypes(t.params), wazeroTypes(t.results)).
			WithParameterNames(f.params...).
			Export(f.name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("plugin host: instantiate %s: %w", abi.ImportModule, err)
	}
	if err := h.intr.instantiate(ctx, h.rt); err != nil {
		return fmt.Errorf("plugin host: %w", err)
	}
	return nil
}

// useWASI instantiates WASI in the Host's runtime once, before the first
// module that imports it is compiled. Called with h.mu held.
func (h *Host) useWASI(ctx context.Context) error {
	if h.wasiUp {
		return nil
	}
	if err := instantiateWASI(ctx, h.rt); err != nil {
		return fmt.Errorf("instantiate WASI: %w", err)
	}
	h.wasiUp = true
	return nil
}

// Close releases the runtime, every compiled module and instance, and the
// compilation cache.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.compiled = nil
	h.mu.Unlock()
	err := h.rt.Close(ctx)
	if h.cache != nil {
		if cerr := h.cache.Close(ctx); err == nil {
			err = cerr
		}
	}
	return err
}

func apiTypes(v []api.ValueType) []valType {
	out := make([]valType, len(v))
	for i, t := range v {
		out[i] = valType(t)
	}
	return out
}

func wazeroTypes(v []valType) []api.ValueType {
	out := make([]api.ValueType, len(v))
	for i, t := range v {
		out[i] = api.ValueType(t)
	}
	return out
}
