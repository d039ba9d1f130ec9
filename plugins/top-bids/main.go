// Command top-bids is a sluice process-window plugin (Flink's
// ProcessWindowFunction): when a window fires it emits the window's n
// records with the highest "price" (config "field"; config "n", default
// 1), highest first, the earlier record first on equal prices. With n 1
// over bids in 10 s tumbling windows it is Nexmark's q7, the highest bid
// of each window (configs/nexmark-q7.yaml). The host adds the window's
// bounds to each record it emits. Integers and floats compare as
// numbers; a record without the field counts as the lowest.
package main

import (
	"sort"

	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
)

var (
	field = "price"
	n     = 1
	order []int
)

func init() {
	sdk.OnOpen(func(ctx sdk.OpenContext) error {
		field = ctx.ConfigString("field", "price")
		n = int(ctx.ConfigInt("n", 1))
		if n < 1 {
			return sdk.ConfigError("config n: must be at least 1")
		}
		return nil
	})
	sdk.ProcessWindow(func(w sdk.Window, bids []sdk.Record, out sdk.Emitter) error {
		order = order[:0]
		for i := range bids {
			order = append(order, i)
		}
		price := func(i int) (float64, bool) {
			v := bids[i].Get(field)
			switch v.Type() {
			case abi.TypeInt, abi.TypeFloat:
				return v.Float(), true
			}
			return 0, false
		}
		sort.SliceStable(order, func(a, b int) bool {
			pa, oka := price(order[a])
			pb, okb := price(order[b])
			if oka != okb {
				return oka
			}
			return pa > pb
		})
		for _, i := range order[:min(n, len(order))] {
			out.Emit(bids[i])
		}
		return nil
	})
}

func main() {}
