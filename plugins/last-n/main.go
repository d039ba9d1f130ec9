// Command last-n is a sluice keyed process plugin showing list and map
// state (Flink's ListState and MapState). Keyed by account, for each
// transaction {account, merchant, amount} it emits the transaction with
//
//	last:           the amounts of the account's last n transactions, oldest
//	                first, this one included (list state, slot 0)
//	merchant_count: how many of the account's transactions went to this
//	                merchant, this one included (map state, slot 1)
//	merchants:      how many merchants the account has paid (the map's size)
//
// Config: n (default 3). Both slots are declared in describe; a pipeline may
// give them a time to live with the operator config's state-ttl.
package main

import (
	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
)

var n = 3

func init() {
	sdk.OnOpen(func(ctx sdk.OpenContext) error {
		n = int(ctx.ConfigInt("n", 3))
		if n < 1 {
			return sdk.ConfigError("config n: want at least 1")
		}
		return nil
	})
	sdk.KeyedProcess(func(r sdk.Record, ctx sdk.Context) error {
		last := ctx.ListState(0)
		if err := last.AddInt(r.Int("amount")); err != nil {
			return err
		}
		vals, err := last.Get()
		if err != nil {
			return err
		}
		if len(vals) > n {
			vals = vals[len(vals)-n:]
			if err := last.Update(vals); err != nil {
				return err
			}
		}
		arr := abi.AppendArrayHeader(nil, len(vals))
		for _, v := range vals {
			arr = append(arr, v.Raw()...)
		}
		counts := ctx.MapState(1)
		merchant := r.Str("merchant")
		c, _, err := counts.Get(merchant)
		if err != nil {
			return err
		}
		seen := c.Int() + 1 // read now: c is a view the next read of the slot reuses
		if err := counts.PutInt(merchant, seen); err != nil {
			return err
		}
		entries, err := counts.Entries()
		if err != nil {
			return err
		}
		ctx.Emit(r.SetRaw("last", arr).SetInt("merchant_count", seen).SetInt("merchants", int64(len(entries))))
		return nil
	}).Declare(sdk.StateDecl{Slot: 0, Kind: "list"}, sdk.StateDecl{Slot: 1, Kind: "map"})
}

func main() {}
