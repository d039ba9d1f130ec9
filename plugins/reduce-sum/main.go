// Command reduce-sum is a sluice keyed reduce plugin: per key it sums the
// field "amount" (config "field") into the accumulator and emits the
// running result after each record, as Flink's keyed reduce does. The
// accumulator is the key's first record, so its other fields are those
// of the first record. Integers sum as integers; a float on either side
// makes the sum a float.
package main

import (
	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
)

var field = "amount"

func init() {
	sdk.OnOpen(func(ctx sdk.OpenContext) error {
		field = ctx.ConfigString("field", "amount")
		return nil
	})
	sdk.Reduce(func(acc, r sdk.Record) (sdk.Record, error) {
		a, b := acc.Get(field), r.Get(field)
		if a.Type() == abi.TypeFloat || b.Type() == abi.TypeFloat {
			return acc.SetFloat(field, a.Float()+b.Float()), nil
		}
		return acc.SetInt(field, a.Int()+b.Int()), nil
	})
}

func main() {}
