// Package mpvalue converts between msgpack and plain Go values (nil, bool,
// int64, float64, string, []byte, []any, map[string]any) without
// reflection. The SDK uses it for operator config (not the per-record
// path) and the test harness for records written as Go maps.
package mpvalue

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/sluicehq/sluice/abi"
)

// Decode returns the Go value of the single msgpack value b. Integers
// become int64 (uint64 for an unsigned one past int64's range), floats float64, strings string, binary []byte (a copy),
// arrays []any and maps map[string]any (keys must be strings).
func Decode(b []byte) (any, error) {
	v, end, err := decodeAt(b, 0, 0)
	if err != nil {
		return nil, err
	}
	if end != len(b) {
		return nil, errors.New("msgpack: " + strconv.Itoa(len(b)-end) + " bytes after the value")
	}
	return v, nil
}

// DecodeMap is Decode for a value that must be a map; an empty b is an
// empty map.
func DecodeMap(b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return map[string]any{}, nil
	}
	if abi.TypeOf(b) != abi.TypeMap {
		return nil, errors.New("msgpack: want a map, got " + abi.TypeOf(b).String())
	}
	v, err := Decode(b)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

func decodeAt(b []byte, off, depth int) (any, int, error) {
	if depth > abi.MaxDepth {
		return nil, 0, abi.ErrTooDeep
	}
	end, err := abi.Skip(b, off)
	if err != nil {
		return nil, 0, err
	}
	raw := b[off:end]
	switch t := abi.TypeOf(raw); t {
	case abi.TypeNil:
		return nil, end, nil
	case abi.TypeBool:
		v, err := abi.ReadBool(raw)
		return v, end, err
	case abi.TypeInt:
		if raw[0] == 0xcf && raw[1] >= 0x80 { // a uint64 past int64's range
			return binary.BigEndian.Uint64(raw[1:]), end, nil
		}
		v, err := abi.ReadInt(raw)
		return v, end, err
	case abi.TypeFloat:
		v, err := abi.ReadFloat(raw)
		return v, end, err
	case abi.TypeStr:
		s, err := abi.ReadStr(raw)
		return string(s), end, err
	case abi.TypeBin:
		_, body, err := binBody(raw)
		return append([]byte{}, raw[body:]...), end, err
	case abi.TypeArray, abi.TypeMap:
		return decodeContainer(raw, t, end, off, depth)
	default:
		return nil, 0, errors.New("msgpack: cannot decode a value of type " + t.String())
	}
}

func decodeContainer(raw []byte, t abi.Type, end, off, depth int) (any, int, error) {
	n, p, err := abi.Len(raw)
	if err != nil {
		return nil, 0, err
	}
	if t == abi.TypeArray {
		a := make([]any, 0, n)
		for i := 0; i < n; i++ {
			v, e, err := decodeAt(raw, p, depth+1)
			if err != nil {
				return nil, 0, err
			}
			a, p = append(a, v), e
		}
		return a, end, nil
	}
	m := make(map[string]any, n)
	for i := 0; i < n; i++ {
		kEnd, err := abi.Skip(raw, p)
		if err != nil {
			return nil, 0, err
		}
		k, err := abi.ReadStr(raw[p:kEnd])
		if err != nil {
			return nil, 0, errors.New("msgpack: map key at byte " + strconv.Itoa(off+p) + " is not a string")
		}
		v, e, err := decodeAt(raw, kEnd, depth+1)
		if err != nil {
			return nil, 0, err
		}
		m[string(k)], p = v, e
	}
	return m, end, nil
}

// binBody returns the payload length and offset of a bin value.
func binBody(b []byte) (int, int, error) {
	switch b[0] {
	case 0xc4:
		return int(b[1]), 2, nil
	case 0xc5:
		return int(b[1])<<8 | int(b[2]), 3, nil
	case 0xc6:
		return int(b[1])<<24 | int(b[2])<<16 | int(b[3])<<8 | int(b[4]), 5, nil
	}
	return 0, 0, abi.ErrType
}
