package fuel

// readTypes reads the type section (§5.5.4 "Type Section") and returns
// each type's parameter types (aliasing the section). Function types
// only: GC's recursive and sub types are refused up front.
func readTypes(s section) ([][]byte, error) {
	r := newReader(s.payload, s.offset)
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	params := make([][]byte, n)
	for i := range params {
		c, err := r.byte()
		if err != nil {
			return nil, err
		}
		if c != 0x60 {
			r.off--
			return nil, r.errorf(ErrUnsupported, "type form %#02x (only function types)", c)
		}
		k, err := readValTypes(r)
		if err != nil {
			return nil, err
		}
		if k > MaxParams {
			return nil, limitf("type %d has %d parameters, more than the limit of %d", i, k, MaxParams)
		}
		// value types are one byte each
		params[i] = r.b[r.off-int(k) : r.off]
		k, err = readValTypes(r) // results
		if err != nil {
			return nil, err
		}
		if k > MaxResults {
			return nil, limitf("type %d has %d results, more than the limit of %d", i, k, MaxResults)
		}
	}
	return params, trailing(r)
}

// readFunctions reads the function section (§5.5.6 "Function Section"):
// the type index of each function defined in the code section.
func readFunctions(s section, types uint32) ([]uint32, error) {
	r := newReader(s.payload, s.offset)
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	funcs := make([]uint32, n)
	for i := range funcs {
		if funcs[i], err = readIndex(r, types, ErrMalformed, "type"); err != nil {
			return nil, err
		}
	}
	return funcs, trailing(r)
}
