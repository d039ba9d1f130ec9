package mpvalue

import (
	"encoding/binary"
	"errors"
	"sort"

	"github.com/sluicehq/sluice/abi"
)

// Encode appends the msgpack encoding of v to dst. It accepts nil, bool,
// every int and uint width, float32/64, string, []byte, []any, []string,
// map[string]any (written with sorted keys, so the output is
// deterministic) and Raw.
func Encode(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return abi.AppendNil(dst), nil
	case bool:
		return abi.AppendBool(dst, x), nil
	case int:
		return abi.AppendInt(dst, int64(x)), nil
	case int8:
		return abi.AppendInt(dst, int64(x)), nil
	case int16:
		return abi.AppendInt(dst, int64(x)), nil
	case int32:
		return abi.AppendInt(dst, int64(x)), nil
	case int64:
		return abi.AppendInt(dst, x), nil
	case uint8:
		return abi.AppendInt(dst, int64(x)), nil
	case uint16:
		return abi.AppendInt(dst, int64(x)), nil
	case uint32:
		return abi.AppendInt(dst, int64(x)), nil
	case uint:
		return encodeUint(dst, uint64(x))
	case uint64:
		return encodeUint(dst, x)
	case float32:
		return abi.AppendFloat(dst, float64(x)), nil
	case float64:
		return abi.AppendFloat(dst, x), nil
	case string:
		return abi.AppendStr(dst, x), nil
	case []byte:
		return abi.AppendBin(dst, x), nil
	case Raw:
		if end, err := abi.Skip(x, 0); err != nil || end != len(x) {
			return nil, errors.New("mpvalue: Raw is not one msgpack value")
		}
		return append(dst, x...), nil
	case []string:
		dst = abi.AppendArrayHeader(dst, len(x))
		for _, s := range x {
			dst = abi.AppendStr(dst, s)
		}
		return dst, nil
	case []any:
		dst = abi.AppendArrayHeader(dst, len(x))
		var err error
		for _, e := range x {
			if dst, err = Encode(dst, e); err != nil {
				return nil, err
			}
		}
		return dst, nil
	case map[string]any:
		return encodeMap(dst, x)
	}
	return nil, errors.New("mpvalue: cannot encode a value of this Go type")
}

// Raw is a pre-encoded msgpack value that Encode copies as it is.
type Raw []byte

func encodeUint(dst []byte, u uint64) ([]byte, error) {
	if u > 1<<63-1 { // msgpack's uint64, as Decode reads it back
		return binary.BigEndian.AppendUint64(append(dst, 0xcf), u), nil
	}
	return abi.AppendInt(dst, int64(u)), nil
}

func encodeMap(dst []byte, m map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dst = abi.AppendMapHeader(dst, len(m))
	var err error
	for _, k := range keys {
		dst = abi.AppendStr(dst, k)
		if dst, err = Encode(dst, m[k]); err != nil {
			return nil, err
		}
	}
	return dst, nil
}
