package wasmbin

// Value types (§5.3.1–§5.3.4).
const (
	I32       byte = 0x7f
	I64       byte = 0x7e
	F32       byte = 0x7d
	F64       byte = 0x7c
	V128      byte = 0x7b
	Funcref   byte = 0x70
	Externref byte = 0x6f
)

// External kinds of imports and exports (§5.5.5, §5.5.10).
const (
	KindFunc   byte = 0
	KindTable  byte = 1
	KindMemory byte = 2
	KindGlobal byte = 3
	KindTag    byte = 4 // exception handling proposal
)

// IsValType reports whether c encodes a value type wazero 1.12 supports:
// i32 i64 f32 f64 v128 funcref externref.
func IsValType(c byte) bool {
	return (c >= V128 && c <= I32) || c == Funcref || c == Externref
}

// ValTypes decodes vec(valtype) (§5.3.6 result types, the immediate of
// select t* in §5.4.3) and returns it (one byte a type, aliasing the
// reader's bytes).
func (r *Reader) ValTypes() ([]byte, error) {
	n, err := r.Count()
	if err != nil {
		return nil, err
	}
	start := r.Off
	for i := uint32(0); i < n; i++ {
		c, _ := r.Byte() // Count checked there are n bytes
		if !IsValType(c) {
			r.Off--
			return nil, r.Errorf(ErrUnsupported, "value type %#02x", c)
		}
	}
	return r.B[start:r.Off], nil
}

// RefType decodes a reference type (§5.3.3): funcref or externref.
func (r *Reader) RefType() (byte, error) {
	c, err := r.Byte()
	if err != nil {
		return 0, err
	}
	if c != Funcref && c != Externref {
		r.Off--
		return 0, r.Errorf(ErrUnsupported, "reference type %#02x", c)
	}
	return c, nil
}

// Limits are a table's or memory's size limits (§5.3.7, with the threads
// proposal's shared flag and memory64's 64-bit flag).
type Limits struct {
	Flags    byte // bit 0: has a maximum; bit 1: shared; bit 2: 64-bit
	Min, Max uint64
	At       int // the module offset of the flags, for a consumer's errors
}

func (l Limits) HasMax() bool { return l.Flags&1 != 0 }
func (l Limits) Shared() bool { return l.Flags&2 != 0 }
func (l Limits) Is64() bool   { return l.Flags&4 != 0 }

// Limits decodes limits: flags 0 to 7, u32 bounds, u64 ones for 64-bit.
func (r *Reader) Limits() (Limits, error) {
	l := Limits{At: r.Pos()}
	flags, err := r.Byte()
	if err != nil {
		return l, err
	}
	if flags > 7 {
		r.Off--
		return l, r.Errorf(ErrMalformed, "limits flags %#02x", flags)
	}
	l.Flags = flags
	bits := uint(32)
	if l.Is64() {
		bits = 64
	}
	if l.Min, err = r.ULEB(bits); err != nil {
		return l, err
	}
	if l.HasMax() {
		l.Max, err = r.ULEB(bits)
	}
	return l, err
}

// GlobalType is a global's type (§5.3.10).
type GlobalType struct {
	Type    byte
	Mutable bool
}

// GlobalType decodes valtype mut.
func (r *Reader) GlobalType() (GlobalType, error) {
	c, err := r.Byte()
	if err != nil {
		return GlobalType{}, err
	}
	if !IsValType(c) {
		r.Off--
		return GlobalType{}, r.Errorf(ErrUnsupported, "value type %#02x", c)
	}
	m, err := r.Byte()
	if err != nil {
		return GlobalType{}, err
	}
	if m > 1 {
		r.Off--
		return GlobalType{}, r.Errorf(ErrMalformed, "global mutability %#02x", m)
	}
	return GlobalType{c, m == 1}, nil
}
