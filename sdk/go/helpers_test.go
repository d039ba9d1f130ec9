package sdk_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

// wantJSON checks the JSON of the records emitted to tag.
func wantJSON(t *testing.T, res *sdktest.Result, tag string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := res.JSON(tag); !reflect.DeepEqual(got, want) {
		t.Fatalf("output %q:\n got %q\nwant %q", tag, got, want)
	}
}

// wantCallError checks that err is a *sdktest.CallError with status st
// whose text is text.
func wantCallError(t *testing.T, err error, export string, st abi.Status, text string) {
	t.Helper()
	var ce *sdktest.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("want a call error, got %v", err)
	}
	if ce.Export != export || ce.Status != st || ce.Text != text {
		t.Fatalf("got %s/%v/%q, want %s/%v/%q", ce.Export, ce.Status, ce.Text, export, st, text)
	}
}
