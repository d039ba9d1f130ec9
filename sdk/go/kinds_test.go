package sdk_test

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

// TestListAndMapState drives every ListState and MapState call through the
// SDK's test host: a record's "op" says what to do under its key.
func TestListAndMapState(t *testing.T) {
	sdk.Reset()
	sdk.KeyedProcess(func(r sdk.Record, ctx sdk.Context) error {
		l, m := ctx.ListState(0), ctx.MapState(1)
		switch r.Str("op") {
		case "add":
			if err := l.AddStr(r.Str("v")); err != nil {
				return err
			}
			if err := m.PutInt(r.Str("v"), r.Int("n")); err != nil {
				return err
			}
		case "del":
			if err := m.Delete(r.Str("v")); err != nil {
				return err
			}
		case "keep-last":
			vals, err := l.Get()
			if err != nil {
				return err
			}
			if err := l.Update(vals[len(vals)-1:]); err != nil {
				return err
			}
		case "clear":
			if err := l.Clear(); err != nil {
				return err
			}
			if err := m.Clear(); err != nil {
				return err
			}
		}
		vals, err := l.Get()
		if err != nil {
			return err
		}
		ents, err := m.Entries()
		if err != nil {
			return err
		}
		has, err := m.Contains("x")
		if err != nil {
			return err
		}
		s := ""
		for _, v := range vals {
			s += v.Str() + ","
		}
		e := ""
		for _, en := range ents {
			e += en.Key + "=" + string(rune('0'+en.Value.Int())) + ","
		}
		ctx.Emit(sdk.NewRecord().SetStr("list", s).SetStr("map", e).SetBool("x", has))
		return nil
	}).Declare(sdk.StateDecl{Slot: 0, Kind: "list"}, sdk.StateDecl{Slot: 1, Kind: "map"})
	res := sdktest.Run(t, sdktest.Options{KeyBy: "k"},
		sdktest.JSON(`{"k":"a","op":"add","v":"y","n":1}`),
		sdktest.JSON(`{"k":"a","op":"add","v":"x","n":2}`),
		sdktest.JSON(`{"k":"b","op":"add","v":"z","n":3}`),
		sdktest.JSON(`{"k":"a","op":"add","v":"y","n":4}`),
		sdktest.JSON(`{"k":"a","op":"del","v":"x"}`),
		sdktest.JSON(`{"k":"a","op":"keep-last"}`),
		sdktest.JSON(`{"k":"b","op":"clear"}`))
	wantJSON(t, res, "",
		`{"list":"y,","map":"y=1,","x":false}`,
		`{"list":"y,x,","map":"x=2,y=1,","x":true}`,
		`{"list":"z,","map":"z=3,","x":false}`,
		`{"list":"y,x,y,","map":"x=2,y=4,","x":true}`,
		`{"list":"y,x,y,","map":"y=4,","x":false}`,
		`{"list":"y,","map":"y=4,","x":false}`,
		`{"list":"","map":"","x":false}`)
	if l, ok := res.List(0, "a"); !ok || !reflect.DeepEqual(l, []any{"y"}) {
		t.Fatalf("list left for a: %v %v", l, ok)
	}
	if _, ok := res.Map(1, "b"); ok {
		t.Fatal("b's map was cleared")
	}
	want := []any{map[string]any{"slot": int64(0), "kind": "list"}, map[string]any{"slot": int64(1), "kind": "map"}}
	if !reflect.DeepEqual(res.Describe["state"], want) {
		t.Fatalf("describe state: %#v", res.Describe["state"])
	}
}

// TestListStateMisuse: a slot used as a value and then as a list is
// refused with the state status.
func TestListStateMisuse(t *testing.T) {
	sdk.Reset()
	sdk.KeyedProcess(func(r sdk.Record, ctx sdk.Context) error {
		if err := ctx.State(0).PutInt(1); err != nil {
			return err
		}
		return ctx.ListState(0).AddInt(1)
	})
	_, err := sdktest.Try(sdktest.Options{KeyBy: "k"}, sdktest.JSON(`{"k":"a"}`))
	wantCallError(t, err, "sluice_process", abi.StatusState, "record 0: state_list_append: state error")
}
