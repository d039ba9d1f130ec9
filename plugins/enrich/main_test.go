package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func TestAddsConfigFields(t *testing.T) {
	cfg := map[string]any{"bank": "NBI", "region": "eu", "weight": 2, "tags": []any{"a", "b"}}
	res := sdktest.Run(t, sdktest.Options{Config: cfg},
		sdktest.JSON(`{"id":1,"amount":5}`),
		sdktest.JSON(`{"region":"us","id":2}`))
	want := []string{
		`{"id":1,"amount":5,"bank":"NBI","region":"eu","tags":["a","b"],"weight":2}`,
		`{"region":"eu","id":2,"bank":"NBI","tags":["a","b"],"weight":2}`,
	}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestNoConfigChangesNothing(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{}, sdktest.JSON(`{"id":1}`))
	if got := res.JSON(""); !reflect.DeepEqual(got, []string{`{"id":1}`}) {
		t.Fatalf("got %q", got)
	}
}

func TestModule(t *testing.T) { sdktest.CheckModule(t, ".") }
