package wasmbin

import (
	"fmt"
	"math"
)

// AppendU32 appends v as unsigned LEB128.
func AppendU32(dst []byte, v uint32) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// AppendS64 appends v as signed LEB128.
func AppendS64(dst []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(dst, c)
		}
		dst = append(dst, c|0x80)
	}
}

// AppendVec appends a length-prefixed byte vector; the length must fit a u32.
func AppendVec(dst, payload []byte) ([]byte, error) {
	if uint64(len(payload)) > math.MaxUint32 {
		return nil, fmt.Errorf("%w: section or body of %d bytes exceeds 4 GiB", ErrMalformed, len(payload))
	}
	dst = AppendU32(dst, uint32(len(payload)))
	return append(dst, payload...), nil
}

// AppendSection appends one section: id, u32 size, payload.
func AppendSection(dst []byte, id byte, payload []byte) ([]byte, error) {
	return AppendVec(append(dst, id), payload)
}
