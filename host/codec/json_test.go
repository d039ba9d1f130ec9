package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

func TestRoundTripKeepsKeyOrder(t *testing.T) {
	tests := []string{
		`{"txnId":1,"accountId":"a-1","amount":-12,"currency":"EUR","country":"NL","ts":1700000000000}`,
		`{"z":1,"a":2,"m":{"y":[1,2.5,"x",null,true,false],"b":{}},"e":[]}`,
		`{"big":9223372036854775807,"small":-9223372036854775808,"huge":18446744073709551615}`,
		`{"f":1.5,"whole":2.0,"tiny":1e-07,"large":1e+21,"neg":-0.25}`,
		`{"s":"quote \" backslash \\ tab \t nl \n ctl \u0001 del \u007f ls \u2028 é 日本"}`,
		`[1,[2,[3]],{"k":"v"}]`,
		`"just a string"`,
		`null`,
	}
	for _, js := range tests {
		mp, err := JSONToMsgpack(nil, []byte(js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		got, err := MsgpackToJSON(nil, mp)
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		if string(got) != js {
			t.Errorf("round trip\n got: %s\nwant: %s", got, js)
		}
		if !json.Valid(got) {
			t.Errorf("invalid JSON: %s", got)
		}
	}
}

func TestJSONNumbers(t *testing.T) {
	for js, want := range map[string][]byte{
		`5`:    {0x05},
		`-1`:   {0xff},
		`300`:  {0xcd, 0x01, 0x2c},
		`1.0`:  abi.AppendFloat(nil, 1),
		`1e3`:  abi.AppendFloat(nil, 1000),
		`-0.5`: abi.AppendFloat(nil, -0.5),
	} {
		got, err := JSONToMsgpack(nil, []byte(js))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: % x, %v; want % x", js, got, err, want)
		}
	}
}

func TestJSONErrors(t *testing.T) {
	for js, want := range map[string]string{
		`{"a":1`:               "json: unexpected end of input at byte 6",
		`{"a":1} {}`:           "json: more than one value: input goes on after byte 7",
		`{"a" 1}`:              "json: invalid character '1' after object key at byte 6", // the '1' (encoding/json said 5)
		``:                     "json: unexpected end of input at byte 0",
		deep(abi.MaxDepth + 1): "json: nested deeper than 64 levels (at byte 65)",
	} {
		_, err := JSONToMsgpack(nil, []byte(js))
		if err == nil || err.Error() != want {
			t.Errorf("%.20s: %v, want %s", js, err, want)
		}
	}
	if _, err := JSONToMsgpack(nil, []byte(deep(abi.MaxDepth))); err != nil {
		t.Errorf("depth %d refused: %v", abi.MaxDepth, err)
	}
}

func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func TestMsgpackToJSONOtherTypes(t *testing.T) {
	m := abi.AppendMapHeader(nil, 5)
	m = abi.AppendInt(m, 7) // an int key
	m = abi.AppendStr(m, "int key")
	m = abi.AppendStr(m, "bin")
	m = abi.AppendBin(m, []byte{1, 2, 3})
	m = abi.AppendStr(m, "ext")
	m = append(m, 0xd4, 0x05, 0xaa)
	m = abi.AppendStr(m, "f32")
	m = append(m, 0xca, 0x3f, 0xc0, 0x00, 0x00) // 1.5
	m = abi.AppendStr(m, "bad utf8")
	m = abi.AppendStrBytes(m, []byte{'a', 0xff, 'b'})
	got, err := MsgpackToJSON(nil, m)
	want := `{"7":"int key","bin":"AQID","ext":{"ext":5,"data":"qg=="},"f32":1.5,"bad utf8":"a\ufffdb"}`
	if err != nil || string(got) != want {
		t.Errorf("got %s, %v\nwant %s", got, err, want)
	}
	for _, bad := range [][]byte{{0x92, 0x01}, {0xc1}, {0x01, 0x02}, {0xdd, 0xff, 0xff, 0xff, 0xff}} {
		if _, err := MsgpackToJSON(nil, bad); err == nil {
			t.Errorf("% x accepted", bad)
		}
	}
}

// TestJSONToMsgpackRefusesInvalidUTF8: a bad byte is an error naming its
// place (1-based), not U+FFFD (encoding/json's replacement).
func TestJSONToMsgpackRefusesInvalidUTF8(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\"a\":\"\xff\xfe\"}", "json: invalid UTF-8 at byte 7"},
		{"{\"é\":\"ok\xe2\x82\"}", "json: invalid UTF-8 at byte 10"}, // a truncated €
		{"\"\xed\xa0\x80\"", "json: invalid UTF-8 at byte 2"},        // a surrogate
	} {
		if _, err := JSONToMsgpack(nil, []byte(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.in, err, tc.want)
		}
	}
	if mp, err := JSONToMsgpack(nil, []byte(`{"a":"\ufffd é ☃ 😀"}`)); err != nil {
		t.Errorf("valid UTF-8: %v", err)
	} else if js, _ := MsgpackToJSON(nil, mp); string(js) != `{"a":"� é ☃ 😀"}` {
		t.Errorf("valid UTF-8: %s", js)
	}
}

// TestJSONToMsgpackRefusesDuplicateFields: an object naming a field twice
// is refused at any depth (the record kept both: key-by read the first,
// JSON readers downstream the last); the same key in sibling objects is
// fine, and so are many distinct keys (past the linear scan).
func TestJSONToMsgpackRefusesDuplicateFields(t *testing.T) {
	var many strings.Builder
	many.WriteString("{")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&many, `"k%d":%d,`, i, i)
	}
	for _, tc := range []struct{ in, dup string }{
		{`{"k":"a","v":1,"k":"b"}`, "k"},
		{`{"m":{"x":1,"y":2,"x":3}}`, "x"},
		{`[1,{"a":[{"b":{"c":1,"c":2}}]}]`, "c"},
		{`{"":1,"":2}`, ""},
		{many.String() + `"k3":0}`, "k3"},
		{many.String() + `"k39":0}`, "k39"},
		{many.String() + `"new":0,"new":1}`, "new"},
	} {
		_, err := JSONToMsgpack(nil, []byte(tc.in))
		if want := fmt.Sprintf("duplicate field %q", tc.dup); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.60s: %v, want %s", tc.in, err, want)
		}
	}
	for _, ok := range []string{`{"a":{"k":1},"b":{"k":2},"k":3}`, `[{"k":1},{"k":2}]`, many.String() + `"last":0}`, `{"K":1,"k":2,"é":3,"e":4}`} {
		if _, err := JSONToMsgpack(nil, []byte(ok)); err != nil {
			t.Errorf("%.60s: %v", ok, err)
		}
	}
}

// TestMsgpackToJSONNonFiniteFloats: JSON has no NaN or infinities; they
// are written as Jackson writes them (QUOTE_NON_NUMERIC_NUMBERS), not as
// Go's "+Inf".
func TestMsgpackToJSONNonFiniteFloats(t *testing.T) {
	mp := abi.AppendArrayHeader(nil, 5)
	mp = abi.AppendFloat(mp, math.Inf(1))
	mp = abi.AppendFloat(mp, math.Inf(-1))
	mp = abi.AppendFloat(mp, math.NaN())
	mp = append(mp, 0xca, 0xff, 0x80, 0, 0) // float32 -Inf
	mp = abi.AppendFloat(mp, 1e308)
	got, err := MsgpackToJSON(nil, mp)
	if want := `["Infinity","-Infinity","NaN","-Infinity",1e+308]`; err != nil || string(got) != want {
		t.Errorf("%s, %v; want %s", got, err, want)
	}
}
