package kafka

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
)

func TestDecodeEncode(t *testing.T) {
	cases := []struct {
		f       Format
		in      string
		columns []string
		json    string // the record value as JSON
		out     string // encoded back
	}{
		{FormatJSON, ` {"a":1,"b":[true,null]} `, nil, `{"a":1,"b":[true,null]}`, `{"a":1,"b":[true,null]}`},
		{FormatRaw, "héllo", nil, `"héllo"`, "héllo"},
		{FormatCSV, `1,x,"a,b",007,2.5`, nil, `[1,"x","a,b","007",2.5]`, `1,x,"a,b",007,2.5`},
		{FormatCSV, `1,x`, []string{"n", "s"}, `{"n":1,"s":"x"}`, `1,x`},
	}
	for _, c := range cases {
		mp, err := decode(nil, c.f, []byte(c.in), c.columns)
		if err != nil {
			t.Fatalf("%s %q: %v", c.f, c.in, err)
		}
		js, _ := codec.MsgpackToJSON(nil, mp)
		if string(js) != c.json {
			t.Errorf("%s %q: decoded %s, want %s", c.f, c.in, js, c.json)
		}
		back, err := encode(nil, c.f, mp)
		if err != nil {
			t.Fatalf("%s: encode: %v", c.f, err)
		}
		if string(back) != c.out {
			t.Errorf("%s: encoded %q, want %q", c.f, back, c.out)
		}
	}
	// msgpack passes through; raw that is not UTF-8 is binary and back
	mp, _ := decode(nil, FormatJSON, []byte(`{"k":"v"}`), nil)
	if got, err := decode(nil, FormatMsgpack, mp, nil); err != nil || string(got) != string(mp) {
		t.Fatalf("msgpack: %x %v", got, err)
	}
	bin, _ := decode(nil, FormatRaw, []byte{0xff, 0x00}, nil)
	if back, _ := encode(nil, FormatRaw, bin); string(back) != "\xff\x00" {
		t.Fatalf("raw binary back: %q", back)
	}
	// a tombstone is nil both ways
	if got, _ := decode(nil, FormatJSON, nil, nil); len(got) != 1 || got[0] != 0xc0 {
		t.Fatalf("tombstone: %x", got)
	}
	if got, _ := encode(nil, FormatJSON, []byte{0xc0}); got != nil {
		t.Fatalf("nil value encodes to %q, want no bytes", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		f       Format
		in      []byte
		columns []string
		want    string
	}{
		{FormatJSON, []byte(`{"a":`), nil, "malformed JSON"},
		{FormatMsgpack, []byte{0x92, 0x01}, nil, "malformed msgpack"},
		{FormatMsgpack, []byte{0x01, 0x02}, nil, "1 bytes after the value"},
		{FormatCSV, []byte("a,b"), []string{"x"}, "CSV row has 2 fields, csv-columns names 1"},
		{FormatCSV, []byte("a\nb"), nil, "more than one row"},
		{FormatCSV, []byte{'a', 0xff}, nil, "invalid UTF-8"},
	}
	for _, c := range cases {
		_, err := decode(nil, c.f, c.in, c.columns)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want %q", c.f, c.in, err, c.want)
		}
	}
	mp, _ := decode(nil, FormatJSON, []byte(`{"a":1}`), nil)
	if _, err := encode(nil, FormatRaw, mp); err == nil || !strings.Contains(err.Error(), "not a map") {
		t.Errorf("raw of a map: %v", err)
	}
}

// TestAppendEncodedSlab: the sink encodes a batch's keys and values into
// one slab; each encoded value is its own slice of it (a later append
// cannot reach into it), a null stays nil (a tombstone), an empty string
// stays an empty value (not a tombstone), and an error leaves the slab as
// it was.
func TestAppendEncodedSlab(t *testing.T) {
	slab := make([]byte, 0, 4) // small: the second value grows it
	slab, a, err := appendEncoded(slab, FormatJSON, abi.AppendStr(nil, "ab"))
	if err != nil || string(a) != `"ab"` || cap(a) != len(a) {
		t.Fatalf(`"ab": %q cap %d, %v`, a, cap(a), err)
	}
	slab, b, err := appendEncoded(slab, FormatJSON, abi.AppendInt(nil, 12345))
	if err != nil || string(b) != "12345" || string(a) != `"ab"` {
		t.Fatalf("12345: %q (first now %q), %v", b, a, err)
	}
	slab, n, err := appendEncoded(slab, FormatJSON, abi.AppendNil(nil))
	if err != nil || n != nil {
		t.Fatalf("null: %q, %v; want nil", n, err)
	}
	slab, e, err := appendEncoded(slab, FormatRaw, abi.AppendStr(nil, ""))
	if err != nil || e == nil || len(e) != 0 {
		t.Fatalf(`raw "": %q (nil %v), %v; want an empty value`, e, e == nil, err)
	}
	before := len(slab)
	slab, x, err := appendEncoded(slab, FormatRaw, abi.AppendArrayHeader(nil, 0))
	if err == nil || x != nil || len(slab) != before {
		t.Fatalf("raw array: %q, slab %d -> %d, %v; want an error and the slab as it was", x, before, len(slab), err)
	}
	if string(slab) != `"ab"12345` {
		t.Fatalf("slab %q", slab)
	}
}
