package plugin

import (
	"fmt"
	"io"
	"os"
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
		return []string{fmt.Sprintf("is %d bytes, above the limit of %d bytes (the max-module-bytes setting)", st.Size(), cfg.MaxModuleBytes)}, nil
	}
	bin, err := io.ReadAll(io.LimitReader(f, int64(cfg.MaxModuleBytes)+1))
	if err != nil {
		return nil, err
	}
	if len(bin) > cfg.MaxModuleBytes {
		return []string{fmt.Sprintf("is more than %d bytes, the limit (the max-module-bytes setting)", cfg.MaxModuleBytes)}, nil
	}
	w, _, err := parseWasm(bin)
	if err != nil {
		return []string{err.Error()}, nil
	}
	wasi, err := wasiSignatures()
	if err != nil {
		return nil, err
	}
	return check(w, cfg.MemoryLimitPages, wasi), nil
}
