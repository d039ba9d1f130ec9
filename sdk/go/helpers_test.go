package sdk_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
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

// at is the location the SDK appends to the text of a panic dl lines below
// the caller's line (dl < 0: above) in function fn of this package, e.g.
// " (at operators_test.go:12 in go_test.TestX.func1)".
func at(dl int, fn string) string {
	_, file, line, _ := runtime.Caller(1)
	return " (at " + filepath.Base(file) + ":" + strconv.Itoa(line+dl) + " in go_test." + fn + ")"
}
