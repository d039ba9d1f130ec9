package fuel

import (
	"github.com/sluicehq/sluice/internal/wasmbin"
)

// The memory, table, element and data sections pass through unchanged, but
// they are walked anyway: to refuse memory64 and a constant expression
// that reads the counter's index, and so that every vector count in the
// module is checked against the bytes that hold it before a runtime
// allocates from it (wasmbin.Reader.Count).

// checkElements reads the element section (§5.5.12 "Element Section"),
// whose segments come in eight encodings selected by a flags field: bit 0
// passive or declarative, bit 1 explicit table index (active) or
// declarative (passive), bit 2 expressions instead of function indices.
// It records every function index in fixes.
func checkElements(s section, b bounds, fixes *patches) error {
	r := wasmbin.NewReader(s.Payload, s.Offset)
	n, err := r.Count()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		flags, err := r.U32()
		if err != nil {
			return err
		}
		if flags > 7 {
			return r.Errorf(ErrMalformed, "element segment flags %d", flags)
		}
		active, explicit, exprs := flags&1 == 0, flags&2 != 0, flags&4 != 0
		if active && explicit {
			if _, err := r.U32(); err != nil { // tableidx
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
				_, err = r.RefType()
			} else if c, e := r.Byte(); e != nil {
				err = e
			} else if c != 0 {
				err = r.Errorf(ErrMalformed, "element kind %#02x", c)
			}
			if err != nil {
				return err
			}
		}
		items, err := r.Count()
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
	return r.Trailing()
}

// checkData reads the data section (§5.5.14 "Data Section"): segments 0
// (active, memory 0), 1 (passive) and 2 (active, explicit memory), each
// ending in vec(byte).
func checkData(s section, b bounds) error {
	r := wasmbin.NewReader(s.Payload, s.Offset)
	n, err := r.Count()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		flags, err := r.U32()
		if err != nil {
			return err
		}
		switch flags {
		case 2:
			if _, err := r.U32(); err != nil { // memidx
				return err
			}
			fallthrough
		case 0:
			if err := readConstExpr(r, b, nil); err != nil {
				return err
			}
		case 1:
		default:
			return r.Errorf(ErrMalformed, "data segment flags %d", flags)
		}
		if _, err := r.Vec(); err != nil { // init bytes
			return err
		}
	}
	return r.Trailing()
}
