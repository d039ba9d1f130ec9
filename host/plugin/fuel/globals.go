package fuel

import "math"

// appendCounterGlobal rewrites the global section (§5.5.9 "Global
// Section") with the fuel counter appended as its last entry:
// (global (mut i64) (i64.const initial)). A nil section yields one holding
// only the counter. It returns the count of globals the module defined
// before.
func appendCounterGlobal(s *section, imported, types uint32, initial int64) ([]byte, uint32, error) {
	var n uint32
	var rest []byte
	if s != nil {
		r := newReader(s.payload, s.offset)
		var err error
		if n, err = r.count(); err != nil {
			return nil, 0, err
		}
		if uint64(imported)+uint64(n) >= math.MaxUint32 {
			return nil, 0, r.errorf(ErrMalformed, "%d imported + %d defined globals leave no index for the counter", imported, n)
		}
		bodyStart := r.off
		for i := uint32(0); i < n; i++ {
			if err := readGlobalType(r); err != nil {
				return nil, 0, err
			}
			if err := readConstExpr(r, bounds{types: types, globals: imported + n}); err != nil {
				return nil, 0, err
			}
		}
		if err := trailing(r); err != nil {
			return nil, 0, err
		}
		rest = s.payload[bodyStart:]
	}
	out := appendU32(make([]byte, 0, len(rest)+16), n+1)
	out = append(out, rest...)
	out = append(out, valI64, 0x01, opI64Const)
	out = appendS64(out, initial)
	return append(out, opEnd), n, nil
}

// readConstExpr walks a constant expression (§5.4.9 "Expressions") up to
// its end, refusing references to the counter's global index.
func readConstExpr(r *reader, b bounds) error {
	depth := 0
	for {
		in, err := readInstr(r, b)
		if err != nil {
			return err
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
