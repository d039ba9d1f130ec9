//go:build !wasip1

package sdk_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

// A process-window function gets the window of its call's header record
// (bounds, key, max timestamp) and every other record of the call, in
// order, each its own view (they may be kept side by side in the call);
// what it emits is the call's output.
func TestProcessWindowGetsTheWindowAndItsRecords(t *testing.T) {
	sdk.Reset()
	var got sdk.Window
	sdk.ProcessWindow(func(w sdk.Window, rs []sdk.Record, out sdk.Emitter) error {
		got = w
		var names []string
		sum := int64(0)
		for _, r := range rs {
			names = append(names, r.Str("name"))
			sum += r.Int("v")
		}
		out.Emit(sdk.NewRecord().SetStr("names", strings.Join(names, ",")).SetInt("sum", sum))
		out.Emit(rs[0]) // a record of the window as it came
		return nil
	})
	res := sdktest.Run(t, sdktest.Options{},
		sdktest.Window(-10, 20, "k"),
		sdktest.JSON(`{"name":"a","v":1}`).WithKey("k").WithTime(-3),
		sdktest.JSON(`{"name":"b","v":2}`).WithKey("k").WithTime(5),
		sdktest.JSON(`{"name":"c","v":4}`).WithKey("k").WithTime(19))
	wantJSON(t, res, "", `{"names":"a,b,c","sum":7}`, `{"name":"a","v":1}`)
	if got.Start != -10 || got.End != 20 || got.MaxTimestamp() != 19 || got.Key().Str() != "k" {
		t.Fatalf("window %+v, key %q", got, got.Key().Str())
	}
	if res.Describe["kind"] != string(abi.KindProcessWindow) || res.Describe["keyed"] == true {
		t.Fatalf("describe %v", res.Describe)
	}
}

// A window of no records (a header alone) calls the function with none;
// a call without a header, or whose first record is no window, is
// malformed; the function's error names the window.
func TestProcessWindowHeaderAndErrors(t *testing.T) {
	sdk.Reset()
	calls := 0
	sdk.ProcessWindow(func(w sdk.Window, rs []sdk.Record, out sdk.Emitter) error {
		calls++
		if len(rs) > 0 && rs[0].Int("v") < 0 {
			return errString("negative")
		}
		return nil
	})
	if _, err := sdktest.Try(sdktest.Options{}, sdktest.Window(0, 5, nil)); err != nil || calls != 1 {
		t.Fatalf("a header alone: %v, %d calls", err, calls)
	}
	if _, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{"v":1}`)); err == nil || !strings.Contains(err.Error(), "malformed input") || !strings.Contains(err.Error(), "window header") {
		t.Fatalf("no header: %v", err)
	}
	_, err := sdktest.Try(sdktest.Options{}, sdktest.Window(0, 5, nil), sdktest.JSON(`{"v":-1}`))
	if err == nil || !strings.Contains(err.Error(), "window [0, 5): negative") {
		t.Fatalf("user error: %v", err)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
