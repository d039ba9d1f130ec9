package fuel

import (
	"fmt"
	"math"

	"github.com/sluicehq/sluice/internal/wasmbin"
)

// readGlobals reads the global section (§5.5.9 "Global Section"): it
// returns the count of globals the module defines and their entries, with
// the function indices in initialisers (ref.func) renumbered under sh
// (funcs bounds them when set). A nil section defines none.
func readGlobals(s *section, imported, types, funcs uint32, sh funcShift) (uint32, []byte, error) {
	if s == nil {
		return 0, nil, nil
	}
	r := wasmbin.NewReader(s.Payload, s.Offset)
	n, err := r.Count()
	if err != nil {
		return 0, nil, err
	}
	if uint64(imported)+uint64(n) >= math.MaxUint32 {
		return 0, nil, r.Errorf(ErrMalformed, "%d imported + %d defined globals leave no index for the counter", imported, n)
	}
	bodyStart := r.Off
	fixes := sh.patches()
	for i := uint32(0); i < n; i++ {
		if _, err := r.GlobalType(); err != nil {
			return 0, nil, err
		}
		if err := readConstExpr(r, bounds{types: types, globals: imported + n, funcs: funcs}, fixes); err != nil {
			return 0, nil, err
		}
	}
	if err := r.Trailing(); err != nil {
		return 0, nil, err
	}
	return n, fixes.apply(nil, s.Payload, bodyStart, sh), nil
}

// globalSection writes the global section: the module's n globals
// (entries), then the fuel counter, (global (mut i64) (i64.const
// initial)).
func globalSection(n uint32, entries []byte, initial int64) ([]byte, error) {
	total := uint64(n) + 1
	if total > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %d globals with the counter", ErrMalformed, total)
	}
	out := wasmbin.AppendU32(make([]byte, 0, len(entries)+16), uint32(total))
	out = append(out, entries...)
	out = append(out, valI64, 0x01, opI64Const)
	return append(wasmbin.AppendS64(out, initial), opEnd), nil
}

// readConstExpr walks a constant expression (§5.4.9 "Expressions") up to
// its end, refusing references to the counter's global index and
// recording function indices (ref.func) in fixes.
func readConstExpr(r *wasmbin.Reader, b bounds, fixes *patches) error {
	depth := 0
	for {
		in, err := readInstr(r, b)
		if err != nil {
			return err
		}
		if in.fn {
			fixes.add(in.fat, r.Off, in.fidx)
		}
		switch in.kind {
		case kBlock, kLoop, kIf:
			depth++
		case kEnd:
			if depth == 0 {
				return nil
			}
			depth--
		}
	}
}
