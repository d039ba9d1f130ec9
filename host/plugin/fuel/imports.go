package fuel

// countImports walks the import section (§5.5.5 "Import Section") and
// returns how many globals and functions it imports: they come first in
// their index spaces, before the module's own (§5.5.1 "Indices"). A
// module that imports from RefuelModule is refused: that import is the
// rewrite's own, and guest code calling it could forge counter values.
func countImports(s section, types uint32) (globals, funcs uint32, err error) {
	r := newReader(s.payload, s.offset)
	n, err := r.count()
	if err != nil {
		return 0, 0, err
	}
	for ; n > 0; n-- {
		at := r.off
		module, err := r.name()
		if err != nil {
			return 0, 0, err
		}
		if string(module) == RefuelModule {
			r.off = at
			return 0, 0, r.errorf(ErrExportExists, "the module imports from %q, the metering's own import module", RefuelModule)
		}
		if _, err := r.name(); err != nil { // name
			return 0, 0, err
		}
		desc, err := r.byte()
		if err != nil {
			return 0, 0, err
		}
		switch desc {
		case 0x00: // func typeidx
			_, err = readIndex(r, types, ErrMalformed, "type")
			funcs++
		case 0x01: // table: reftype limits
			if err = readRefType(r); err == nil {
				err = readLimits(r)
			}
		case 0x02: // memory: limits
			err = readLimits(r)
		case 0x03: // global: valtype mut
			err = readGlobalType(r)
			globals++
		case 0x04:
			r.off--
			err = r.errorf(ErrUnsupported, "tag import (exception handling)")
		default:
			r.off--
			err = r.errorf(ErrMalformed, "import kind %#02x", desc)
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return globals, funcs, trailing(r)
}

// readRefType decodes a reference type (§5.3.3): funcref or externref.
func readRefType(r *reader) error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	if c != 0x70 && c != 0x6f {
		r.off--
		return r.errorf(ErrUnsupported, "reference type %#02x", c)
	}
	return nil
}

// readLimits decodes limits (§5.3.7): flag 0 (min) or 1 (min max); the
// threads proposal adds 2 and 3 for shared memories. memory64's flags are
// refused.
func readLimits(r *reader) error {
	flag, err := r.byte()
	if err != nil {
		return err
	}
	if flag > 3 {
		r.off--
		return r.errorf(ErrUnsupported, "limits flag %#02x", flag)
	}
	if _, err := r.u32(); err != nil {
		return err
	}
	if flag&1 != 0 {
		_, err = r.u32()
	}
	return err
}

// readGlobalType decodes valtype mut (§5.3.10).
func readGlobalType(r *reader) error {
	c, err := r.byte()
	if err != nil {
		return err
	}
	if !isValType(c) {
		r.off--
		return r.errorf(ErrUnsupported, "value type %#02x", c)
	}
	if c, err = r.byte(); err != nil {
		return err
	}
	if c > 1 {
		r.off--
		return r.errorf(ErrMalformed, "global mutability %#02x", c)
	}
	return nil
}
