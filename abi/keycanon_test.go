package abi

import (
	"encoding/binary"
	"math"
	"testing"
)

// keyEncodings returns v written every way msgpack allows.
func intEncodings(v int64) [][]byte {
	var out [][]byte
	be := binary.BigEndian
	if v >= 0 && v <= 0x7f {
		out = append(out, []byte{byte(v)})
	}
	if v >= -32 && v < 0 {
		out = append(out, []byte{byte(int8(v))})
	}
	if v >= 0 && v <= math.MaxUint8 {
		out = append(out, []byte{0xcc, byte(v)})
	}
	if v >= 0 && v <= math.MaxUint16 {
		out = append(out, be.AppendUint16([]byte{0xcd}, uint16(v)))
	}
	if v >= 0 && v <= math.MaxUint32 {
		out = append(out, be.AppendUint32([]byte{0xce}, uint32(v)))
	}
	if v >= 0 {
		out = append(out, be.AppendUint64([]byte{0xcf}, uint64(v)))
	}
	if v >= math.MinInt8 && v <= math.MaxInt8 {
		out = append(out, []byte{0xd0, byte(int8(v))})
	}
	if v >= math.MinInt16 && v <= math.MaxInt16 {
		out = append(out, be.AppendUint16([]byte{0xd1}, uint16(int16(v))))
	}
	if v >= math.MinInt32 && v <= math.MaxInt32 {
		out = append(out, be.AppendUint32([]byte{0xd2}, uint32(int32(v))))
	}
	return append(out, be.AppendUint64([]byte{0xd3}, uint64(v)))
}

func strEncodings(s string) [][]byte {
	be := binary.BigEndian
	var out [][]byte
	if len(s) < 32 {
		out = append(out, append([]byte{0xa0 | byte(len(s))}, s...))
	}
	out = append(out, append([]byte{0xd9, byte(len(s))}, s...))
	out = append(out, append(be.AppendUint16([]byte{0xda}, uint16(len(s))), s...))
	return append(out, append(be.AppendUint32([]byte{0xdb}, uint32(len(s))), s...))
}

// TestCanonicalKeyOneEncodingPerJavaKey: every encoding of one Java key
// gives the same bytes, with the same KeyHash; keys Java tells apart stay
// apart.
func TestCanonicalKeyOneEncodingPerJavaKey(t *testing.T) {
	nan64 := func(bits uint64) []byte { return binary.BigEndian.AppendUint64([]byte{0xcb}, bits) }
	nan32 := func(bits uint32) []byte { return binary.BigEndian.AppendUint32([]byte{0xca}, bits) }
	groups := [][][]byte{
		strEncodings("acct-42"),
		strEncodings("é€😀"),
		// Java decodes both to U+FFFD 'A' (E2 82 is one malformed sequence)
		append(strEncodings("\xe2\x82A"), strEncodings("\ufffdA")...),
		append(strEncodings("\xed\xa0\x80"), strEncodings("\xff")...),
		{nan64(0x7ff8000000000000), nan64(0x7ff0000000000001), nan64(0xfff8000000000000)},
		{nan32(0x7fc00000), nan32(0x7f800001), nan32(0xffc00000)},
		{AppendFloat(nil, 1.5)},
		{nan32(math.Float32bits(1.5))},
		{AppendFloat(nil, 0)},
		{AppendFloat(nil, math.Copysign(0, -1))},
		{{0xc3}}, {{0xc2}},
	}
	for _, v := range []int64{0, 5, -1, -32, -33, 127, 128, 255, 256, -128, -129, 65535, 65536, -32768, -32769,
		math.MaxInt32, math.MaxInt32 + 1, math.MinInt32, math.MinInt32 - 1, 1 << 40, math.MaxInt64, math.MinInt64} {
		groups = append(groups, intEncodings(v))
	}
	// a composite key: each field in any of its encodings
	var tuples [][]byte
	for _, a := range intEncodings(300) {
		for _, s := range strEncodings("k") {
			tuples = append(tuples, append(append([]byte{0x92}, a...), s...),
				append(append(binary.BigEndian.AppendUint16([]byte{0xdc}, 2), a...), s...))
		}
	}
	groups = append(groups, tuples)

	seen := map[string]int{}
	for g, enc := range groups {
		want, _ := CanonicalKey(nil, enc[0])
		wantHash, err := KeyHash(enc[0])
		if err != nil {
			t.Fatalf("group %d: KeyHash(%x): %v", g, enc[0], err)
		}
		for _, e := range enc {
			got, _ := CanonicalKey(make([]byte, 0, 4), e)
			if string(got) != string(want) {
				t.Fatalf("group %d: CanonicalKey(%x) = %x, CanonicalKey(%x) = %x: one Java key, two encodings", g, e, got, enc[0], want)
			}
			if h, err := KeyHash(got); err != nil || h != wantHash {
				t.Fatalf("group %d: KeyHash(%x) = %d, %v; KeyHash(%x) = %d", g, got, h, err, enc[0], wantHash)
			}
			if again, _ := CanonicalKey(nil, got); &again[0] != &got[0] {
				t.Fatalf("group %d: CanonicalKey(%x) copied a canonical key", g, got)
			}
		}
		if other, ok := seen[string(want)]; ok {
			t.Fatalf("groups %d and %d (%x, %x) share the key %x: Java tells them apart", other, g, groups[other][0], enc[0], want)
		}
		seen[string(want)] = g
	}
}

// TestCanonicalKeyLeavesTheRestAlone: the keys writers produce come back
// as they are, no copy; what is no key comes back unchanged for KeyHash to
// refuse.
func TestCanonicalKeyLeavesTheRestAlone(t *testing.T) {
	for _, k := range [][]byte{AppendStr(nil, "acct-0042"), AppendStr(nil, "0123456789abcdef0123456789abcde"), {0x05}, {0xff}, {0xc3}} {
		if got, _ := CanonicalKey(nil, k); &got[0] != &k[0] {
			t.Errorf("CanonicalKey(%x) copied it", k)
		}
	}
	for _, k := range [][]byte{AppendMapHeader(nil, 0), {0xc4, 1, 0}, {0x91, 0x91, 0x01}, {0xd9, 5, 'a'}, {0xc0}, nil, binary.BigEndian.AppendUint64([]byte{0xcf}, math.MaxUint64)} {
		if got, _ := CanonicalKey(nil, k); string(got) != string(k) {
			t.Errorf("CanonicalKey(%x) = %x, want it unchanged", k, got)
		}
	}
}

// TestCanonicalKeyReusesItsBuffer: keys that need a look, canonical or
// not, allocate nothing once the buffer has grown.
func TestCanonicalKeyReusesItsBuffer(t *testing.T) {
	keys := [][]byte{AppendStr(nil, "é€😀-a-long-enough-non-ascii-key-of-many-bytes"), {0xd3, 0, 0, 0, 0, 0, 0, 0, 5}, AppendInt(nil, 1<<40)}
	var buf []byte
	allocs := testing.AllocsPerRun(100, func() {
		for _, k := range keys {
			_, buf = CanonicalKey(buf, k)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations a round, want 0", allocs)
	}
}

func BenchmarkCanonicalKey(b *testing.B) {
	k := AppendStr(nil, "acct-0042")
	var buf []byte
	for i := 0; i < b.N; i++ {
		_, buf = CanonicalKey(buf, k)
	}
}
