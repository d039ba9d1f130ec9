package sdktest

import "testing"

func TestJSONRoundTripKeepsOrderAndTypes(t *testing.T) {
	in := `{"z":1,"a":-2.5,"m":{"y":[true,null,"é\"x"],"b":{}},"big":9007199254740993,"e":1e3}`
	b, err := fromJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := toJSON(b)
	// 1e3 is not written as an integer in JSON, so it stays a float.
	want := `{"z":1,"a":-2.5,"m":{"y":[true,null,"é\"x"],"b":{}},"big":9007199254740993,"e":1000.0}`
	if err != nil || out != want {
		t.Fatalf("got %s (%v)", out, err)
	}
	if b[len(b)-9] != 0xcb {
		t.Fatalf("1e3 must be encoded as a float64: % x", b[len(b)-9:])
	}
}

func TestJSONRefuses(t *testing.T) {
	for _, s := range []string{`{"a":}`, `{"a":1} x`, `[1`, ``} {
		if _, err := fromJSON(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
	if r := JSON(`[1,2]`); r.err != errNotObject {
		t.Errorf("an array record: %v", r.err)
	}
	if _, err := toJSON([]byte{0xca, 0x7f, 0xc0, 0, 0}); err == nil {
		t.Error("NaN has no JSON form")
	}
	if got, _ := toJSON([]byte{0xc4, 2, 1, 2}); got != `"AQI="` {
		t.Errorf("bin: %s", got)
	}
}
