// Command plugin is the smallest plugin, built by the SDK's module test.
package main

import sdk "github.com/sluicehq/sluice/sdk/go"

func init() {
	sdk.Map(func(r sdk.Record) (sdk.Record, error) { return r.SetInt("seen", 1), nil })
}

func main() {}
