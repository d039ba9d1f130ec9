package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

var readings = sdktest.JSONLines(`
{"sensor":"a","value":21.5}
{"sensor":"b","value":30}
{"sensor":"c","value":30.5}
{"sensor":"d","value":45}
{"sensor":"e"}
`)

func TestDefaultThreshold(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{}, readings...)
	if n := len(res.Main()); n != 5 {
		t.Fatalf("every reading reaches the main output, got %d", n)
	}
	want := []string{`{"sensor":"c","value":30.5}`, `{"sensor":"d","value":45}`}
	if got := res.JSON("alerts"); !reflect.DeepEqual(got, want) {
		t.Fatalf("alerts %q", got)
	}
	if out := res.Describe["outputs"]; !reflect.DeepEqual(out, []any{"alerts"}) {
		t.Fatalf("describe outputs %v", out)
	}
}

func TestConfiguredThresholdAndField(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{Config: map[string]any{"threshold": "20", "field": "temp"}},
		sdktest.JSON(`{"temp":25}`), sdktest.JSON(`{"temp":15,"value":99}`))
	if got := res.JSON("alerts"); !reflect.DeepEqual(got, []string{`{"temp":25}`}) {
		t.Fatalf("alerts %q", got)
	}
}

func TestBadThreshold(t *testing.T) {
	_, err := sdktest.Try(sdktest.Options{Config: map[string]any{"threshold": "hot"}})
	if err == nil || err.Error() != "sluice_open: config error: config threshold: want a number, got \"hot\"" {
		t.Fatalf("%v", err)
	}
}

func TestModule(t *testing.T) { sdktest.CheckModule(t, ".") }
