package fuel

import "github.com/sluicehq/sluice/internal/wasmbin"

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
		bodyStart := r.Off
		for i := uint32(0); i < n; i++ {
			at := r.Pos()
			name, err := r.Name()
			if err != nil {
				return nil, err
			}
			if string(name) == ExportName {
				r.Off = at - r.Base
				return nil, r.Errorf(ErrExportExists, "the module already exports %q", ExportName)
			}
			kind, err := r.Byte()
			if err != nil {
				return nil, err
			}
			var x uint32
			if kind == 0x00 {
				x, err = readFuncIndex(r, b, fixes)
			} else {
				x, err = r.U32()
			}
			if err != nil {
				return nil, err
			}
			switch {
			case kind == 0x03 && x >= counter:
				return nil, r.Errorf(ErrExportExists, "export %q names global %d, past the module's %d globals", name, x, counter)
			case kind == 0x04:
				return nil, r.Errorf(ErrUnsupported, "tag export (exception handling)")
			case kind > 0x04:
				return nil, r.Errorf(ErrMalformed, "export kind %#02x", kind)
			}
		}
		if err := r.Trailing(); err != nil {
			return nil, err
		}
		out = wasmbin.AppendU32(make([]byte, 0, len(s.Payload)+len(ExportName)+8), n+1)
		out = fixes.apply(out, s.Payload, bodyStart, sh)
	} else {
		out = wasmbin.AppendU32(make([]byte, 0, len(ExportName)+8), 1)
	}
	out, _ = wasmbin.AppendVec(out, []byte(ExportName))
	out = append(out, 0x03) // exportdesc: global
	return wasmbin.AppendU32(out, counter), nil
}
