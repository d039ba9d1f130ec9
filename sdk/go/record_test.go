//go:build !wasip1

// The SDK tests drive operators through the native fake host.

package sdk_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

// mapOp registers a map and runs it over one JSON record.
func mapOp(t *testing.T, in string, fn func(sdk.Record) (sdk.Record, error)) *sdktest.Result {
	t.Helper()
	sdk.Reset()
	sdk.Map(fn)
	return sdktest.Run(t, sdktest.Options{}, sdktest.JSON(in))
}

func TestGetters(t *testing.T) {
	var got []string
	mapOp(t, `{"i":-7,"f":2.5,"s":"héllo","b":true,"n":null,"a":[1,2],"m":{"x":1}}`, func(r sdk.Record) (sdk.Record, error) {
		got = append(got,
			strconv.FormatInt(r.Int("i"), 10),
			strconv.FormatFloat(r.Float("f"), 'g', -1, 64),
			strconv.FormatInt(r.Int("f"), 10),              // float truncated
			strconv.FormatFloat(r.Float("i"), 'g', -1, 64), // int converted
			r.Str("s"), string(r.StrBytes("s")),
			strconv.FormatBool(r.Bool("b")),
			strconv.FormatBool(r.Has("n")), strconv.FormatBool(r.Get("n").IsNil()),
			strconv.FormatBool(r.Has("missing")),
			strconv.FormatInt(r.Int("s"), 10), // wrong type: zero
			r.Str("i"),
			r.Get("a").Type().String(), r.Get("m").Type().String(),
		)
		return r, nil
	})
	want := "-7 2.5 2 -7 héllo héllo true true true false 0  array map"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("got  %q\nwant %q", s, want)
	}
}

func TestEditsKeepFieldOrder(t *testing.T) {
	res := mapOp(t, `{"a":1,"b":"x","c":true,"d":4}`, func(r sdk.Record) (sdk.Record, error) {
		return r.SetStr("c", "changed").
			SetInt("new1", 1).
			Delete("b").
			SetFloat("new2", 0.5).
			SetInt("a", 300).
			SetBool("new1", false). // a new field set twice keeps its first position
			Delete("missing"), nil
	})
	wantJSON(t, res, "", `{"a":300,"c":"changed","d":4,"new1":false,"new2":0.5}`)
}

// Only new fields (appendValue's fast path): the value is copied behind a
// new header, the fields follow in the order they were first set; past
// 15 fields the map header grows (the general path).
func TestNewFieldsFollowInOrder(t *testing.T) {
	res := mapOp(t, `{"a":1,"b":"x"}`, func(r sdk.Record) (sdk.Record, error) {
		return r.SetStr("z", "last?").SetInt("c", 3).SetStr("z", "first new"), nil
	})
	wantJSON(t, res, "", `{"a":1,"b":"x","z":"first new","c":3}`)
	res = mapOp(t, `{"f0":0,"f1":1,"f2":2,"f3":3,"f4":4,"f5":5,"f6":6,"f7":7,"f8":8,"f9":9,"f10":10,"f11":11,"f12":12,"f13":13}`,
		func(r sdk.Record) (sdk.Record, error) { return r.SetInt("x", 14).SetInt("y", 15), nil })
	wantJSON(t, res, "", `{"f0":0,"f1":1,"f2":2,"f3":3,"f4":4,"f5":5,"f6":6,"f7":7,"f8":8,"f9":9,"f10":10,"f11":11,"f12":12,"f13":13,"x":14,"y":15}`)
}

func TestGettersSeeEdits(t *testing.T) {
	var got []string
	mapOp(t, `{"a":1,"b":2}`, func(r sdk.Record) (sdk.Record, error) {
		r.SetInt("a", 10).Delete("b").SetStr("c", "new")
		got = append(got, strconv.FormatInt(r.Int("a"), 10), strconv.FormatBool(r.Has("b")), r.Str("c"))
		r.SetInt("b", 5) // set after delete: back in its old place
		return r, nil
	})
	if s := strings.Join(got, " "); s != "10 false new" {
		t.Fatalf("got %q", s)
	}
}

func TestSetAfterDeleteKeepsPosition(t *testing.T) {
	res := mapOp(t, `{"a":1,"b":2,"c":3}`, func(r sdk.Record) (sdk.Record, error) {
		return r.Delete("b").SetInt("b", 20), nil
	})
	wantJSON(t, res, "", `{"a":1,"b":20,"c":3}`)
}

// One field set (appendSplice's case): every byte but the field's value is
// the record's own, the envelope as it was encoded included, and of a name
// present twice only the first is edited, as on the general path.
func TestOneSetKeepsTheRecordsBytes(t *testing.T) {
	sdk.Reset()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return r.SetInt("amount", 2*r.Int("amount")), nil })
	var in abi.Writer
	v := abi.AppendMapHeader(nil, 3)
	v = abi.AppendInt(abi.AppendStr(v, "id"), 1000)
	v = abi.AppendInt(abi.AppendStr(v, "amount"), 100)
	v = abi.AppendStr(abi.AppendStr(v, "amount"), "second") // a name twice: the first is edited
	in.Append(7, true, abi.AppendStr(nil, "k"), v)
	h := newRecHost()
	defer func() { hostcall.Fake = nil }()
	if st := h.process(0, in.Buf, int32(in.Count)); st != 0 || len(h.emits) != 1 {
		t.Fatalf("status %v, %d emits", st, len(h.emits))
	}
	want := append([]byte{}, in.Buf[:len(in.Buf)-len(v)]...) // [time, key, as the input encoded them
	want = abi.AppendMapHeader(want, 3)
	want = abi.AppendInt(abi.AppendStr(want, "id"), 1000)
	want = abi.AppendInt(abi.AppendStr(want, "amount"), 200)
	want = abi.AppendStr(abi.AppendStr(want, "amount"), "second")
	if got := h.emits[0].buf; string(got) != string(want) {
		t.Fatalf("got  %x\nwant %x", got, want)
	}
}

func TestDeleteEverything(t *testing.T) {
	res := mapOp(t, `{"a":1,"b":2}`, func(r sdk.Record) (sdk.Record, error) {
		return r.Delete("a").Delete("b"), nil
	})
	wantJSON(t, res, "", `{}`)
}

func TestSetValueRawAndNil(t *testing.T) {
	res := mapOp(t, `{"a":{"x":[1,"y"]},"b":1}`, func(r sdk.Record) (sdk.Record, error) {
		return r.SetValue("copy", r.Get("a")).
			SetValue("b", r.Get("missing")). // a missing value deletes
			SetRaw("raw", abi.AppendStr(nil, "r")).
			SetNil("a"), nil
	})
	wantJSON(t, res, "", `{"a":null,"copy":{"x":[1,"y"]},"raw":"r"}`)
}

func TestSetRawRefusesBadMsgpack(t *testing.T) {
	sdk.Reset()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return r.SetRaw("x", []byte{0x92, 0x01}), nil })
	_, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{}`))
	wantCallError(t, err, "sluice_process", abi.StatusUser, "record 0: panic: sluice sdk: SetRaw(x): not exactly one msgpack value"+at(-2, "TestSetRawRefusesBadMsgpack.func1"))
}

// Map headers change size at 16 and 65536 fields; the writer reserves the
// largest size the result can need and shrinks it when fewer remain.
func TestMapHeaderSizes(t *testing.T) {
	fields := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"f` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
		}
		return b.String() + "}"
	}
	cases := []struct {
		name string
		in   int
		edit func(sdk.Record) sdk.Record
		out  int
	}{
		{"15 to 16 (fixmap to map16)", 15, func(r sdk.Record) sdk.Record { return r.SetInt("f15", 15) }, 16},
		{"16 to 15 (map16 to fixmap)", 16, func(r sdk.Record) sdk.Record { return r.Delete("f15") }, 15},
		{"14 plus an edit that adds nothing", 14, func(r sdk.Record) sdk.Record { return r.SetInt("f13", 13).SetInt("f0", 0) }, 14},
		{"65535 to 65536 (map16 to map32)", 65535, func(r sdk.Record) sdk.Record { return r.SetInt("f65535", 65535) }, 65536},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mapOp(t, fields(c.in), func(r sdk.Record) (sdk.Record, error) { return c.edit(r), nil })
			if got := res.JSON(""); len(got) != 1 || got[0] != fields(c.out) {
				t.Fatalf("got %.200s", got)
			}
		})
	}
}

func TestEditOfNonMapValueFails(t *testing.T) {
	sdk.Reset()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return r.SetInt("a", 1), nil })
	// A value that is an array, not a map: only a raw batch can hold one.
	h := newRecHost()
	st := h.process(0, abi.AppendEnvelope(nil, 0, false, nil, []byte{0x91, 0x01}), 1)
	if st != abi.StatusUser || h.text != "record 0: the record value is not a msgpack map: its fields cannot be edited" {
		t.Fatalf("status %v, text %q", st, h.text)
	}
}

func TestKeyAndTime(t *testing.T) {
	var got []string
	sdk.Reset()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) {
		ms, ok := r.Time()
		got = append(got, r.Key().Str(), strconv.FormatInt(ms, 10), strconv.FormatBool(ok))
		return r.SetTime(ms + 1).SetKey(r.Get("k").Key()), nil
	})
	res := sdktest.Run(t, sdktest.Options{}, sdktest.JSON(`{"k":"new"}`).WithKey("old").WithTime(1000))
	out := res.Main()[0]
	if strings.Join(got, " ") != "old 1000 true" || out.Key != "new" || out.Time != 1001 || !out.HasTime {
		t.Fatalf("seen %q, out %+v", got, out)
	}
}

func TestCloneOutlivesTheCall(t *testing.T) {
	var kept []sdk.Record
	sdk.Reset()
	sdk.Filter(func(r sdk.Record) (bool, error) {
		kept = append(kept, r.SetInt("seen", 1).Clone())
		return false, nil
	})
	sdktest.Run(t, sdktest.Options{}, sdktest.JSON(`{"id":"a"}`), sdktest.JSON(`{"id":"b"}`))
	var ids []string
	for _, r := range kept {
		b, err := r.AppendMsgpack(nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Str("id")+strconv.FormatInt(r.Int("seen"), 10)+strconv.Itoa(len(b)))
	}
	if strings.Join(ids, " ") != "a112 b112" {
		t.Fatalf("got %q", ids)
	}
}

func TestNewRecordOutsideACall(t *testing.T) {
	r := sdk.NewRecord().SetStr("a", "x").SetInt("b", 2)
	b, err := r.AppendMsgpack(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x82, 0xa1, 'a', 0xa1, 'x', 0xa1, 'b', 0x02}
	if string(b) != string(want) {
		t.Fatalf("got % x", b)
	}
	if _, ok := r.Time(); ok {
		t.Fatal("a record made outside a call has no time")
	}
}

func TestZeroRecord(t *testing.T) {
	var r sdk.Record
	if !r.IsZero() || r.Int("a") != 0 || r.Has("a") || r.Key().Exists() {
		t.Fatal("zero Record getters must return zero values")
	}
	if _, err := r.AppendMsgpack(nil); err == nil {
		t.Fatal("AppendMsgpack of the zero Record must fail")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a setter on the zero Record must panic")
		}
	}()
	r.SetInt("a", 1)
}

// Setters change the record they are called on and return it (doc.go,
// "Records"): an Emit writes the record as it is then; to emit variants of
// one input, Clone first.
func TestSettersChangeTheRecordInPlace(t *testing.T) {
	sdk.Reset()
	sdk.FlatMap(func(r sdk.Record, out sdk.Emitter) error {
		r2 := r.SetInt("n", 2)
		if r.Int("n") != 2 || r2.Int("n") != 2 {
			return errors.New("r.SetInt(...) is not r")
		}
		out.Emit(r.SetStr("a", "1"))
		out.Emit(r.SetStr("b", "2")) // r has a already
		c := r.Clone().SetStr("c", "3")
		out.Emit(c)
		out.Emit(r.Clone().Delete("x").SetStr("d", "4"))
		out.Emit(r) // the clones' edits are not r's
		return nil
	})
	res := sdktest.Run(t, sdktest.Options{}, sdktest.JSON(`{"x":1,"n":1}`))
	wantJSON(t, res, "",
		`{"x":1,"n":2,"a":"1"}`,
		`{"x":1,"n":2,"a":"1","b":"2"}`,
		`{"x":1,"n":2,"a":"1","b":"2","c":"3"}`,
		`{"n":2,"a":"1","b":"2","d":"4"}`,
		`{"x":1,"n":2,"a":"1","b":"2"}`)
}
