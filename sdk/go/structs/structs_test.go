//go:build !wasip1

// The SDK tests drive operators through the native fake host.

package structs_test

import (
	"testing"

	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
	"github.com/sluicehq/sluice/sdk/go/sdktest"
	"github.com/sluicehq/sluice/sdk/go/structs"
)

type payment struct {
	Account string  `msgpack:"account"`
	Amount  int64   `msgpack:"amount"`
	Rate    float64 `msgpack:"rate"`
	Bank    string  `msgpack:"bank"`
}

func TestDecodeSeesEdits(t *testing.T) {
	sdk.Reset()
	var got []payment
	sdk.Filter(func(r sdk.Record) (bool, error) {
		var p payment
		err := structs.Decode(r.SetStr("bank", "NBI").Delete("rate"), &p)
		got = append(got, p)
		return false, err
	})
	sdktest.Run(t, sdktest.Options{}, sdktest.JSON(`{"account":"a1","amount":-4,"rate":0.5,"other":[1]}`))
	if want := (payment{Account: "a1", Amount: -4, Bank: "NBI"}); len(got) != 1 || got[0] != want {
		t.Fatalf("got %+v", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	var p payment
	if err := structs.Decode(sdk.Record{}, &p); err == nil {
		t.Fatal("the zero Record must not decode")
	}
	sdk.Reset()
	sdk.Filter(func(r sdk.Record) (bool, error) { return false, structs.Decode(r, &p) })
	if _, err := sdktest.Try(sdktest.Options{}, sdktest.JSON(`{"amount":"not a number"}`)); err == nil {
		t.Fatal("a string into an int64 field must fail")
	}
}

// discardHost takes emits and nothing else: the benchmark measures the
// guest side only.
type discardHost struct{}

func (discardHost) Emit(int32, []byte, int32) int32      { return 0 }
func (discardHost) Port(string) int32                    { return 0 }
func (discardHost) Error(string)                         {}
func (discardHost) StateGet(int32, []byte, []byte) int32 { return -1 }
func (discardHost) StatePut(int32, []byte, []byte) int32 { return 0 }
func (discardHost) StateDel(int32, []byte) int32         { return 0 }

// Decoding into a struct against the typed getters, per record.
func BenchmarkDecode(b *testing.B) {
	const n = 1024
	var batch []byte
	for i := 0; i < n; i++ {
		v := abi.AppendMapHeader(nil, 4)
		v = abi.AppendStr(abi.AppendStr(v, "account"), "acc-1")
		v = abi.AppendInt(abi.AppendStr(v, "amount"), 120)
		v = abi.AppendFloat(abi.AppendStr(v, "rate"), 0.5)
		v = abi.AppendStr(abi.AppendStr(v, "bank"), "NBI")
		batch = abi.AppendEnvelope(batch, 0, false, nil, v)
	}
	run := func(b *testing.B, fn func(sdk.Record) (bool, error)) {
		sdk.Reset()
		sdk.Filter(fn)
		hostcall.Fake = discardHost{}
		defer func() { hostcall.Fake = nil }()
		b.ReportAllocs()
		for b.Loop() {
			if st := hostcall.Guest.Process(0, batch, n); st != 0 {
				b.Fatal(st)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	}
	b.Run("getters", func(b *testing.B) {
		run(b, func(r sdk.Record) (bool, error) {
			return len(r.StrBytes("account"))+int(r.Int("amount"))+int(r.Float("rate"))+len(r.StrBytes("bank")) < 0, nil
		})
	})
	b.Run("structs", func(b *testing.B) {
		run(b, func(r sdk.Record) (bool, error) {
			var p payment
			err := structs.Decode(r, &p)
			return len(p.Account)+int(p.Amount)+int(p.Rate)+len(p.Bank) < 0, err
		})
	})
}
