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
	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
)

var (
	field = "price"
	n     = 1
	top   []cand
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
		// one pass, each price read once, the best n kept in order (n is
		// small: an insertion into top costs at most n moves)
		top = top[:0]
		for i, b := range bids {
			v := b.Get(field)
			c := cand{i: i}
			switch v.Type() {
			case abi.TypeInt, abi.TypeFloat:
				c.price, c.ok = v.Float(), true
			}
			j := len(top)
			for j > 0 && c.better(top[j-1]) {
				j--
			}
			if j >= n {
				continue
			}
			if len(top) < n {
				top = append(top, cand{})
			}
			copy(top[j+1:], top[j:len(top)-1])
			top[j] = c
		}
		for _, c := range top {
			out.Emit(bids[c.i])
		}
		return nil
	})
}

// cand is a record and its price; ok is false when it has none.
type cand struct {
	i     int
	price float64
	ok    bool
}

// better: a higher price, and any price above none; ties keep the
// earlier record first (it was inserted first and is not passed).
func (c cand) better(o cand) bool {
	if c.ok != o.ok {
		return c.ok
	}
	return c.price > o.price
}

func main() {}
