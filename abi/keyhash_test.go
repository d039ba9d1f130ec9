package abi

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
)

// Vectors computed with Java's String/Integer/Long/Double/Boolean.hashCode
// and Tuple2.hashCode (flink-semantics.md §1).
func TestKeyHashJavaVectors(t *testing.T) {
	str := func(s string) []byte { return AppendStr(nil, s) }
	i := func(v int64) []byte { return AppendInt(nil, v) }
	tests := []struct {
		name string
		key  []byte
		want int32
	}{
		{"hello", str("hello"), 99162322},
		{"empty string", str(""), 0},
		{"a", str("a"), 97},
		{"non-ascii BMP é", str("é"), 233},
		{"surrogate pair 😀", str("😀"), 31*0xD83D + 0xDE00},
		{"int 0", i(0), 0},
		{"int 42", i(42), 42},
		{"int -1 (Integer)", i(-1), -1},
		{"int32 max", i(math.MaxInt32), math.MaxInt32},
		{"int32 min", i(math.MinInt32), math.MinInt32},
		{"long 2^32", i(1 << 32), 1},
		{"long -2^32-1", i(-(1 << 32) - 1), 1},
		{"long min", i(math.MinInt64), math.MinInt32},
		{"double 1.0", AppendFloat(nil, 1.0), 1072693248},
		{"double -0.0", AppendFloat(nil, math.Copysign(0, -1)), math.MinInt32},
		{"double NaN", AppendFloat(nil, math.NaN()), 2146959360},
		{"true", AppendBool(nil, true), 1231},
		{"false", AppendBool(nil, false), 1237},
		{"tuple (a, 1)", append(AppendArrayHeader(nil, 2), append(str("a"), i(1)...)...), 31*97 + 1},
		{"tuple (hello, hello)", append(AppendArrayHeader(nil, 2), append(str("hello"), str("hello")...)...), -1121772992}, // 32*99162322 wrapped to int32,
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := KeyHash(tc.key)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("KeyHash = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestKeyHashRefusesNilAndMaps(t *testing.T) {
	if _, err := KeyHash(AppendNil(nil)); !errors.Is(err, ErrNilKey) {
		t.Fatalf("nil key: %v, want ErrNilKey", err)
	}
	if _, err := KeyHash(nil); !errors.Is(err, ErrNilKey) {
		t.Fatalf("empty key: %v, want ErrNilKey", err)
	}
	if _, err := KeyHash(AppendMapHeader(nil, 0)); !errors.Is(err, ErrType) ||
		!strings.Contains(err.Error(), "a key must be a string, a number, a boolean or an array of them, not a map") {
		t.Fatalf("map key: %v, want ErrType saying what a key may be", err)
	}
	// each refusal says why in the user's terms, with no byte offset
	for _, c := range []struct {
		key  []byte
		is   error
		want string
	}{
		{[]byte{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ErrRange, "an unsigned integer above 9223372036854775807 is not a key (a Flink key is a Java value: a long holds no more)"},
		{AppendArrayHeader(nil, 0), ErrType, "an empty array is not a key (a composite key has at least one field)"},
		{AppendInt(AppendArrayHeader(AppendArrayHeader(nil, 1), 1), 1), ErrType, "an array inside an array is not a key (a composite key's fields are strings, numbers or booleans)"},
	} {
		if _, err := KeyHash(c.key); !errors.Is(err, c.is) || err.Error() != c.want {
			t.Errorf("% x: %v, want %q", c.key, err, c.want)
		}
	}
}

// TestStringHashMatchesUTF16 checks StringHash, which takes ASCII four bytes
// at a time, against Java's definition over UTF-16 code units, for strings
// mixing ASCII with multi-byte, supplementary and invalid UTF-8 at every
// position. The reference decodes with JavaString (held to Java itself by
// TestJavaStringVectors), then hashes the plain way.
func TestStringHashMatchesUTF16(t *testing.T) {
	java := func(s []byte) int32 {
		var h int32
		for _, r := range string(JavaString(nil, s)) {
			for _, u := range utf16.Encode([]rune{r}) {
				h = 31*h + int32(u)
			}
		}
		return h
	}
	pieces := []string{"a", "acct-", "0123456789", "é", "€", "😀", "\xff", "\xe2\x82", "~\x7f"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		var s []byte
		for n := rng.IntN(8); n > 0; n-- {
			s = append(s, pieces[rng.IntN(len(pieces))]...)
		}
		want := java(s)
		// StringHash may read up to the capacity (never counting what
		// lies past the length): the same string, cut from buffers
		// followed by ASCII, by non-ASCII, and by nothing.
		for _, after := range []string{"", "zzzzzzzz", "\xff\xfe\x80\x81\x82\x83\x84\x85"} {
			buf := append(append([]byte(nil), s...), after...)
			if got := StringHash(buf[:len(s)]); got != want {
				t.Fatalf("StringHash(%q) followed by %q = %d, want %d", s, after, got, want)
			}
		}
		if got := StringHash(s[:len(s):len(s)]); got != want {
			t.Fatalf("StringHash(%q) = %d, want %d", s, got, want)
		}
	}
}
