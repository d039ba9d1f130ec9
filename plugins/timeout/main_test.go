package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

// TestSilentKeys: Flink's CountWithTimeoutFunction. a's records at 1000
// and 4000 leave one timer that counts (14000: the one at 11000 finds a
// later record); b's at 2000 fires at 12000, once the watermark passes
// it; c's fires only at the end of input.
func TestSilentKeys(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{KeyBy: "k"},
		sdktest.JSON(`{"k":"a"}`).WithTime(1000),
		sdktest.JSON(`{"k":"b"}`).WithTime(2000),
		sdktest.JSON(`{"k":"a"}`).WithTime(4000),
		sdktest.Watermark(11_999), // a's first timer (11000) fires, and finds a later record
		sdktest.JSON(`{"k":"c"}`).WithTime(20_000),
		sdktest.Watermark(14_000), // b at 12000, a at 14000
	)
	want := []string{
		`{"key":"b","count":1,"last":2000,"message":"key b silent for 10 s"}`,
		`{"key":"a","count":2,"last":4000,"message":"key a silent for 10 s"}`,
		`{"key":"c","count":1,"last":20000,"message":"key c silent for 10 s"}`,
	}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	for i, ts := range []int64{12_000, 14_000, 30_000} {
		if r := res.Main()[i]; !r.HasTime || r.Time != ts {
			t.Errorf("output %d at %d (%v), want the timer's time %d", i, r.Time, r.HasTime, ts)
		}
	}
}

func TestTimeoutConfig(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{KeyBy: "k", Config: map[string]any{"timeout-ms": int64(1500)}},
		sdktest.JSON(`{"k":"a"}`).WithTime(0))
	want := []string{`{"key":"a","count":1,"last":0,"message":"key a silent for 1.5 s"}`}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	if _, err := sdktest.Try(sdktest.Options{KeyBy: "k", Config: map[string]any{"timeout-ms": int64(0)}}); err == nil {
		t.Fatal("timeout-ms 0 accepted")
	}
}

func TestModule(t *testing.T) { sdktest.CheckModule(t, ".") }
