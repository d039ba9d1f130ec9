//go:build !wasip1

// The SDK tests drive operators through the native fake host.

package sdk_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/internal/mpvalue"
	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func passAll() {
	sdk.Filter(func(sdk.Record) (bool, error) { return true, nil })
}

func TestOpenContext(t *testing.T) {
	sdk.Reset()
	passAll()
	var got sdk.OpenContext
	var typed []any
	sdk.OnOpen(func(ctx sdk.OpenContext) error {
		got = ctx
		raw, ok := ctx.ConfigRaw("nested")
		typed = []any{
			ctx.ConfigString("bank", "none"), ctx.ConfigString("missing", "def"), ctx.ConfigString("n", ""),
			ctx.ConfigInt("n", 0), ctx.ConfigInt("whole", 0), ctx.ConfigInt("text", 0), ctx.ConfigInt("missing", 30),
			ctx.ConfigFloat("f", 0), ctx.ConfigFloat("n", 0), ctx.ConfigFloat("text", 0),
			ctx.ConfigBool("flag", false), ctx.ConfigBool("yes", false),
			ok, len(raw),
		}
		return nil
	})
	cfg := map[string]any{"bank": "NBI", "n": 5, "whole": 3.0, "text": " 12 ", "f": 1.5, "flag": true, "yes": "true",
		"nested": map[string]any{"a": []any{1, "x"}}}
	sdktest.Run(t, sdktest.Options{Config: cfg, Subtask: 2, Parallelism: 4, MaxParallelism: 64})
	want := []any{"NBI", "def", "5", int64(5), int64(3), int64(12), int64(30), 1.5, 5.0, 12.0, true, true, true, 7}
	if !reflect.DeepEqual(typed, want) {
		t.Fatalf("getters:\n got %v\nwant %v", typed, want)
	}
	if got.Subtask != 2 || got.Parallelism != 4 || got.MaxParallelism != 64 {
		t.Fatalf("place in the job: %+v", got)
	}
	wantCfg := map[string]any{"bank": "NBI", "n": int64(5), "whole": 3.0, "text": " 12 ", "f": 1.5, "flag": true, "yes": "true",
		"nested": map[string]any{"a": []any{int64(1), "x"}}}
	if !reflect.DeepEqual(got.Config, wantCfg) {
		t.Fatalf("config %v", got.Config)
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		cfg  map[string]any
		hook func(sdk.OpenContext) error
		st   abi.Status
		text string
	}{
		{"wrong types", map[string]any{"t": "hot", "b": 2, "s": []any{}},
			func(c sdk.OpenContext) error {
				c.ConfigInt("t", 0)
				c.ConfigBool("b", false)
				c.ConfigString("s", "")
				c.ConfigFloat("ok", 1)
				return nil
			}, abi.StatusConfig, `config t: want an integer (int64), got "hot"; config b: want a boolean, got 2; config s: want a string, got a list`},
		{"fraction for an int", map[string]any{"t": 1.5},
			func(c sdk.OpenContext) error { c.ConfigInt("t", 0); return nil }, abi.StatusConfig, "config t: want an integer (int64), got 1.5"},
		// a uint64 past int64's range decodes (an unread key must not
		// fail open) and is refused by name where it does not fit
		{"uint64 read as an int", map[string]any{"t": uint64(1 << 63), "note": uint64(1<<64 - 1)},
			func(c sdk.OpenContext) error { c.ConfigInt("t", 0); return nil }, abi.StatusConfig, "config t: want an integer (int64), got 9223372036854775808"},
		{"hook error", nil,
			func(sdk.OpenContext) error { return errors.New("no bank") }, abi.StatusConfig, "open: no bank"},
		{"hook error with a status", nil,
			func(sdk.OpenContext) error { return &sdk.Error{Status: abi.StatusUser, Text: "x"} }, abi.StatusUser, "open: x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sdk.Reset()
			passAll()
			sdk.OnOpen(c.hook)
			_, err := sdktest.Try(sdktest.Options{Config: c.cfg})
			wantCallError(t, err, "sluice_open", c.st, c.text)
		})
	}
}

// TestConfigTakesUint64: a config holding an unsigned integer past
// int64's range opens (it failed open whichever key the plugin read),
// and the getters that can hold it take it.
func TestConfigTakesUint64(t *testing.T) {
	sdk.Reset()
	passAll()
	var s string
	var f float64
	var raw any
	sdk.OnOpen(func(c sdk.OpenContext) error {
		s, f, raw = c.ConfigString("big", ""), c.ConfigFloat("big", 0), c.Config["big"]
		return nil
	})
	if _, err := sdktest.Try(sdktest.Options{Config: map[string]any{"big": uint64(1<<64 - 1), "n": 2}}); err != nil {
		t.Fatal(err)
	}
	if s != "18446744073709551615" || f != 1<<64 || raw != uint64(1<<64-1) {
		t.Errorf("string %q, float %v, value %#v", s, f, raw)
	}
}

func TestOpenRefusesMalformedConfig(t *testing.T) {
	sdk.Reset()
	passAll()
	newRecHost()
	for name, cfg := range map[string][]byte{
		"not a map":      {0x91, 0x01},
		"non-string key": {0x81, 0x01, 0x01},
		"truncated":      {0x81, 0xa1},
	} {
		if st := abi.Status(openRaw(cfg)); st != abi.StatusConfig {
			t.Errorf("%s: status %v", name, st)
		}
	}
	if st := abi.Status(openRaw(nil)); st != abi.StatusOK {
		t.Errorf("an empty config (len 0) is an empty map: %v", st)
	}
}

func TestOnClose(t *testing.T) {
	sdk.Reset()
	passAll()
	closed := 0
	sdk.OnClose(func() error { closed++; return nil })
	sdktest.Run(t, sdktest.Options{}, sdktest.JSON(`{}`))
	if closed != 1 {
		t.Fatalf("closed %d times", closed)
	}
	sdk.OnClose(func() error { return errors.New("flush failed") })
	_, err := sdktest.Try(sdktest.Options{})
	wantCallError(t, err, "sluice_close", abi.StatusUser, "close: flush failed")
}

func TestDescribeDefaultName(t *testing.T) {
	sdk.Reset()
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return r, nil })
	res := sdktest.Run(t, sdktest.Options{})
	// The last element of the main package path; under go test it is this
	// package's ("go"), in a plugin its folder name.
	want := map[string]any{"kind": "map", "sdk": "go", "name": "go", "outputs": []any{}, "keyed": false}
	if !reflect.DeepEqual(res.Describe, want) {
		t.Fatalf("describe %v", res.Describe)
	}
}

func TestConfigEncodingRoundTrip(t *testing.T) {
	in := map[string]any{"s": "x", "i": int64(-300), "f": 0.25, "b": false, "n": nil, "a": []any{int64(1), "y"}, "bin": []byte{1, 2}}
	b, err := mpvalue.Encode(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := mpvalue.DecodeMap(b)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("%v %v", out, err)
	}
}

// ConfigValue is ConfigRaw's bytes as a Value: set on records with
// SetValue it gives what SetRaw gives, and a missing name is no Value.
func TestConfigValue(t *testing.T) {
	sdk.Reset()
	var nested, missing sdk.Value
	var ok, okMissing bool
	sdk.OnOpen(func(ctx sdk.OpenContext) error {
		nested, ok = ctx.ConfigValue("nested")
		missing, okMissing = ctx.ConfigValue("missing")
		raw, _ := ctx.ConfigRaw("nested")
		if string(nested.Raw()) != string(raw) {
			t.Errorf("ConfigValue % x, ConfigRaw % x", nested.Raw(), raw)
		}
		return nil
	})
	sdk.Map(func(r sdk.Record) (sdk.Record, error) {
		return r.SetValue("a", nested).SetRaw("b", nested.Raw()).SetValue("gone", missing), nil
	})
	res := sdktest.Run(t, sdktest.Options{Config: map[string]any{"nested": map[string]any{"x": []any{1, "y"}}}},
		sdktest.JSONLines(`{"id":1,"gone":true}`)...)
	if !ok || okMissing || missing.Exists() {
		t.Fatalf("ok %v, missing %v %v", ok, okMissing, missing.Exists())
	}
	if got := res.JSON(""); !reflect.DeepEqual(got, []string{`{"id":1,"a":{"x":[1,"y"]},"b":{"x":[1,"y"]}}`}) {
		t.Fatalf("got %q", got)
	}
}
