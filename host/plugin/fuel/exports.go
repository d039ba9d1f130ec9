package fuel

import "math"

// appendCounterExport rewrites the export section (§5.5.10 "Export
// Section") with ExportName appended for the counter at index counter. It
// refuses a module that already exports ExportName or exports a global
// index at or past counter. A nil section yields one holding only the
// counter's export.
func appendCounterExport(s *section, counter uint32) ([]byte, error) {
	var n uint32
	var rest []byte
	if s != nil {
		r := newReader(s.payload, s.offset)
		var err error
		if n, err = r.count(); err != nil {
			return nil, err
		}
		if n == math.MaxUint32 {
			return nil, r.errorf(ErrMalformed, "too many exports")
		}
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
			x, err := r.u32()
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
		rest = s.payload[bodyStart:]
	}
	out := appendU32(make([]byte, 0, len(rest)+len(ExportName)+8), n+1)
	out = append(out, rest...)
	out, _ = appendVec(out, []byte(ExportName))
	out = append(out, 0x03) // exportdesc: global
	return appendU32(out, counter), nil
}
