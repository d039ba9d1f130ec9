package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func TestKeepsPositiveAmounts(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{}, sdktest.JSONLines(`
{"id":1,"amount":5}
{"id":2,"amount":0}
{"id":3,"amount":-3}
{"id":4}
{"id":5,"amount":0.5}
{"id":6,"amount":12.0}
{"id":7,"amount":"9"}
`)...)
	// 0.5 truncates to 0 and "9" is not a number: both dropped.
	want := []string{`{"id":1,"amount":5}`, `{"id":6,"amount":12.0}`}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	if res.Describe["kind"] != "filter" || res.Describe["name"] != "valid" {
		t.Fatalf("describe %v", res.Describe)
	}
}

func TestModule(t *testing.T) { sdktest.CheckModule(t, ".") }
