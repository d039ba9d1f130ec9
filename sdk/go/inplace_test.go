//go:build !wasip1

package sdk_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

// flatMapOp registers a flat map and runs it over JSON records.
func flatMapOp(t *testing.T, fn func(sdk.Record, sdk.Emitter) error, in ...string) *sdktest.Result {
	t.Helper()
	sdk.Reset()
	sdk.FlatMap(fn)
	recs := make([]sdktest.Record, len(in))
	for i, s := range in {
		recs[i] = sdktest.JSON(s)
	}
	return sdktest.Run(t, sdktest.Options{}, recs...)
}

// A setter may write a value of the same size over an input field's bytes
// instead of recording an edit (view.writable). What an operator sees and
// emits must be what the edit would give, whatever the field's encoding
// and the new value's size.
func TestInPlaceSettersGiveTheEditsResult(t *testing.T) {
	in := []string{
		`{"a":1,"b":"x"}`, `{"a":-32,"b":"x"}`, `{"a":127,"b":"x"}`, `{"a":200,"b":"x"}`,
		`{"a":-100,"b":"x"}`, `{"a":40000,"b":"x"}`, `{"a":-40000,"b":"x"}`, `{"a":5000000000,"b":"x"}`,
		`{"a":null,"b":"x"}`, `{"a":true,"b":"x"}`, `{"a":"","b":"x"}`, `{"a":1.5,"b":"x"}`, `{"b":"x"}`,
	}
	for _, tc := range []struct {
		name string
		set  func(sdk.Record) sdk.Record
		want []string
	}{
		{"double the int", func(r sdk.Record) sdk.Record { return r.SetInt("a", 2*r.Int("a")) }, []string{
			`{"a":2,"b":"x"}`, `{"a":-64,"b":"x"}`, `{"a":254,"b":"x"}`, `{"a":400,"b":"x"}`,
			`{"a":-200,"b":"x"}`, `{"a":80000,"b":"x"}`, `{"a":-80000,"b":"x"}`, `{"a":10000000000,"b":"x"}`,
			`{"a":0,"b":"x"}`, `{"a":0,"b":"x"}`, `{"a":0,"b":"x"}`, `{"a":2,"b":"x"}`, `{"b":"x","a":0}`,
		}},
		{"a 1-byte int over anything", func(r sdk.Record) sdk.Record { return r.SetInt("a", 7) }, []string{
			`{"a":7,"b":"x"}`, `{"a":7,"b":"x"}`, `{"a":7,"b":"x"}`, `{"a":7,"b":"x"}`, `{"a":7,"b":"x"}`, `{"a":7,"b":"x"}`,
			`{"a":7,"b":"x"}`, `{"a":7,"b":"x"}`, `{"a":7,"b":"x"}`, `{"a":7,"b":"x"}`, `{"a":7,"b":"x"}`, `{"a":7,"b":"x"}`, `{"b":"x","a":7}`,
		}},
		{"a float", func(r sdk.Record) sdk.Record { return r.SetFloat("a", 0.25) }, []string{
			`{"a":0.25,"b":"x"}`, `{"a":0.25,"b":"x"}`, `{"a":0.25,"b":"x"}`, `{"a":0.25,"b":"x"}`, `{"a":0.25,"b":"x"}`, `{"a":0.25,"b":"x"}`,
			`{"a":0.25,"b":"x"}`, `{"a":0.25,"b":"x"}`, `{"a":0.25,"b":"x"}`, `{"a":0.25,"b":"x"}`, `{"a":0.25,"b":"x"}`, `{"a":0.25,"b":"x"}`, `{"b":"x","a":0.25}`,
		}},
		{"a bool", func(r sdk.Record) sdk.Record { return r.SetBool("a", false) }, []string{
			`{"a":false,"b":"x"}`, `{"a":false,"b":"x"}`, `{"a":false,"b":"x"}`, `{"a":false,"b":"x"}`, `{"a":false,"b":"x"}`, `{"a":false,"b":"x"}`,
			`{"a":false,"b":"x"}`, `{"a":false,"b":"x"}`, `{"a":false,"b":"x"}`, `{"a":false,"b":"x"}`, `{"a":false,"b":"x"}`, `{"a":false,"b":"x"}`, `{"b":"x","a":false}`,
		}},
		{"set twice", func(r sdk.Record) sdk.Record { return r.SetInt("a", 1).SetInt("a", 100000) }, nil},
		{"an edit, then an int", func(r sdk.Record) sdk.Record { return r.SetStr("a", "s").SetInt("a", 3) }, nil},
		{"an int, then an edit", func(r sdk.Record) sdk.Record { return r.SetInt("a", 3).SetStr("a", "s") }, nil},
		{"an int, then a delete", func(r sdk.Record) sdk.Record { return r.SetInt("a", 3).Delete("b") }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen []int64
			res := flatMapOp(t, func(r sdk.Record, out sdk.Emitter) error {
				r = tc.set(r)
				seen = append(seen, r.Int("a")) // the getter reads what was set
				out.Emit(r)
				return nil
			}, in...)
			want := tc.want
			switch tc.name {
			case "set twice":
				want = repeatJSON(len(in), `{"a":100000,"b":"x"}`, `{"b":"x","a":100000}`)
			case "an edit, then an int":
				want = repeatJSON(len(in), `{"a":3,"b":"x"}`, `{"b":"x","a":3}`)
			case "an int, then an edit":
				want = repeatJSON(len(in), `{"a":"s","b":"x"}`, `{"b":"x","a":"s"}`)
			case "an int, then a delete":
				want = repeatJSON(len(in), `{"a":3}`, `{"a":3}`)
			}
			wantJSON(t, res, "", want...)
			if len(seen) != len(in) {
				t.Fatalf("%d records seen", len(seen))
			}
		})
	}
}

// repeatJSON is n-1 times rec, then last (the input without the field).
func repeatJSON(n int, rec, last string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = rec
	}
	out[n-1] = last
	return out
}

// A map16 header stays a map16 when nothing changes, and an edit writes it
// as a fixmap: a setter over such a record records an edit, as the other
// SDKs' edits give the smallest header too.
func TestInPlaceSettersNormaliseTheMapHeader(t *testing.T) {
	sdk.Reset()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return r.SetInt("a", 2), nil })
	h := newRecHost()
	defer func() { hostcall.Fake = nil }()
	v := append([]byte{0xde, 0, 2}, abi.AppendInt(abi.AppendStr(nil, "a"), 1)...)
	v = abi.AppendStr(abi.AppendStr(v, "b"), "x")
	batch := abi.AppendEnvelope(nil, 0, false, nil, v)
	index, err := abi.AppendIndex(nil, batch, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st := hostcall.Guest.ProcessIndexed(0, batch, 1, index); st != 0 {
		t.Fatal(st)
	}
	if st := h.process(0, batch, 1); st != 0 {
		t.Fatal(st)
	}
	want := abi.AppendEnvelope(nil, 0, false, nil, abi.AppendStr(abi.AppendStr(abi.AppendInt(abi.AppendStr([]byte{0x82}, "a"), 2), "b"), "x"))
	if len(h.emits) != 2 || !bytes.Equal(h.emits[0].buf, want) || !bytes.Equal(h.emits[1].buf, want) {
		t.Fatalf("emitted %x, want %x twice (indexed, then scanned)", h.emits, want)
	}
}

// A Value read with Get before a setter keeps the old value: once one is
// handed out, setters record edits again. Emitting a record then setting
// a field emits the record as it was first.
func TestInPlaceSettersLeaveEarlierViewsAlone(t *testing.T) {
	res := flatMapOp(t, func(r sdk.Record, out sdk.Emitter) error {
		old := r.Get("a")
		oldBytes := r.StrBytes("s")
		out.Emit(r)
		r = r.SetInt("a", 2*old.Int()).SetStr("s", "zz")
		out.Emit(sdk.NewRecord().SetValue("before", old).SetInt("after", r.Int("a")).SetStrBytes("s", oldBytes))
		out.Emit(r)
		return nil
	}, `{"a":5,"s":"ab"}`)
	wantJSON(t, res, "", `{"a":5,"s":"ab"}`, `{"before":5,"after":10,"s":"ab"}`, `{"a":10,"s":"zz"}`)

	res = flatMapOp(t, func(r sdk.Record, out sdk.Emitter) error {
		out.Emit(r)
		out.Emit(r.SetInt("a", 7)) // in place: the first emit was copied already
		out.Emit(r.SetInt("a", 8))
		return nil
	}, `{"a":5}`)
	wantJSON(t, res, "", `{"a":5}`, `{"a":7}`, `{"a":8}`)
}

// Natively the batch is the caller's: a setter writing in place must not
// change it (the SDK copies it, as the host copies it into guest memory).
func TestInPlaceSettersLeaveTheCallersBatch(t *testing.T) {
	sdk.Reset()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return r.SetInt("amount", 0), nil })
	h := &discardHost{}
	hostcall.Fake = h
	defer func() { hostcall.Fake = nil }()
	batch := benchRecords(16)
	before := bytes.Clone(batch)
	if st := hostcall.Guest.Process(0, batch, 16); st != 0 {
		t.Fatal(st)
	}
	index, err := abi.AppendIndex(nil, batch, 16)
	if err != nil {
		t.Fatal(err)
	}
	if st := hostcall.Guest.ProcessIndexed(0, batch, 16, index); st != 0 {
		t.Fatal(st)
	}
	if !bytes.Equal(batch, before) || h.records != 32 {
		t.Fatalf("the caller's batch changed (%d records out)", h.records)
	}
}

// A filter copies neighbouring kept records as one run: whatever the
// pattern of kept, dropped and edited records (an edited one is emitted on
// its own, between runs), the output is the kept records in input order.
func TestFilterRunsKeepOrder(t *testing.T) {
	var in, want []string
	for i := 0; i < 40; i++ {
		rec := `{"i":` + strconv.Itoa(i) + `,"s":"x"}`
		in = append(in, rec)
		switch {
		case i%7 == 3 || i%5 == 1: // dropped
		case i%6 == 0: // edited: a string of another size
			want = append(want, `{"i":`+strconv.Itoa(i)+`,"s":"edited"}`)
		default:
			want = append(want, rec)
		}
	}
	sdk.Reset()
	sdk.Filter(func(r sdk.Record) (bool, error) {
		i := r.Int("i")
		if i%6 == 0 {
			r.SetStr("s", "edited")
		}
		return !(i%7 == 3 || i%5 == 1), nil
	})
	recs := make([]sdktest.Record, len(in))
	for i, s := range in {
		recs[i] = sdktest.JSON(s)
	}
	for _, batch := range []int{1, 3, 40} {
		res := sdktest.Run(t, sdktest.Options{BatchSize: batch}, recs...)
		wantJSON(t, res, "", want...)
	}
}
