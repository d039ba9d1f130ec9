package langtest

import (
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/runtime"
)

// langBatch is n records of the benchmarks' shape: {txnId, accountId,
// amount in [-3, 3], currency}, event times from 1_700_000_000_000; 3 in 7
// have amount > 0.
func langBatch(n int) abi.Writer {
	var w abi.Writer
	for i := 0; i < n; i++ {
		v := enc(nil, obj{"txnId", i, "accountId", fmt.Sprint("acct-", i%97), "amount", i%7 - 3, "currency", "EUR"})
		w.Append(int64(1_700_000_000_000+i), true, nil, v)
	}
	return w
}

// amountOf is the int field "amount" of value and its bytes; 0 when it is
// missing or not an int.
func amountOf(value []byte) ([]byte, int64) {
	raw, ok, err := abi.MapField(value, "amount")
	if err != nil || !ok {
		return nil, 0
	}
	amt, err := abi.ReadInt(raw)
	if err != nil {
		return nil, 0
	}
	return raw, amt
}

// nativeAmount is the valid plugin (double false) or the double plugin
// (double true) in native Go on the msgpack bytes: keep the records whose
// int amount is > 0, as they are or with the amount doubled and spliced in
// place (the other bytes copied as they are); emit them as one batch.
type nativeAmount struct {
	w      abi.Writer
	double bool
}

func (*nativeAmount) Open(*runtime.OpenContext) error { return nil }
func (*nativeAmount) Close(runtime.Collector) error   { return nil }
func (n *nativeAmount) Process(_ int, batch []byte, count int, out runtime.Collector) error {
	n.w.Reset()
	rd := abi.NewReader(batch, count)
	for rd.Next() {
		r := rd.Record()
		raw, amt := amountOf(r.Value)
		switch {
		case amt <= 0:
			continue
		case n.double:
			at := cap(r.Raw) - cap(raw) // offset of the amount inside the envelope
			n.w.Buf = append(n.w.Buf, r.Raw[:at]...)
			n.w.Buf = abi.AppendInt(n.w.Buf, 2*amt)
			n.w.Buf = append(n.w.Buf, r.Raw[at+len(raw):]...)
		default:
			n.w.Buf = append(n.w.Buf, r.Raw...)
		}
		n.w.Count++
	}
	if err := rd.Err(); err != nil {
		return err
	}
	if n.w.Count == 0 {
		return nil
	}
	return out.Emit(0, n.w.Buf, n.w.Count)
}

// nativeIdentity is plugins/wat/identity.wat in native Go: check that the
// batch is count well-formed envelopes, then pass it on unchanged.
type nativeIdentity struct{}

func (nativeIdentity) Open(*runtime.OpenContext) error { return nil }
func (nativeIdentity) Close(runtime.Collector) error   { return nil }
func (nativeIdentity) Process(_ int, batch []byte, count int, out runtime.Collector) error {
	rd := abi.NewReader(batch, count)
	for rd.Next() {
	}
	if err := rd.Err(); err != nil {
		return err
	}
	return out.Emit(0, batch, count)
}

// BenchmarkFilterBatch1024Native runs the native twins of
// BenchmarkFilterBatch1024's guests alone (valid and double: the operators
// every language implements; identity: the WAT plugin's) on the same batch
// of 1024 records; ns/record is per input record. The guests' ratios come
// from BenchmarkFilterBatch1024 itself, which runs each twin interleaved.
func BenchmarkFilterBatch1024Native(b *testing.B) {
	w := langBatch(1024)
	for _, v := range []struct {
		name string
		op   runtime.Operator
	}{{"valid", &nativeAmount{}}, {"double", &nativeAmount{double: true}}, {"identity", nativeIdentity{}}} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(w.Buf)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := v.op.Process(0, w.Buf, w.Count, discard{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*w.Count), "ns/record")
		})
	}
}
