package sdktest_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func identity() {
	sdk.Reset()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return r, nil })
}

func TestInputsAndOutputs(t *testing.T) {
	identity()
	res := sdktest.Run(t, sdktest.Options{BatchSize: 2},
		sdktest.Map(map[string]any{"b": 1, "a": "x"}).WithKey([]any{"k", 1}).WithTime(5),
		sdktest.JSON(`{"b":1,"a":"x"}`),
		sdktest.JSONLines("{\"n\":1}\n\n{\"n\":2}\n")[1])
	want := []string{`{"a":"x","b":1}`, `{"b":1,"a":"x"}`, `{"n":2}`}
	if got := res.JSON(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	first := res.Main()[0]
	if !reflect.DeepEqual(first.Key, []any{"k", int64(1)}) || first.Time != 5 || !first.HasTime || first.Port != 0 || first.Tag != "" {
		t.Fatalf("first %+v", first)
	}
	if v := res.Values(""); !reflect.DeepEqual(v[2], map[string]any{"n": int64(2)}) {
		t.Fatalf("values %v", v)
	}
}

func TestKeyBy(t *testing.T) {
	identity()
	res := sdktest.Run(t, sdktest.Options{KeyBy: "c"}, sdktest.JSON(`{"c":"NL"}`).WithKey("ignored"))
	if k := res.Main()[0].Key; k != "NL" {
		t.Fatalf("key %v", k)
	}
	if _, err := sdktest.Try(sdktest.Options{KeyBy: "c"}, sdktest.JSON(`{}`)); err == nil || !strings.Contains(err.Error(), "no field c") {
		t.Fatalf("missing KeyBy field: %v", err)
	}
}

func TestBadInputFailsTheRun(t *testing.T) {
	identity()
	if _, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{"a":`)); err == nil {
		t.Fatal("malformed JSON must fail")
	}
	if _, err := sdktest.Try(sdktest.Options{}, sdktest.Map(map[string]any{"a": struct{}{}})); err == nil {
		t.Fatal("an unencodable value must fail")
	}
}

func TestCallErrorText(t *testing.T) {
	sdk.Reset()
	sdk.Filter(func(sdk.Record) (bool, error) { return false, errors.New("nope") })
	_, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{}`))
	if err == nil || err.Error() != "sluice_process: user error: record 0: nope" {
		t.Fatalf("%v", err)
	}
	var ce *sdktest.CallError
	if !errors.As(err, &ce) || ce.Status != abi.StatusUser {
		t.Fatalf("%#v", err)
	}
}

// Batches split at BatchSize and wherever the input port changes: the
// index a failing record reports is its index in its batch.
func TestBatching(t *testing.T) {
	in := []sdktest.Record{sdktest.JSON(`{}`), sdktest.JSON(`{}`), sdktest.JSON(`{}`), sdktest.JSON(`{}`).OnPort(1), sdktest.JSON(`{}`)}
	var idx []string
	for i := range in {
		sdk.Reset()
		seen := 0
		fail := func(r sdk.Record) (sdk.Record, error) {
			if seen++; seen == i+1 {
				return r, errors.New("here")
			}
			return r, nil
		}
		sdk.CoMap(fail, fail)
		_, err := sdktest.Try(sdktest.Options{BatchSize: 2}, in...)
		var ce *sdktest.CallError
		if !errors.As(err, &ce) {
			t.Fatalf("%v", err)
		}
		idx = append(idx, strings.TrimSuffix(ce.Text, ": here"))
	}
	want := []string{"record 0", "record 1", "record 0", "record 0", "record 0"}
	if !reflect.DeepEqual(idx, want) {
		t.Fatalf("got %q", idx)
	}
}

func TestPartitionerChannelsDefault(t *testing.T) {
	sdk.Reset()
	sdk.Partitioner(func(_ sdk.Key, n int) int { return n - 1 })
	res := sdktest.Run(t, sdktest.Options{}, sdktest.JSON(`{}`).WithKey("a"), sdktest.JSON(`{}`).WithKey("b"))
	if !reflect.DeepEqual(res.Channels, []int{3, 3}) {
		t.Fatalf("channels %v", res.Channels)
	}
}

func TestStateOfMissingKey(t *testing.T) {
	identity()
	res := sdktest.Run(t, sdktest.Options{})
	if _, ok := res.State(0, "none"); ok {
		t.Fatal("no state was written")
	}
}
