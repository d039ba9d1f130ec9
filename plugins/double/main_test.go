package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func TestDoublesPositiveAmounts(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{}, sdktest.JSONLines(`
{"id":1,"amount":5,"currency":"EUR"}
{"id":2,"amount":0}
{"id":3,"amount":-3}
{"id":4}
{"id":5,"amount":0.5}
{"id":6,"amount":12.75}
{"id":7,"amount":"9"}
{"id":8,"amount":100}
`)...)
	// 0.5 truncates to 0 and "9" is not a number: both dropped; 12.75
	// truncates to 12 and is written back as the int 24; 100 doubled
	// needs a wider int than it had.
	want := []string{`{"id":1,"amount":10,"currency":"EUR"}`, `{"id":6,"amount":24}`, `{"id":8,"amount":200}`}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	if res.Describe["kind"] != "flat-map" || res.Describe["name"] != "double" {
		t.Fatalf("describe %v", res.Describe)
	}
}

func TestModule(t *testing.T) { sdktest.CheckModule(t, ".") }
