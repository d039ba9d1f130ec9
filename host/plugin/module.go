package plugin

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/host/plugin/fuel"
	"github.com/sluicehq/sluice/host/roots"
	"github.com/sluicehq/sluice/internal/wasmbin"
	"github.com/tetratelabs/wazero"
)

// Module is a checked, compiled plugin. It is immutable and may be shared;
// each subtask makes its own instances from it.
type Module struct {
	host     *Host
	name     string
	path     string
	size     int
	sum      [sha256.Size]byte
	bin      *wasmBinary
	compiled wazero.CompiledModule
	grants   Grants
	decl     *stateDecl // the state slots describe declares, read once (statekinds_open.go)
}

// Name is the plugin's name: given to Load, or the file name without .wasm.
func (m *Module) Name() string { return m.name }

// Host returns the Host that compiled the module.
func (m *Module) Host() *Host { return m.host }

// LoadFile reads, checks and compiles the plugin at path. Its name is the
// file name without the .wasm extension.
func (h *Host) LoadFile(ctx context.Context, path string) (*Module, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".wasm")
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(name, path, err)
	}
	return h.loadOpened(ctx, name, path, f)
}

// openError is the LoadError of a plugin file that could not be opened:
// one that does not exist says so.
func openError(name, path string, err error) error {
	msg := unwrapPath(err).Error()
	if errors.Is(err, fs.ErrNotExist) {
		msg = "the file does not exist"
	}
	return &LoadError{Plugin: name, Path: path, Problems: []string{msg}, Err: err}
}

// LoadNamed loads the plugin a pipeline names name from path, confined to
// allowed (LoadFileIn; LoadFile when allowed is nil): the module and its
// load errors carry the pipeline's name, not the file's.
func (h *Host) LoadNamed(ctx context.Context, allowed []string, name, path string) (*Module, error) {
	var m *Module
	var err error
	if allowed != nil {
		m, err = h.LoadFileIn(ctx, allowed, path)
	} else {
		m, err = h.LoadFile(ctx, path)
	}
	if le := (*LoadError)(nil); errors.As(err, &le) {
		le.Plugin = name
	}
	if err != nil {
		return nil, err
	}
	m.name = name
	return m, nil
}

// LoadFileIn is LoadFile confined to roots: path must lie inside one of
// the folders (lexically) and is opened through an os.Root of it, so that
// neither ".." nor a symbolic link leads out.
func (h *Host) LoadFileIn(ctx context.Context, allowed []string, path string) (*Module, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".wasm")
	f, err := roots.Open(allowed, path)
	if err != nil {
		return nil, openError(name, path, err)
	}
	return h.loadOpened(ctx, name, path, f)
}

// loadOpened reads, checks and compiles the module file f, then closes it.
func (h *Host) loadOpened(ctx context.Context, name, path string, f *os.File) (*Module, error) {
	fail := func(format string, args ...any) error {
		return &LoadError{Plugin: name, Path: path, Problems: []string{fmt.Sprintf(format, args...)}}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fail("%v", unwrapPath(err))
	}
	if st.IsDir() {
		return nil, fail("is a directory, not a .wasm file")
	}
	if st.Size() > int64(h.cfg.MaxModuleBytes) {
		return nil, fail("is %d bytes, above the limit of %d bytes (the max-module-bytes setting)", st.Size(), h.cfg.MaxModuleBytes)
	}
	// The file may grow between Stat and read: read at most one byte more
	// than the limit.
	bin, err := io.ReadAll(io.LimitReader(f, int64(h.cfg.MaxModuleBytes)+1))
	if err != nil {
		return nil, fail("read: %v", unwrapPath(err))
	}
	return h.load(ctx, name, path, bin)
}

// Load checks and compiles the plugin in bin under name.
func (h *Host) Load(ctx context.Context, name string, bin []byte) (*Module, error) {
	return h.load(ctx, name, "", bin)
}

func (h *Host) load(ctx context.Context, name, path string, bin []byte) (*Module, error) {
	fail := func(problems ...string) error { return &LoadError{Plugin: name, Path: path, Problems: problems} }
	if len(bin) > h.cfg.MaxModuleBytes {
		return nil, fail(fmt.Sprintf("is more than %d bytes, the limit (the max-module-bytes setting)", h.cfg.MaxModuleBytes))
	}
	w, dec, err := parseWasm(bin)
	if err != nil {
		return nil, fail(err.Error())
	}
	var wasi map[string]funcType
	if w.importsFrom(wasiModule) {
		if wasi, err = wasiSignatures(); err != nil {
			return nil, fail(err.Error())
		}
	}
	if problems := check(w, h.cfg.MemoryLimitPages, wasi); len(problems) > 0 {
		return nil, fail(problems...)
	}
	m := &Module{host: h, name: name, path: path, size: len(bin), sum: sha256.Sum256(bin), bin: w, decl: &stateDecl{}}
	m.compiled, err = h.compile(ctx, m.sum, bin, dec, wasi != nil)
	if errors.Is(err, fuel.ErrLimit) {
		return nil, fail("is refused before compiling: " + err.Error())
	}
	if err != nil {
		return nil, fail("does not compile: " + err.Error())
	}
	return m, nil
}

// compile compiles bin (decoded as dec) once per Host: later loads of the
// same bytes reuse the compiled code. A module that imports WASI (wasi)
// gets it instantiated first.
func (h *Host) compile(ctx context.Context, sum [sha256.Size]byte, bin []byte, dec *wasmbin.Module, wasi bool) (wazero.CompiledModule, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("the plugin host is closed")
	}
	if wasi {
		if err := h.useWASI(ctx); err != nil {
			return nil, err
		}
	}
	if c, ok := h.compiled[sum]; ok {
		return c, nil
	}
	bin, err := h.intr.prepare(bin, dec)
	if err != nil {
		return nil, err
	}
	c, err := compileGuarded(ctx, h.rt, bin)
	if err != nil {
		return nil, err
	}
	h.compiled[sum] = c
	return c, nil
}

// unwrapPath drops the path from an *os.PathError: LoadError names it.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// compileGuarded compiles bin, turning a panic inside wazero's compiler
// (seen on crafted modules with out-of-range type indices) into an error:
// a bad plugin must never crash the host.
func compileGuarded(ctx context.Context, rt wazero.Runtime, bin []byte) (c wazero.CompiledModule, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("the compiler rejected the module: %v", r)
		}
	}()
	return rt.CompileModule(ctx, bin)
}
