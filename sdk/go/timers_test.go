package sdk_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

// TestTimers: a record's "op" registers or deletes timers of its key; a
// timer that fires emits its domain, time, key, the watermark and the
// key's state, stamped with its time when it is an event-time timer.
func TestTimers(t *testing.T) {
	sdk.Reset()
	sdk.KeyedProcess(func(r sdk.Record, ctx sdk.Context) error {
		ts, _ := r.Time()
		tm := ctx.Timers()
		if got := tm.CurrentWatermark(); got != math.MinInt64 && r.Str("op") == "first" {
			t.Errorf("watermark before the first: %d", got)
		}
		if err := ctx.State(0).PutStr(r.Str("op")); err != nil {
			return err
		}
		switch r.Str("op") {
		case "first", "again":
			if err := tm.RegisterEventTime(ts + 10); err != nil {
				return err
			}
			return tm.RegisterEventTime(ts + 10) // once
		case "proc":
			return tm.RegisterProcessingTime(500)
		case "delete":
			return tm.DeleteEventTime(ts + 10 - 1)
		}
		return nil
	}).OnTimer(func(tmr sdk.Timer, ctx sdk.Context) error {
		v, _, err := ctx.State(0).Get()
		if err != nil {
			return err
		}
		ctx.Emit(sdk.NewRecord().SetBool("event", tmr.Domain == sdk.EventTime).SetInt("at", tmr.Time).
			SetStr("key", ctx.Key().Str()).SetInt("wm", ctx.Timers().CurrentWatermark()).SetStr("last-op", v.Str()))
		return nil
	})
	res := sdktest.Run(t, sdktest.Options{KeyBy: "k"},
		sdktest.JSON(`{"k":"a","op":"first"}`).WithTime(100),
		sdktest.JSON(`{"k":"b","op":"first"}`).WithTime(105),
		sdktest.JSON(`{"k":"b","op":"delete"}`).WithTime(106), // b's timer at 115
		sdktest.Watermark(114),
		sdktest.JSON(`{"k":"c","op":"proc"}`).WithTime(120),
		sdktest.ProcessingTime(499),
		sdktest.ProcessingTime(500),
	)
	want := []string{
		`{"event":true,"at":110,"key":"a","wm":114,"last-op":"first"}`,
		`{"event":false,"at":500,"key":"c","wm":114,"last-op":"proc"}`,
	}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	if m := res.Main(); !m[0].HasTime || m[0].Time != 110 || m[1].HasTime {
		t.Errorf("times: %+v %+v, want 110 for the event-time timer and none for the processing-time one", m[0], m[1])
	}
}

// TestTimersNeedOnTimerAndAKey: timers without OnTimer are refused with
// what to do; OnTimer on an unkeyed process panics at registration.
func TestTimersNeedOnTimerAndAKey(t *testing.T) {
	sdk.Reset()
	sdk.KeyedProcess(func(r sdk.Record, ctx sdk.Context) error { return ctx.Timers().RegisterEventTime(1) })
	_, err := sdktest.Try(sdktest.Options{KeyBy: "k"}, sdktest.JSON(`{"k":"a"}`))
	if err == nil || !strings.Contains(err.Error(), "OnTimer") {
		t.Fatalf("timers without OnTimer: %v", err)
	}
	sdk.Reset()
	defer func() {
		if recover() == nil {
			t.Error("OnTimer on an unkeyed Process did not panic")
		}
		sdk.Reset()
	}()
	sdk.Process(func(sdk.Record, sdk.Context) error { return nil }).OnTimer(func(sdk.Timer, sdk.Context) error { return nil })
}
