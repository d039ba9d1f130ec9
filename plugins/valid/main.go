// Command valid is a sluice filter plugin: it keeps the records whose
// integer field "amount" is greater than zero.
package main

import sdk "github.com/sluicehq/sluice/sdk/go"

func init() {
	sdk.Filter(func(r sdk.Record) (bool, error) { return r.Int("amount") > 0, nil })
}

func main() {}
