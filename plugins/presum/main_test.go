package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func TestPartialsAtEndOfInput(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{BatchSize: 2}, sdktest.JSONLines(`
{"accountId":"a","amount":10,"note":"x"}
{"accountId":"b","amount":1}
{"accountId":"a","amount":5}
{"accountId":"a","amount":2.5}
`)...)
	want := []string{`{"accountId":"a","amount":17.5}`, `{"accountId":"b","amount":1}`}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestFlushEvery(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{Config: map[string]any{"flush-every": 2, "key": "k", "field": "n"}}, sdktest.JSONLines(`
{"k":"a","n":1}
{"k":"a","n":2}
{"k":"a","n":4}
`)...)
	want := []string{`{"k":"a","n":3}`, `{"k":"a","n":4}`}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestModuleExports(t *testing.T) { sdktest.CheckModule(t, ".") }
