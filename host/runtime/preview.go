package runtime

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/jsonout"
)

// previewLimit caps how much of a record an error message or a hot-key
// warning shows.
const previewLimit = 160

// preview renders a msgpack value as compact JSON for messages (errors,
// hot keys), cut at previewLimit bytes. It is for people, not for data:
// bytes it cannot read show as "<malformed msgpack>".
func preview(v []byte) string { return renderJSON(v, previewLimit) }

// Preview is preview for the host's other packages: a record value (or
// any msgpack value) as compact JSON for an error message, cut at 160
// bytes.
func Preview(v []byte) string { return preview(v) }

// renderJSON renders v as compact JSON cut at limit bytes (0: no limit).
func renderJSON(v []byte, limit int) string {
	out, _, ok := appendPreview(nil, v, 0, 0, limit)
	if !ok {
		out = append(out, "<malformed msgpack>"...)
	}
	if limit > 0 && len(out) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = append(out[:cut], "..."...)
	}
	return string(out)
}

func appendPreview(out, b []byte, off, depth, limit int) ([]byte, int, bool) {
	if (limit > 0 && len(out) > limit) || depth > abi.MaxDepth {
		end, err := abi.Skip(b, off)
		return out, end, err == nil
	}
	end, err := abi.Skip(b, off)
	if err != nil {
		return out, 0, false
	}
	v := b[off:end]
	switch abi.TypeOf(v) {
	case abi.TypeNil:
		out = append(out, "null"...)
	case abi.TypeBool:
		out = strconv.AppendBool(out, v[0] == 0xc3)
	case abi.TypeInt:
		if v[0] == 0xcf { // a uint64 may pass int64's range
			out = strconv.AppendUint(out, binary.BigEndian.Uint64(v[1:]), 10)
			break
		}
		i, err := abi.ReadInt(v)
		if err != nil {
			return out, 0, false
		}
		out = strconv.AppendInt(out, i, 10)
	case abi.TypeFloat: // as the print sink writes it: 100.0 stays a float
		f, _ := abi.ReadFloat(v)
		bits := 64
		if v[0] == 0xca {
			bits = 32
		}
		out = codec.AppendFloat(out, f, bits)
	case abi.TypeStr:
		s, _ := abi.ReadStr(v)
		q, _ := jsonout.Marshal(string(s)) // messages only: allocation is fine
		out = append(out, q...)
	case abi.TypeArray, abi.TypeMap:
		n, p, _ := abi.Len(v)
		isMap := abi.TypeOf(v) == abi.TypeMap
		open, close := byte('['), byte(']')
		if isMap {
			open, close = '{', '}'
		}
		out = append(out, open)
		var ok bool
		for i := 0; i < n; i++ {
			if i > 0 {
				out = append(out, ',')
			}
			if out, p, ok = appendPreview(out, v, p, depth+1, limit); !ok {
				return out, 0, false
			}
			if isMap {
				out = append(out, ':')
				if out, p, ok = appendPreview(out, v, p, depth+1, limit); !ok {
					return out, 0, false
				}
			}
		}
		out = append(out, close)
	default:
		out = append(out, '"', '<')
		out = append(out, abi.TypeOf(v).String()...)
		out = append(out, '>', '"')
	}
	return out, end, true
}
