package fuel

// appendCounterExport rewrites the export section (§5.5.10 "Export
// Section") with ExportName appended for the counter at index counter. It
// refuses a module that already exports ExportName or exports a global
// index at or past counter, and renumbers exported functions under sh. A
// nil section yields one holding only the counter's export.
func appendCounterExport(s *section, counter uint32, b bounds, sh funcShift) ([]byte, error) {
	fixes := sh.patches()
	r, n, err := vecHead(s, "exports")
	if err != nil {
		return nil, err
	}
	var out []byte
	if s != nil {
		bodyStart := r.off
		for i := uint32(0); i < n; i++ {
			at := r.pos()
			name, err := r.name()
			if err != nil {
				return nil, err
			}
			if string(name) == ExportName {
				r.off = at - r.base
				return nil, r.errorf(ErrExportExists, "the module already exports %q", ExportName)
			}
			kind, err := r.byte()
			if err != nil {
				return nil, err
			}
			var x uint32
			if kind == 0x00 {
				x, err = readFuncIndex(r, b, fixes)
			} else {
				x, err = r.u32()
			}
			if err != nil {
				return nil, err
			}
			switch {
			case kind == 0x03 && x >= counter:
				return nil, r.errorf(ErrExportExists, "export %q names global %d, past the module's %d globals", name, x, counter)
			case kind == 0x04:
				return nil, r.errorf(ErrUnsupported, "tag export (exception handling)")
			case kind > 0x04:
				return nil, r.errorf(ErrMalformed, "export kind %#02x", kind)
			}
		}
		if err := trailing(r); err != nil {
			return nil, err
		}
		out = appendU32(make([]byte, 0, len(s.payload)+len(ExportName)+8), n+1)
		out = fixes.apply(out, s.payload, bodyStart, sh)
	} else {
		out = appendU32(make([]byte, 0, len(ExportName)+8), 1)
	}
	out, _ = appendVec(out, []byte(ExportName))
	out = append(out, 0x03) // exportdesc: global
	return appendU32(out, counter), nil
}
