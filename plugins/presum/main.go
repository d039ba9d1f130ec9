// Command presum is a sluice pre-aggregation plugin: a local combiner
// placed before a key-by, the second fix for a hot key. Each subtask sums
// the field "amount" (config "field") per value of the field "accountId"
// (config "key") in memory and emits one partial record {key, field} per
// key when it has seen "flush-every" records (default 10000) and at the
// end of input. Downstream, a key-by on the same field and a sum merge the
// partials, so the hot key's subtask reads a few partials instead of every
// record. Integers sum as integers; a float makes the sum a float.
//
// In Flink this is a RichFlatMapFunction with a local map, flushed in
// finish() (or the Table API's mini-batch local-global aggregation).
package main

import (
	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
)

type partial struct {
	isFloat bool
	i       int64
	f       float64
}

var (
	keyField, sumField = "accountId", "amount"
	flushEvery         = 10000
	seen               int
	order              []string // keys in first-seen order: deterministic output
	sums               = map[string]*partial{}
)

func init() {
	sdk.OnOpen(func(ctx sdk.OpenContext) error {
		keyField = ctx.ConfigString("key", "accountId")
		sumField = ctx.ConfigString("field", "amount")
		flushEvery = int(ctx.ConfigInt("flush-every", 10000))
		if flushEvery < 1 {
			return sdk.ConfigError("flush-every must be at least 1")
		}
		return nil
	})
	sdk.Process(func(r sdk.Record, ctx sdk.Context) error {
		k := r.Str(keyField)
		p := sums[k]
		if p == nil {
			p = &partial{}
			sums[k] = p
			order = append(order, k)
		}
		v := r.Get(sumField)
		switch {
		case v.Type() == abi.TypeFloat:
			if !p.isFloat {
				p.isFloat, p.f = true, float64(p.i)
			}
			p.f += v.Float()
		case p.isFloat:
			p.f += float64(v.Int())
		default:
			p.i += v.Int()
		}
		if seen++; seen >= flushEvery {
			flush(ctx)
		}
		return nil
	})
	sdk.OnFinish(func(e sdk.Emitter) error {
		flush(e)
		return nil
	})
}

// flush emits one partial per key seen since the last flush.
func flush(out interface{ Emit(sdk.Record) }) {
	for _, k := range order {
		p := sums[k]
		r := sdk.NewRecord().SetStr(keyField, k)
		if p.isFloat {
			r = r.SetFloat(sumField, p.f)
		} else {
			r = r.SetInt(sumField, p.i)
		}
		out.Emit(r)
	}
	order, seen = order[:0], 0
	clear(sums)
}

func main() {}
