package plugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// CheckFile checks the module at path against ABI v1 and cfg's limits
// without compiling or running it (what `host lint` reports about a
// pipeline's plugins): its size before reading it, then its header,
// exports, imports and declared memory. It returns the problems Load
// would report, none when the module would load; err is for a file it
// cannot read.
func CheckFile(path string, cfg Config) (problems []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > int64(cfg.MaxModuleBytes) {
		return []string{fmt.Sprintf("is %d bytes, above the limit of %d bytes (MaxModuleBytes)", st.Size(), cfg.MaxModuleBytes)}, nil
	}
	bin, err := io.ReadAll(io.LimitReader(f, int64(cfg.MaxModuleBytes)+1))
	if err != nil {
		return nil, err
	}
	if len(bin) > cfg.MaxModuleBytes {
		return []string{fmt.Sprintf("is more than %d bytes, the limit (MaxModuleBytes)", cfg.MaxModuleBytes)}, nil
	}
	w, err := parseWasm(bin)
	if err != nil {
		return []string{err.Error()}, nil
	}
	wasi, err := wasiSignatures()
	if err != nil {
		return nil, err
	}
	return check(w, cfg.MemoryLimitPages, wasi), nil
}

var (
	wasiOnce sync.Once
	wasiSigs map[string]funcType
	wasiErr  error
)

// wasiSignatures are the host's WASI functions, read once from a
// throw-away runtime (no plugin is compiled).
func wasiSignatures() (map[string]funcType, error) {
	wasiOnce.Do(func() {
		ctx := context.Background()
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
		defer rt.Close(ctx)
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
			wasiErr = fmt.Errorf("read the host's WASI signatures: %w", err)
			return
		}
		wasiSigs = map[string]funcType{}
		for name, def := range rt.Module(wasiModule).ExportedFunctionDefinitions() {
			wasiSigs[name] = funcType{params: apiTypes(def.ParamTypes()), results: apiTypes(def.ResultTypes())}
		}
	})
	return wasiSigs, wasiErr
}
