package mpvalue

import (
	"errors"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

func TestEncodeSortsMapKeys(t *testing.T) {
	b, err := Encode(nil, map[string]any{"b": 1, "a": uint8(2), "c": []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x83, 0xa1, 'a', 2, 0xa1, 'b', 1, 0xa1, 'c', 0x91, 0xa1, 'x'}
	if string(b) != string(want) {
		t.Fatalf("got % x", b)
	}
}

func TestEncodeRefuses(t *testing.T) {
	for name, v := range map[string]any{
		"struct":        struct{}{},
		"bad raw":       Raw{0x92, 1},
		"nested struct": []any{struct{}{}},
	} {
		if _, err := Encode(nil, v); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestDecode(t *testing.T) {
	b := abi.AppendArrayHeader(nil, 7)
	b = abi.AppendInt(b, -1<<40)
	b = abi.AppendFloat(b, 2.5)
	b = abi.AppendStr(b, "s")
	b = abi.AppendBin(b, []byte{9})
	b = abi.AppendBool(b, true)
	b = abi.AppendNil(b)
	b = append(abi.AppendMapHeader(b, 1), 0xa1, 'k', 0x90)
	v, err := Decode(b)
	want := []any{int64(-1 << 40), 2.5, "s", []byte{9}, true, nil, map[string]any{"k": []any{}}}
	if err != nil || !reflect.DeepEqual(v, want) {
		t.Fatalf("%#v %v", v, err)
	}
}

// TestUint64RoundTrips: an unsigned integer past int64's range is
// msgpack's uint64 both ways (a config holding one failed to decode).
func TestUint64RoundTrips(t *testing.T) {
	b, err := Encode(nil, uint64(1<<64-1))
	if err != nil || string(b) != "\xcf\xff\xff\xff\xff\xff\xff\xff\xff" {
		t.Fatalf("% x, %v", b, err)
	}
	if v, err := Decode(b); err != nil || v != uint64(1<<64-1) {
		t.Errorf("%#v, %v", v, err)
	}
	if v, err := Decode([]byte{0xcf, 0, 0, 0, 0, 0, 0, 0, 7}); err != nil || v != int64(7) {
		t.Errorf("a small uint64: %#v, %v", v, err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	deep := make([]byte, 0, 100)
	for i := 0; i < 70; i++ {
		deep = append(deep, 0x91)
	}
	deep = append(deep, 0)
	cases := map[string][]byte{
		"trailing":    {0x01, 0x02},
		"truncated":   {0x92, 0x01},
		"int map key": {0x81, 0x01, 0x01},
		"ext":         {0xd4, 1, 1},
		"too deep":    deep,
	}
	for name, b := range cases {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := DecodeMap([]byte{0x90}); err == nil {
		t.Error("DecodeMap of an array: no error")
	}
	if _, err := Decode(deep); !errors.Is(err, abi.ErrTooDeep) {
		t.Errorf("too deep: %v", err)
	}
}
