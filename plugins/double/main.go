// Command double is a sluice filter+map plugin in one operator: it keeps the
// records whose integer field "amount" is greater than zero and doubles
// that amount; the others are dropped. It is the operator of the
// per-language filter+map benchmark (docs/benchmarks.md).
package main

import sdk "github.com/sluicehq/sluice/sdk/go"

func init() {
	sdk.FlatMap(func(r sdk.Record, out sdk.Emitter) error {
		if a := r.Int("amount"); a > 0 {
			out.Emit(r.SetInt("amount", 2*a))
		}
		return nil
	})
}

func main() {}
