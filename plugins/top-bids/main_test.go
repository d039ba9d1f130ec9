package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func TestHighestBidOfTheWindow(t *testing.T) {
	in := append([]sdktest.Record{sdktest.Window(0, 10000, int64(7))}, sdktest.JSONLines(`
{"auction":7,"bidder":1,"price":30}
{"auction":7,"bidder":2,"price":45.5}
{"auction":7,"bidder":3}
{"auction":7,"bidder":4,"price":45.5}
{"auction":7,"bidder":5,"price":12}
`)...)
	res := sdktest.Run(t, sdktest.Options{Config: map[string]any{"n": 3}}, in...)
	want := []string{
		`{"auction":7,"bidder":2,"price":45.5}`,
		`{"auction":7,"bidder":4,"price":45.5}`,
		`{"auction":7,"bidder":1,"price":30}`,
	}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if res.Describe["kind"] != "process-window" {
		t.Fatalf("describe %v", res.Describe)
	}
	one := sdktest.Run(t, sdktest.Options{}, in...)
	if got := one.JSON(""); !reflect.DeepEqual(got, want[:1]) {
		t.Fatalf("n 1: got %q", got)
	}
}

func TestAnEmptyCallIsMalformed(t *testing.T) {
	if _, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{"price":1}`)); err == nil {
		t.Fatal("a call without a window header passed")
	}
}

func TestModule(t *testing.T) { sdktest.CheckModule(t, ".") }
