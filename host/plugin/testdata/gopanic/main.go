// Command gopanic is a Go SDK filter that panics on a record whose amount
// is negative (a write to a nil map), for the location the SDK appends to
// a panic's text (TestGoPanicNamesItsLocation).
package main

import sdk "github.com/sluicehq/sluice/sdk/go"

var seen map[int64]bool

func init() {
	sdk.Filter(func(r sdk.Record) (bool, error) {
		if r.Int("amount") < 0 {
			seen[r.Int("txnId")] = true
		}
		return true, nil
	})
}

func main() {}
