package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func TestTagsBySource(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{},
		sdktest.JSON(`{"id":1}`),
		sdktest.JSON(`{"id":2,"source":"x","n":0}`).OnPort(1),
		sdktest.JSON(`{"id":3}`))
	want := []string{`{"id":1,"source":"first"}`, `{"id":2,"source":"second","n":0}`, `{"id":3,"source":"first"}`}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	if res.Describe["kind"] != "co-map" {
		t.Fatalf("describe %v", res.Describe)
	}
}

func TestModule(t *testing.T) { sdktest.CheckModule(t, ".") }
