package fuel

import "math"

// The memory, table, element and data sections pass through unchanged, but
// they are walked anyway: to refuse memory64 and a constant expression
// that reads the counter's index, and so that every vector count in the
// module is checked against the bytes that hold it before a runtime
// allocates from it (reader.count).

// checkMemories reads the memory section (§5.5.8 "Memory Section"),
// refusing memory64 and other limits encodings readLimits does not know.
func checkMemories(s section) error {
	r := newReader(s.payload, s.offset)
	n, err := r.count()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		if err := readLimits(r); err != nil {
			return err
		}
	}
	return trailing(r)
}

// checkTables reads the table section (§5.5.7 "Table Section"):
// vec(reftype limits).
func checkTables(s section) error {
	r := newReader(s.payload, s.offset)
	n, err := r.count()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		if err := readRefType(r); err != nil {
			return err
		}
		if err := readLimits(r); err != nil {
			return err
		}
	}
	return trailing(r)
}

// capTables is checkTables writing the table section again with every
// table's maximum at most limit entries: a table without a maximum (Go's
// wasip1 modules declare none) or with a larger one gets limit, so that
// table.grow past it returns -1 as the spec has it for a maximum (§4.4.6)
// instead of making the runtime allocate without bound; a table whose
// minimum is above limit is refused, and so is a module with more than
// MaxTables tables (a runtime allocates every table's minimum when it
// instantiates the module: a hundred tables of 2^18 entries, an 840-byte
// module, took 210 MB).
func capTables(s section, limit uint32) ([]byte, error) {
	r := newReader(s.payload, s.offset)
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	if n > MaxTables {
		return nil, limitf("declares %d tables, more than the limit of %d", n, MaxTables)
	}
	out := appendU32(make([]byte, 0, len(s.payload)+5*int(min(n, 1<<16))), n)
	for i := uint32(0); i < n; i++ {
		c, err := r.byte()
		if err != nil {
			return nil, err
		}
		if c != 0x70 && c != 0x6f {
			r.off--
			return nil, r.errorf(ErrUnsupported, "reference type %#02x", c)
		}
		flag, err := r.byte()
		if err != nil {
			return nil, err
		}
		if flag > 1 {
			r.off--
			return nil, r.errorf(ErrUnsupported, "table limits flag %#02x", flag)
		}
		lo, err := r.u32()
		if err != nil {
			return nil, err
		}
		hi := uint32(math.MaxUint32)
		if flag == 1 {
			if hi, err = r.u32(); err != nil {
				return nil, err
			}
		}
		if lo > limit {
			return nil, r.errorf(ErrLimit, "table %d has %d entries, more than the limit of %d", i, lo, limit)
		}
		out = appendU32(appendU32(append(out, c, 0x01), lo), min(hi, limit))
	}
	if err := trailing(r); err != nil {
		return nil, err
	}
	return out, nil
}

// checkElements reads the element section (§5.5.12 "Element Section"),
// whose segments come in eight encodings selected by a flags field: bit 0
// passive or declarative, bit 1 explicit table index (active) or
// declarative (passive), bit 2 expressions instead of function indices.
// It records every function index in fixes.
func checkElements(s section, b bounds, fixes *patches) error {
	r := newReader(s.payload, s.offset)
	n, err := r.count()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		flags, err := r.u32()
		if err != nil {
			return err
		}
		if flags > 7 {
			return r.errorf(ErrMalformed, "element segment flags %d", flags)
		}
		active, explicit, exprs := flags&1 == 0, flags&2 != 0, flags&4 != 0
		if active && explicit {
			if _, err := r.u32(); err != nil { // tableidx
				return err
			}
		}
		if active {
			if err := readConstExpr(r, b, fixes); err != nil { // offset
				return err
			}
		}
		if !active || explicit { // elemkind (0x00) or reftype
			if exprs {
				err = readRefType(r)
			} else if c, e := r.byte(); e != nil {
				err = e
			} else if c != 0 {
				err = r.errorf(ErrMalformed, "element kind %#02x", c)
			}
			if err != nil {
				return err
			}
		}
		items, err := r.count()
		if err != nil {
			return err
		}
		for ; items > 0; items-- {
			if exprs {
				err = readConstExpr(r, b, fixes)
			} else {
				_, err = readFuncIndex(r, b, fixes)
			}
			if err != nil {
				return err
			}
		}
	}
	return trailing(r)
}

// checkData reads the data section (§5.5.14 "Data Section"): segments 0
// (active, memory 0), 1 (passive) and 2 (active, explicit memory), each
// ending in vec(byte).
func checkData(s section, b bounds) error {
	r := newReader(s.payload, s.offset)
	n, err := r.count()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		flags, err := r.u32()
		if err != nil {
			return err
		}
		switch flags {
		case 2:
			if _, err := r.u32(); err != nil { // memidx
				return err
			}
			fallthrough
		case 0:
			if err := readConstExpr(r, b, nil); err != nil {
				return err
			}
		case 1:
		default:
			return r.errorf(ErrMalformed, "data segment flags %d", flags)
		}
		if _, err := r.vec(); err != nil { // init bytes
			return err
		}
	}
	return trailing(r)
}
