package main

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/sdk/go/sdktest"
)

func keyed(keys ...any) []sdktest.Record {
	var in []sdktest.Record
	for _, k := range keys {
		in = append(in, sdktest.JSON(`{}`).WithKey(k))
	}
	return in
}

func TestHotCountryOnChannelZero(t *testing.T) {
	// Java: "DE".hashCode() == 2177, "FR" == 2252, "BE" == 2115, "US" == 2718.
	res := sdktest.Run(t, sdktest.Options{Channels: 4}, keyed("NL", "DE", "FR", "BE", "US", "NL")...)
	want := []int{0, 1 + 2177%3, 1 + 2252%3, 1 + 2115%3, 1 + 2718%3, 0}
	if !reflect.DeepEqual(res.Channels, want) {
		t.Fatalf("got %v, want %v", res.Channels, want)
	}
}

func TestConfiguredHotCountry(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{Channels: 3, Config: map[string]any{"hot": "DE"}}, keyed("DE", "NL")...)
	if res.Channels[0] != 0 || res.Channels[1] == 0 {
		t.Fatalf("got %v", res.Channels)
	}
}

func TestNeverChannelZeroForOthers(t *testing.T) {
	keys := []any{"AT", "ES", "IT", "PL", "PT", "SE", "CH", "DK", "\u00e9\u00e9", int64(-7), int64(1 << 40)}
	res := sdktest.Run(t, sdktest.Options{Channels: 5}, keyed(keys...)...)
	for i, c := range res.Channels {
		if c < 1 || c > 4 {
			t.Fatalf("key %v went to channel %d", keys[i], c)
		}
	}
}

func TestOneChannel(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{Channels: 1}, keyed("NL", "DE")...)
	if !reflect.DeepEqual(res.Channels, []int{0, 0}) {
		t.Fatalf("got %v", res.Channels)
	}
}

func TestNoKeyIsOutOfRange(t *testing.T) {
	res := sdktest.Run(t, sdktest.Options{Channels: 3}, sdktest.JSON(`{}`))
	if !reflect.DeepEqual(res.Channels, []int{-1}) {
		t.Fatalf("got %v", res.Channels)
	}
}

func TestModule(t *testing.T) { sdktest.CheckModule(t, ".") }
