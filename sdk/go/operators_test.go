//go:build !wasip1

// The SDK tests drive operators through the native fake host.

package sdk_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func TestFilterPassesRecordsUnchanged(t *testing.T) {
	sdk.Reset()
	sdk.Filter(func(r sdk.Record) (bool, error) { return r.Int("amount") > 0, nil })
	res := sdktest.Run(t, sdktest.Options{},
		sdktest.JSON(`{"z":1,"amount":5}`).WithKey("k").WithTime(7),
		sdktest.JSON(`{"amount":0}`),
		sdktest.JSON(`{"amount":-2}`),
		sdktest.JSON(`{"amount":3.5,"a":[1]}`))
	wantJSON(t, res, "", `{"z":1,"amount":5}`, `{"amount":3.5,"a":[1]}`)
	if r := res.Main()[0]; r.Key != "k" || r.Time != 7 {
		t.Fatalf("key and time must pass through: %+v", r)
	}
}

func TestFlatMapNewRecordsInheritTime(t *testing.T) {
	sdk.Reset()
	sdk.FlatMap(func(r sdk.Record, out sdk.Emitter) error {
		for _, w := range strings.Fields(r.Str("line")) {
			out.Emit(sdk.NewRecord().SetStr("w", w))
		}
		return nil
	})
	res := sdktest.Run(t, sdktest.Options{}, sdktest.JSON(`{"line":"a b"}`).WithTime(42), sdktest.JSON(`{"line":""}`))
	wantJSON(t, res, "", `{"w":"a"}`, `{"w":"b"}`)
	for _, r := range res.Main() {
		if !r.HasTime || r.Time != 42 || r.Key != nil {
			t.Fatalf("a new record carries the input's time and no key: %+v", r)
		}
	}
}

func TestProcessSideOutputs(t *testing.T) {
	sdk.Reset()
	sdk.Process(func(r sdk.Record, ctx sdk.Context) error {
		ctx.Emit(r)
		if r.Int("v") > 10 {
			ctx.EmitTo("high", r.SetBool("alert", true))
		}
		ctx.EmitTo("dropped", r)
		return nil
	}).Outputs("high", "dropped").Named("proc")
	res := sdktest.Run(t, sdktest.Options{Unconsumed: []string{"dropped"}},
		sdktest.JSON(`{"v":5}`), sdktest.JSON(`{"v":50}`))
	wantJSON(t, res, "", `{"v":5}`, `{"v":50}`)
	wantJSON(t, res, "high", `{"v":50,"alert":true}`)
	wantJSON(t, res, "dropped")
	want := map[string]any{"kind": "process", "sdk": "go", "name": "proc", "outputs": []any{"high", "dropped"}, "keyed": false}
	if !reflect.DeepEqual(res.Describe, want) {
		t.Fatalf("describe: %v", res.Describe)
	}
}

func TestEmitToUndeclaredTag(t *testing.T) {
	sdk.Reset()
	sdk.Process(func(r sdk.Record, ctx sdk.Context) error { ctx.EmitTo("oops", r); return nil })
	_, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{}`))
	wantCallError(t, err, "sluice_process", abi.StatusUser, `record 0: EmitTo("oops"): undeclared side output; declare it with .Outputs("oops")`)
}

func TestSidePortAskedOncePerInstance(t *testing.T) {
	sdk.Reset()
	sdk.Process(func(r sdk.Record, ctx sdk.Context) error { ctx.EmitTo("side", r); return nil }).Outputs("side")
	h := newRecHost()
	batch := abi.AppendEnvelope(nil, 0, false, nil, []byte{0x80})
	for i := 0; i < 3; i++ {
		if st := h.process(0, batch, 1); st != abi.StatusOK {
			t.Fatal(st, h.text)
		}
	}
	if h.portCalls != 1 || len(h.emits) != 3 || h.emits[2].port != 7 {
		t.Fatalf("port calls %d, emits %+v", h.portCalls, h.emits)
	}
}

func TestKeyedProcessState(t *testing.T) {
	sdk.Reset()
	sdk.KeyedProcess(func(r sdk.Record, ctx sdk.Context) error {
		count := ctx.State(0)
		v, _, err := count.Get()
		if err != nil {
			return err
		}
		n := v.Int() + 1
		if err := count.PutInt(n); err != nil {
			return err
		}
		last := ctx.State(1)
		prev, ok, err := last.GetRecord()
		if err != nil {
			return err
		}
		if ok {
			r.SetValue("prev", prev.Get("x"))
		}
		if err := last.PutRecord(sdk.NewRecord().SetValue("x", r.Get("x"))); err != nil {
			return err
		}
		if r.Bool("reset") {
			if err := count.Delete(); err != nil {
				return err
			}
		}
		ctx.Emit(r.SetInt("n", n).SetStr("key", ctx.Key().Str()))
		return nil
	})
	res := sdktest.Run(t, sdktest.Options{KeyBy: "k"},
		sdktest.JSON(`{"k":"a","x":1}`), sdktest.JSON(`{"k":"b","x":2}`),
		sdktest.JSON(`{"k":"a","x":3,"reset":true}`), sdktest.JSON(`{"k":"a","x":4}`))
	wantJSON(t, res, "",
		`{"k":"a","x":1,"n":1,"key":"a"}`,
		`{"k":"b","x":2,"n":1,"key":"b"}`,
		`{"k":"a","x":3,"reset":true,"prev":1,"n":2,"key":"a"}`,
		`{"k":"a","x":4,"prev":3,"n":1,"key":"a"}`)
	if v, ok := res.State(1, "a"); !ok || !reflect.DeepEqual(v, map[string]any{"x": int64(4)}) {
		t.Fatalf("state left: %v %v", v, ok)
	}
	if res.Describe["keyed"] != true {
		t.Fatal("a keyed process describes itself as keyed")
	}
}

func TestStateMisuse(t *testing.T) {
	cases := []struct {
		name  string
		keyed bool
		slot  int
		key   any
		text  string
	}{
		{"unkeyed operator", false, 0, "k", "record 0: keyed state is only for KeyedProcess and Reduce"},
		{"no key", true, 0, nil, "record 0: keyed state needs a keyed input: the record has no key"},
		{"bad slot", true, -1, "k", "record 0: state slot -1 outside [0, 1024)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sdk.Reset()
			fn := func(r sdk.Record, ctx sdk.Context) error { return ctx.State(c.slot).PutInt(1) }
			if c.keyed {
				sdk.KeyedProcess(fn)
			} else {
				sdk.Process(fn)
			}
			_, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{}`).WithKey(c.key))
			wantCallError(t, err, "sluice_process", abi.StatusState, c.text)
		})
	}
}

func TestReduceKeepsAccumulatorPerKey(t *testing.T) {
	sdk.Reset()
	sdk.Reduce(func(acc, r sdk.Record) (sdk.Record, error) {
		return acc.SetInt("sum", acc.Int("sum")+r.Int("sum")), nil
	})
	res := sdktest.Run(t, sdktest.Options{KeyBy: "k", BatchSize: 2},
		sdktest.JSON(`{"k":"a","sum":1}`).WithTime(1), sdktest.JSON(`{"k":"b","sum":10}`).WithTime(2),
		sdktest.JSON(`{"k":"a","sum":2}`).WithTime(3), sdktest.JSON(`{"k":"a","sum":3}`).WithTime(4))
	wantJSON(t, res, "", `{"k":"a","sum":1}`, `{"k":"b","sum":10}`, `{"k":"a","sum":3}`, `{"k":"a","sum":6}`)
	last := res.Main()[3]
	if last.Key != "a" || last.Time != 4 {
		t.Fatalf("the result carries the input's key and time: %+v", last)
	}
	if v, _ := res.State(0, "b"); !reflect.DeepEqual(v, map[string]any{"k": "b", "sum": int64(10)}) {
		t.Fatalf("state of b: %v", v)
	}
}

func TestReduceNeedsAKey(t *testing.T) {
	sdk.Reset()
	sdk.Reduce(func(acc, r sdk.Record) (sdk.Record, error) { return acc, nil })
	_, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{}`))
	wantCallError(t, err, "sluice_process", abi.StatusState, "record 0: reduce needs a keyed input: the record has no key")
}

func TestCoMapByPort(t *testing.T) {
	sdk.Reset()
	tag := func(s string) func(sdk.Record) (sdk.Record, error) {
		return func(r sdk.Record) (sdk.Record, error) { return r.SetStr("from", s), nil }
	}
	sdk.CoMap(tag("one"), tag("two"))
	res := sdktest.Run(t, sdktest.Options{},
		sdktest.JSON(`{"i":1}`), sdktest.JSON(`{"i":2}`).OnPort(1), sdktest.JSON(`{"i":3}`))
	wantJSON(t, res, "", `{"i":1,"from":"one"}`, `{"i":2,"from":"two"}`, `{"i":3,"from":"one"}`)
}

func TestSecondPortRefusedBySingleInputKinds(t *testing.T) {
	sdk.Reset()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return r, nil })
	_, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{}`).OnPort(1))
	wantCallError(t, err, "sluice_process", abi.StatusUnsupported, "sluice_process: a map has no input port 1")
}

func TestPartitioner(t *testing.T) {
	sdk.Reset()
	sdk.Partitioner(func(k sdk.Key, n int) int {
		if k.Str() == "out" {
			return n
		}
		h, _ := k.Hash()
		return int(uint32(h) % uint32(n))
	})
	res := sdktest.Run(t, sdktest.Options{Channels: 3},
		sdktest.JSON(`{}`).WithKey("a"), sdktest.JSON(`{}`).WithKey(int64(7)), sdktest.JSON(`{}`).WithKey("out"))
	// "a".hashCode() == 97; 97 % 3 == 1
	if !reflect.DeepEqual(res.Channels, []int{1, 1, 3}) {
		t.Fatalf("channels %v (an out-of-range index is passed through for the host to report)", res.Channels)
	}
}

func TestKeySelector(t *testing.T) {
	sdk.Reset()
	sdk.KeySelector(func(r sdk.Record) (sdk.Key, error) {
		if r.Has("id") {
			return sdk.IntKey(r.Int("id")), nil
		}
		return r.Get("country").Key(), nil
	})
	res := sdktest.Run(t, sdktest.Options{}, sdktest.JSON(`{"country":"NL"}`), sdktest.JSON(`{"id":12}`))
	if !reflect.DeepEqual(res.Keys, []any{"NL", int64(12)}) {
		t.Fatalf("keys %v", res.Keys)
	}
	_, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{"x":1}`))
	wantCallError(t, err, "sluice_process", abi.StatusUser, "record 0: key selector returned a nil key")
}

func TestCallsThatDoNotFitTheKind(t *testing.T) {
	sdk.Reset()
	sdk.Partitioner(func(sdk.Key, int) int { return 0 })
	h := newRecHost()
	if st := h.process(0, nil, 0); st != abi.StatusUnsupported {
		t.Fatalf("process on a partitioner: %v", st)
	}
	sdk.Reset()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return r, nil })
	if st := abi.Status(hostcallPartition(nil, 0, 2)); st != abi.StatusUnsupported {
		t.Fatalf("partition on a map: %v", st)
	}
	sdk.Reset()
	if st := h.process(0, nil, 0); st != abi.StatusUnsupported || !strings.HasPrefix(h.text, "no operator registered") {
		t.Fatalf("no operator: %v %q", st, h.text)
	}
}

func TestOneOperatorPerPlugin(t *testing.T) {
	sdk.Reset()
	sdk.Filter(func(sdk.Record) (bool, error) { return true, nil })
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "a filter is already registered") {
			t.Fatalf("recovered %v", v)
		}
	}()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return r, nil })
}

func TestMapMustReturnARecord(t *testing.T) {
	sdk.Reset()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return sdk.Record{}, nil })
	_, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{}`))
	wantCallError(t, err, "sluice_process", abi.StatusUser, "record 0: map returned the zero Record")
}

func TestErrorsAndPanicsBecomeStatuses(t *testing.T) {
	cases := []struct {
		name string
		fn   func(sdk.Record) (bool, error)
		st   abi.Status
		text string
	}{
		{"user error", func(sdk.Record) (bool, error) { return false, errors.New("bad amount") }, abi.StatusUser, "record 1: bad amount"},
		{"chosen status", func(sdk.Record) (bool, error) { return false, &sdk.Error{Status: abi.StatusLimit, Text: "too big"} }, abi.StatusLimit, "record 1: too big"},
		{"panic", func(sdk.Record) (bool, error) { panic("boom") }, abi.StatusUser, "record 1: panic: boom" + at(0, "TestErrorsAndPanicsBecomeStatuses.func3")},
		{"runtime error", func(r sdk.Record) (bool, error) { var m map[string]int; m["x"] = 1; return true, nil }, abi.StatusUser, "record 1: panic: assignment to entry in nil map" + at(0, "TestErrorsAndPanicsBecomeStatuses.func4")},
		// a panic in the standard library or the SDK is placed at the
		// plugin's call
		{"library panic", func(r sdk.Record) (bool, error) { return strings.Repeat("x", int(-r.Int("i"))) == "", nil }, abi.StatusUser, "record 1: panic: strings: negative Repeat count" + at(0, "TestErrorsAndPanicsBecomeStatuses.func5")},
		{"sdk panic", func(r sdk.Record) (bool, error) { r.SetRaw("x", nil); return true, nil }, abi.StatusUser, "record 1: panic: sluice sdk: SetRaw(x): not exactly one msgpack value" + at(0, "TestErrorsAndPanicsBecomeStatuses.func6")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sdk.Reset()
			sdk.Filter(func(r sdk.Record) (bool, error) {
				if r.Int("i") == 0 {
					return true, nil
				}
				return c.fn(r)
			})
			_, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{"i":0}`), sdktest.JSON(`{"i":1}`))
			wantCallError(t, err, "sluice_process", c.st, c.text)
		})
	}
}

// A failed call emits nothing, and leaves nothing behind for the next.
func TestFailedBatchEmitsNothing(t *testing.T) {
	sdk.Reset()
	sdk.Filter(func(r sdk.Record) (bool, error) {
		if r.Bool("fail") {
			return false, errors.New("fail")
		}
		return true, nil
	})
	h := newRecHost()
	ok := abi.AppendEnvelope(nil, 0, false, nil, []byte{0x80})
	bad := abi.AppendEnvelope(nil, 0, false, nil, []byte{0x81, 0xa4, 'f', 'a', 'i', 'l', 0xc3})
	if st := h.process(0, append(append([]byte{}, ok...), bad...), 2); st != abi.StatusUser || len(h.emits) != 0 {
		t.Fatalf("status %v, emits %d", st, len(h.emits))
	}
	if st := h.process(0, ok, 1); st != abi.StatusOK || len(h.emits) != 1 || h.emits[0].count != 1 || string(h.emits[0].buf) != string(ok) {
		t.Fatalf("status %v, emits %+v", st, h.emits)
	}
}

func TestMalformedBatch(t *testing.T) {
	sdk.Reset()
	sdk.Filter(func(sdk.Record) (bool, error) { return true, nil })
	h := newRecHost()
	rec := abi.AppendEnvelope(nil, 0, false, nil, []byte{0x80})
	cases := map[string]struct {
		batch []byte
		count int32
	}{
		"fewer records than count": {rec, 2},
		"trailing bytes":           {append(append([]byte{}, rec...), 0xc0), 1},
		"not an envelope":          {[]byte{0x92, 0xc0, 0xc0}, 1},
		"truncated":                {rec[:len(rec)-1], 1},
		"negative count":           {nil, -1},
	}
	for name, c := range cases {
		if st := h.process(0, c.batch, c.count); st != abi.StatusMalformed || len(h.emits) != 0 {
			t.Errorf("%s: status %v, text %q, emits %d", name, st, h.text, len(h.emits))
		}
	}
}

func TestEmitRefusedByHost(t *testing.T) {
	sdk.Reset()
	sdk.Filter(func(sdk.Record) (bool, error) { return true, nil })
	h := newRecHost()
	h.emitSt = int32(abi.StatusLimit)
	st := h.process(0, abi.AppendEnvelope(nil, 0, false, nil, []byte{0x80}), 1)
	if st != abi.StatusLimit || h.text != "emit on port 0: limit reached" {
		t.Fatalf("status %v, text %q", st, h.text)
	}
}

func TestNilFunctionsRefusedAtRegistration(t *testing.T) {
	sdk.Reset()
	defer func() {
		if v := recover(); v != "sluice sdk: CoMap needs a non-nil function" {
			t.Fatalf("recovered %v", v)
		}
	}()
	sdk.CoMap(func(r sdk.Record) (sdk.Record, error) { return r, nil }, nil)
}

func TestLongErrorTextCutOnACharacter(t *testing.T) {
	sdk.Reset()
	// "record 0: x" is 11 bytes, so byte 4096 falls inside an é.
	sdk.Filter(func(sdk.Record) (bool, error) { return false, errors.New("x" + strings.Repeat("é", 3000)) })
	_, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{}`))
	var ce *sdktest.CallError
	if !errors.As(err, &ce) || len(ce.Text) != abi.MaxErrorText-1 || !strings.HasSuffix(ce.Text, "é") {
		t.Fatalf("%d bytes, ends %q", len(ce.Text), ce.Text[len(ce.Text)-4:])
	}
}

// A call whose output passes the SDK's 1 MiB flush size is handed to the
// host in several emits, not held to the end of the call, and reaches it
// whole and in order.
func TestLargeOutputIsFlushedEarlyWholeAndInOrder(t *testing.T) {
	sdk.Reset()
	pad := strings.Repeat("x", 1000)
	sdk.FlatMap(func(r sdk.Record, out sdk.Emitter) error {
		for i := 0; i < 3000; i++ { // about 3 MB
			out.Emit(sdk.NewRecord().SetInt("i", int64(i)).SetStr("pad", pad))
		}
		return nil
	})
	h := newRecHost()
	if st := openRaw([]byte{0x80}); st != 0 {
		t.Fatalf("open: %d %s", st, h.text)
	}
	if st := h.process(0, abi.AppendEnvelope(nil, 0, false, nil, []byte{0x80}), 1); st != abi.StatusOK {
		t.Fatalf("status %v: %s", st, h.text)
	}
	if len(h.emits) < 3 {
		t.Fatalf("%d emits for about 3 MB of output, want one at least every MiB", len(h.emits))
	}
	i := int64(0)
	for _, e := range h.emits {
		if e.port != 0 || len(e.buf) > 1<<20+2048 {
			t.Fatalf("an emit of %d bytes on port %d", len(e.buf), e.port)
		}
		rd := abi.NewReader(e.buf, int(e.count))
		for rd.Next() {
			raw, _, _ := abi.MapField(rd.Record().Value, "i")
			if n, err := abi.ReadInt(raw); err != nil || n != i {
				t.Fatalf("record %d has i = %d (%v)", i, n, err)
			}
			i++
		}
		if rd.Err() != nil {
			t.Fatal(rd.Err())
		}
	}
	if i != 3000 {
		t.Fatalf("%d records reached the host, want 3000", i)
	}
}
