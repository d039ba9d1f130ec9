package codec

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
)

// jsonVectors are the inputs of the differential tests and the fuzz
// seeds: the vectors of the other tests, and the corners of the grammar.
func jsonVectors() []string {
	var many strings.Builder
	many.WriteString("{")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&many, `"k%d":%d,`, i, i)
	}
	v := []string{
		`{"txnId":1,"accountId":"a-1","amount":-12,"currency":"EUR","country":"NL","ts":1700000000000}`,
		`{"z":1,"a":2,"m":{"y":[1,2.5,"x",null,true,false],"b":{}},"e":[]}`,
		`{"big":9223372036854775807,"small":-9223372036854775808,"huge":18446744073709551615}`,
		`{"f":1.5,"whole":2.0,"tiny":1e-07,"large":1e+21,"neg":-0.25}`,
		`{"s":"quote \" backslash \\ tab \t nl \n ctl \u0001 del \u007f ls \u2028 é 日本"}`,
		`[1,[2,[3]],{"k":"v"}]`, `"just a string"`, `null`, `true`, `false`,
		`5`, `-1`, `300`, `1.0`, `1e3`, `-0.5`, `-0`, `-0.0`, `0`, `1E2`, `1e+2`, `1e-2`, `0.1e1`,
		`999999999999999999`, `-999999999999999999`, `1000000000000000000`, `9223372036854775808`,
		`-9223372036854775809`, `18446744073709551616`, `18446744073709551615`, `99999999999999999999`,
		`19999999999999999999`, `10000000000000000000`, `-10000000000000000000`, `-9223372036854775808`, `184467440737095516150`, `123456789012345678901234567890`,
		`1e400`, `-1e400`, `1e-400`, `4.9e-324`, `1.7976931348623157e308`,
		`{"a":1`, `{"a":1} {}`, `{"a" 1}`, ``, ` `, deep(abi.MaxDepth), deep(abi.MaxDepth + 1),
		strings.Repeat(`{"a":`, abi.MaxDepth) + `1` + strings.Repeat(`}`, abi.MaxDepth),
		strings.Repeat(`{"a":`, abi.MaxDepth+1) + `1` + strings.Repeat(`}`, abi.MaxDepth+1),
		"{\"a\":\"\xff\xfe\"}", "{\"é\":\"ok\xe2\x82\"}", "\"\xed\xa0\x80\"", "\xff", "{\"a\" 1 \xff}",
		`{"a":"\ufffd é ☃ 😀"}`,
		`{"k":"a","v":1,"k":"b"}`, `{"m":{"x":1,"y":2,"x":3}}`, `[1,{"a":[{"b":{"c":1,"c":2}}]}]`, `{"":1,"":2}`,
		many.String() + `"k3":0}`, many.String() + `"k39":0}`, many.String() + `"new":0,"new":1}`, many.String() + `"last":0}`,
		`{"a":{"k":1},"b":{"k":2},"k":3}`, `[{"k":1},{"k":2}]`, `{"K":1,"k":2,"é":3,"e":4}`,
		`{"a\u0062":1,"ab":2}`, `{"a":{"b":1,"c":{"b":1}},"b":2}`,
		`{"a": oops}`, `{"a":1} x`, `1x`, `01`, `[01]`, `[1.]`, `[-]`, `[1e]`, `[1e+]`, `{"a":1,}`, `[1,]`, `{,}`,
		`{"a":"\x"}`, `"\u12g4"`, "\"a\x01\"", `tru`, `trux`, `[nul]`, `[1 2]`, `{"a":1 "b":2}`, `}`, `]`, `{"a":]`,
		`"\ud800"`, `"\ud800\u0041"`, `"\udc00"`, `"\ud83d\ude00"`, `"\ud83d\ud83d\ude00"`, `"\ud83d\u00"`, `"\ud83d\`,
		`"\u0000"`, `"\/\b\f\n\r\t"`, `[1,2]]`, `1 2`, `é`, `{"a":é}`, `"abc`, `"\`, `"\u12`, `-`, `1.`, `[`, `{"a"`, `{"a":`,
		" 1 ", "\t[\r\n]", " { \"a\" : [ 1 , 2 ] , \"b\" : { } } ", `[truefalse]`, `[true false]`, `{"a":-}`, `-01`, `+1`, `.5`,
		`"` + strings.Repeat("x", 31) + `"`, `"` + strings.Repeat("x", 32) + `"`, `"` + strings.Repeat("x", 256) + `"`,
		`"` + strings.Repeat("x", 70000) + `"`, `"` + strings.Repeat(`\n`, 31) + `"`, `"` + strings.Repeat(`\n`, 32) + `"`,
		`"` + strings.Repeat(`\u00e9`, 20) + `"`, `"` + strings.Repeat(`\u00e9`, 200) + `x"`, `"` + strings.Repeat(`é\t`, 30000) + `"`,
		`[` + strings.Repeat(`1,`, 15) + `1]`, `[` + strings.Repeat(`1,`, 16) + `1]`, `[` + strings.Repeat(`[],`, 70000) + `1]`,
	}
	big := []string{}
	for _, n := range []int{15, 16, 17, 65535, 65536} {
		var b strings.Builder
		b.WriteString("{")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"%d":{"x":[%d]}`, i, i)
		}
		b.WriteString("}")
		big = append(big, b.String())
	}
	return append(v, big...)
}

// TestJSONToMsgpackMatchesEncodingJSON: the transcoder writes what the
// encoding/json decoder it replaced wrote, and refuses what it refused.
func TestJSONToMsgpackMatchesEncodingJSON(t *testing.T) {
	for _, js := range jsonVectors() {
		checkAgainstOracle(t, []byte(js))
	}
}

func checkAgainstOracle(t *testing.T, js []byte) {
	t.Helper()
	prefix := []byte{0x93, 0xc0}
	got, err := JSONToMsgpack(append([]byte(nil), prefix...), js)
	want, werr := oldJSONToMsgpack(append([]byte(nil), prefix...), js)
	switch {
	case errors.Is(err, ErrWideInteger) && werr == nil:
		// the one departure: an integer past 64 bits, a float with
		// lost digits to encoding/json, is refused
		if !bytes.Equal(got, prefix) {
			t.Fatalf("%.80q: error %v, and dst changed to % x", js, err, got)
		}
	case (err == nil) != (werr == nil):
		t.Fatalf("%.80q: got %v, encoding/json %v", js, err, werr)
	case err == nil && !bytes.Equal(got, want):
		t.Fatalf("%.80q:\n got % x\nwant % x", js, got, want)
	case err != nil && !bytes.Equal(got, prefix):
		t.Fatalf("%.80q: error %v, and dst changed to % x", js, err, got)
	case err != nil && !strings.HasPrefix(err.Error(), "json: "):
		t.Fatalf("%.80q: error %v", js, err)
	}
}

func FuzzJSONToMsgpack(f *testing.F) {
	for _, js := range jsonVectors() {
		if len(js) < 4096 {
			f.Add([]byte(js))
		}
	}
	f.Fuzz(func(t *testing.T, js []byte) { checkAgainstOracle(t, js) })
}

// TestJSONErrorPositions: an error names the 1-based byte at fault (the
// first of a character, the opening quote of a duplicate key, the first
// byte of a number out of range); input that ends too soon, its length.
func TestJSONErrorPositions(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a": oops}`, `json: invalid character 'o' looking for beginning of value at byte 7`},
		{`{"a":é}`, `json: invalid character 'é' looking for beginning of value at byte 6`},
		{`{,}`, `json: invalid character ',' looking for beginning of object key string at byte 2`},
		{`{"a":1,}`, `json: invalid character '}' looking for beginning of object key string at byte 8`},
		{`[1,]`, `json: invalid character ']' looking for beginning of value at byte 4`},
		{`[01]`, `json: invalid character '1' after array element at byte 3`},
		{`{"a":1 "b":2}`, `json: invalid character '"' after object key:value pair at byte 8`},
		{`[1.]`, `json: invalid character ']' after decimal point in numeric literal at byte 4`},
		{`[-]`, `json: invalid character ']' in numeric literal at byte 3`},
		{`[1e]`, `json: invalid character ']' in exponent of numeric literal at byte 4`},
		{`{"v":99999999999999999999}`, `json: integer 99999999999999999999 does not fit in 64 bits (at byte 6): quote it to keep its digits as a string, or write it with an exponent (1e+20) for a float`},
		{`[-9223372036854775809]`, `json: integer -9223372036854775809 does not fit in 64 bits (at byte 2): quote it to keep its digits as a string, or write it with an exponent (-9.22e+18) for a float`},
		{`{"a":"\x"}`, `json: invalid character 'x' in string escape code at byte 8`},
		{`"\u12g4"`, `json: invalid character 'g' in \u hexadecimal character escape at byte 6`},
		{"\"a\x01\"", `json: invalid character '\x01' in string literal at byte 3`},
		{`trux`, `json: invalid character 'x' in literal true (expecting 'e') at byte 4`},
		{`1x`, `json: invalid character 'x' after top-level value at byte 2`},
		{`1 2`, `json: more than one value: input goes on after byte 1`},
		{`tru`, `json: unexpected end of input at byte 3`},
		{`"abc`, `json: unexpected end of input at byte 4`},
		{`{"k":1,"k":2}`, `json: duplicate field "k" (at byte 8)`},
		{`{"x":{"k":1,"k":2}}`, `json: duplicate field "k" (at byte 13)`},
		{`[1e400]`, `json: number 1e400: strconv.ParseFloat: parsing "1e400": value out of range (at byte 2)`},
		{"{\"a\" 1 \xff}", `json: invalid UTF-8 at byte 8`},
	} {
		if _, err := JSONToMsgpack(nil, []byte(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

// TestJSONToMsgpackAllocs: no allocation per record once warm, large
// objects (the hash set) included.
func TestJSONToMsgpackAllocs(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{"n":{`)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&many, `"k%d":"v\u00e9%d",`, i, i)
	}
	many.WriteString(`"z":[1,2.5,-3e2,true,null,18446744073709551615]}}`)
	for _, js := range []string{
		`{"txnId":"t1","accountId":"acct-0001","amount":12.25,"currency":"EUR","meta":{"country":"DE","ts":1700000000001,"tags":["a","b"]},"note":"caf\u00e9 1"}`,
		many.String(),
	} {
		buf, in := make([]byte, 0, 4096), []byte(js)
		if n := testing.AllocsPerRun(100, func() {
			if _, err := JSONToMsgpack(buf, in); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%.40s: %v allocations a call", js, n)
		}
	}
}

func BenchmarkJSONToMsgpack(b *testing.B) {
	js := []byte(`{"txnId":"t1","accountId":"acct-0001","amount":12.25,"currency":"EUR","meta":{"country":"DE","ts":1700000000001,"tags":["a","b"]},"note":"caf\u00e9 1"}`)
	for _, tc := range []struct {
		name string
		f    func([]byte, []byte) ([]byte, error)
	}{{"new", JSONToMsgpack}, {"encoding-json", oldJSONToMsgpack}} {
		b.Run(tc.name, func(b *testing.B) {
			buf := make([]byte, 0, 4096)
			b.SetBytes(int64(len(js)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.f(buf, js); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
