//go:build !wasip1

// The SDK tests drive operators through the native fake host.

package sdk_test

import (
	"testing"

	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
)

// In steady state a batch allocates nothing: record views, edits, new
// records and output buffers all reuse SDK-owned memory.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	batch := benchRecords(benchBatch)
	ops := map[string]func(){
		"filter+map": registerFilterMap,
		"map adding fields": func() {
			sdk.Map(func(r sdk.Record) (sdk.Record, error) {
				return r.SetStr("bank", "NBI").SetFloat("rate", 1.5).Delete("ccy"), nil
			})
		},
		"flat-map of new records": func() {
			sdk.FlatMap(func(r sdk.Record, out sdk.Emitter) error {
				for i := 0; i < 3; i++ {
					out.Emit(sdk.NewRecord().SetStrBytes("account", r.StrBytes("account")).SetInt("i", int64(i)))
				}
				return nil
			})
		},
		"process with a side output": func() {
			sdk.Process(func(r sdk.Record, ctx sdk.Context) error {
				ctx.Emit(r)
				if r.Int("amount") < 0 {
					ctx.EmitTo("neg", r.SetBool("neg", true))
				}
				return nil
			}).Outputs("neg")
		},
	}
	for name, register := range ops {
		t.Run(name, func(t *testing.T) {
			sdk.Reset()
			register()
			h := &discardHost{}
			hostcall.Fake = h
			defer func() { hostcall.Fake = nil }()
			allocs := testing.AllocsPerRun(20, func() {
				if st := hostcall.Guest.Process(0, batch, benchBatch); st != 0 {
					t.Fatal(st)
				}
			})
			if allocs != 0 || h.records == 0 {
				t.Fatalf("%v allocations per batch of %d records (%d records out)", allocs, benchBatch, h.records)
			}
		})
	}
}
