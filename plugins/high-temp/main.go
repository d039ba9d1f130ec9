// Command high-temp is a sluice process plugin: every reading goes to the
// main output, and readings whose "value" field is above the configured
// threshold also go to the side output "alerts".
//
// Config: threshold (number, default 30); field (the reading's field,
// default "value").
package main

import sdk "github.com/sluicehq/sluice/sdk/go"

var (
	threshold = 30.0
	field     = "value"
)

func init() {
	sdk.OnOpen(func(ctx sdk.OpenContext) error {
		threshold = ctx.ConfigFloat("threshold", 30)
		field = ctx.ConfigString("field", "value")
		return nil
	})
	sdk.Process(func(r sdk.Record, ctx sdk.Context) error {
		ctx.Emit(r)
		if v := r.Get(field); v.Exists() && v.Float() > threshold {
			ctx.EmitTo("alerts", r)
		}
		return nil
	}).Outputs("alerts")
}

func main() {}
