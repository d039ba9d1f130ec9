// Command comap is a sluice co-map plugin over two connected inputs: it
// tags records of the first input with "source": "first" and those of the
// second with "source": "second", into one output.
package main

import sdk "github.com/sluicehq/sluice/sdk/go"

func init() {
	sdk.CoMap(
		func(r sdk.Record) (sdk.Record, error) { return r.SetStr("source", "first"), nil },
		func(r sdk.Record) (sdk.Record, error) { return r.SetStr("source", "second"), nil },
	)
}

func main() {}
