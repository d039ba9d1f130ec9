package sdk

import "github.com/sluicehq/sluice/abi"

// Value is a view of one msgpack value inside a record, a key or keyed
// state: no copy is made. Like the record it comes from, it is valid only
// during the call that produced it.
//
// The typed getters never fail: they return the zero value when the value
// is missing or of another type. Check Type when the difference matters.
type Value struct{ raw []byte }

// Exists reports whether the value is present (a missing field is not).
func (v Value) Exists() bool { return len(v.raw) > 0 }

// Type is the msgpack type of the value (abi.TypeInvalid when missing).
func (v Value) Type() abi.Type { return abi.TypeOf(v.raw) }

// IsNil reports whether the value is msgpack nil.
func (v Value) IsNil() bool { return abi.IsNil(v.raw) }

// Raw returns the msgpack bytes of the value (nil when missing). Do not
// modify them.
func (v Value) Raw() []byte { return v.raw }

// Int returns an integer as is and a float truncated toward zero.
func (v Value) Int() int64 {
	if len(v.raw) > 0 && (v.raw[0] <= 0x7f || v.raw[0] >= 0xe0) {
		return int64(int8(v.raw[0])) // a fixint, positive or negative
	}
	switch abi.TypeOf(v.raw) {
	case abi.TypeInt:
		i, _ := abi.ReadInt(v.raw)
		return i
	case abi.TypeFloat:
		f, _ := abi.ReadFloat(v.raw)
		return int64(f)
	}
	return 0
}

// Float returns a float, or an integer converted to float64.
func (v Value) Float() float64 {
	f, _ := abi.ReadFloat(v.raw)
	return f
}

// Str returns a copy of a string value (it allocates; see StrBytes).
func (v Value) Str() string { return string(v.StrBytes()) }

// StrBytes returns the bytes of a string (or binary) value without
// copying. They alias the input: do not modify or keep them.
func (v Value) StrBytes() []byte {
	if abi.TypeOf(v.raw) == abi.TypeBin {
		n, body := binHeader(v.raw)
		return v.raw[body : body+n]
	}
	s, _ := abi.ReadStr(v.raw)
	return s
}

// Bool returns a boolean value.
func (v Value) Bool() bool {
	b, _ := abi.ReadBool(v.raw)
	return b
}

// Key returns the value as a Key, e.g. to return a field from a
// KeySelector without copying it.
func (v Value) Key() Key { return Key{v} }

// binHeader returns the payload length and offset of a validated bin value.
func binHeader(b []byte) (n, body int) {
	switch b[0] {
	case 0xc4:
		return int(b[1]), 2
	case 0xc5:
		return int(b[1])<<8 | int(b[2]), 3
	}
	return int(b[1])<<24 | int(b[2])<<16 | int(b[3])<<8 | int(b[4]), 5
}
