package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func TestCountsRecords(t *testing.T) {
	count.n = 0
	res := sdktest.Run(t, sdktest.Options{}, sdktest.JSONLines(`
{"id":1}
{"id":2}
{"id":3}
`)...)
	want := []string{`{"id":1,"count":1}`, `{"id":2,"count":2}`, `{"id":3,"count":3}`}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestSnapshotRestore(t *testing.T) {
	a := counter{n: 5}
	b, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	c := counter{n: 2}
	if err := c.Restore(b); err != nil || c.n != 7 {
		t.Fatalf("restore 5 into 2: %d, %v", c.n, err)
	}
	if err := c.Restore([]byte{1}); err == nil {
		t.Fatal("a 1-byte snapshot restored")
	}
}

func TestModule(t *testing.T) { sdktest.CheckModule(t, ".") }
