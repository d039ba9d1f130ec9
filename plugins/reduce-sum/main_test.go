package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func TestRunningSumPerKey(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{KeyBy: "account", BatchSize: 2}, sdktest.JSONLines(`
{"account":"a","amount":10,"note":"first"}
{"account":"b","amount":1}
{"account":"a","amount":5,"note":"second"}
{"account":"a","amount":2.5}
{"account":"b"}
`)...)
	want := []string{
		`{"account":"a","amount":10,"note":"first"}`,
		`{"account":"b","amount":1}`,
		`{"account":"a","amount":15,"note":"first"}`,
		`{"account":"a","amount":17.5,"note":"first"}`,
		`{"account":"b","amount":1}`,
	}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if st, _ := res.State(0, "a"); !reflect.DeepEqual(st, map[string]any{"account": "a", "amount": 17.5, "note": "first"}) {
		t.Fatalf("state of a: %v", st)
	}
	if res.Describe["kind"] != "reduce" || res.Describe["keyed"] != true {
		t.Fatalf("describe %v", res.Describe)
	}
}

func TestConfiguredField(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{KeyBy: "k", Config: map[string]any{"field": "n"}},
		sdktest.JSON(`{"k":1,"n":2,"amount":100}`), sdktest.JSON(`{"k":1,"n":3,"amount":100}`))
	if got := res.JSON("")[1]; got != `{"k":1,"n":5,"amount":100}` {
		t.Fatalf("got %s", got)
	}
}

func TestNeedsAKeyedInput(t *testing.T) {
	_, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{"amount":1}`))
	if err == nil || err.Error() != "sluice_process: state error: record 0: reduce needs a keyed input: the record has no key" {
		t.Fatalf("%v", err)
	}
}

func TestModule(t *testing.T) { sdktest.CheckModule(t, ".") }
