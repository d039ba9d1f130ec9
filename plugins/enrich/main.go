// Command enrich is a sluice map plugin: it adds every key of its config
// to each record as a field, e.g. config {bank: NBI} adds "bank": "NBI".
// Fields the record already has are overwritten in place; new ones are
// appended in the config's key order (sorted, so output is stable).
package main

import (
	"sort"

	sdk "github.com/sluicehq/sluice/sdk/go"
)

// field is one config entry, kept as its msgpack encoding so that adding
// it to a record is a copy.
type field struct {
	name string
	val  sdk.Value
}

var fields []field

func init() {
	sdk.OnOpen(func(ctx sdk.OpenContext) error {
		fields = fields[:0]
		for name := range ctx.Config {
			val, _ := ctx.ConfigValue(name)
			fields = append(fields, field{name, val})
		}
		sort.Slice(fields, func(i, j int) bool { return fields[i].name < fields[j].name })
		return nil
	})
	sdk.Map(func(r sdk.Record) (sdk.Record, error) {
		for _, f := range fields {
			r.SetValue(f.name, f.val)
		}
		return r, nil
	})
}

func main() {}
