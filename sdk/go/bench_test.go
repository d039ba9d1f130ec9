//go:build !wasip1

// The SDK tests drive operators through the native fake host.

package sdk_test

import (
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/abi"
	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
)

// The benchmark workload of ../shared/design/abi.md: keep the records whose
// int "amount" is > 0 and double it, batches of 1024 records (about 36
// bytes each), here run natively: the SDK's record views against native Go
// doing the same work on the same msgpack bytes with abi's scanner.

const benchBatch = 1024

// benchRecords returns a batch of n records, two thirds of them with a
// positive amount.
func benchRecords(n int) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		v := abi.AppendMapHeader(nil, 4)
		v = abi.AppendInt(abi.AppendStr(v, "id"), int64(i))
		v = abi.AppendStr(abi.AppendStr(v, "account"), "acc-"+strconv.Itoa(i%100))
		v = abi.AppendInt(abi.AppendStr(v, "amount"), amount(i))
		v = abi.AppendStr(abi.AppendStr(v, "ccy"), "EUR")
		b = abi.AppendEnvelope(b, int64(1700000000000+i), true, nil, v)
	}
	return b
}

// discardHost takes emits without copying: the cost measured is the guest's.
type discardHost struct{ records int }

func (h *discardHost) Emit(_ int32, _ []byte, count int32) int32 { h.records += int(count); return 0 }
func (h *discardHost) Port(string) int32                         { return 1 }
func (h *discardHost) Error(string)                              {}
func (h *discardHost) StateGet(int32, []byte, []byte) int32      { return -1 }
func (h *discardHost) StatePut(int32, []byte, []byte) int32      { return 0 }
func (h *discardHost) StateDel(int32, []byte) int32              { return 0 }

// registerFilterMap registers the workload as one SDK operator.
func registerFilterMap() {
	sdk.Reset()
	sdk.FlatMap(func(r sdk.Record, out sdk.Emitter) error {
		if a := r.Int("amount"); a > 0 {
			out.Emit(r.SetInt("amount", 2*a))
		}
		return nil
	})
}

// nativeFilterMap is the same work without the SDK: find amount with the
// scanner and splice the doubled value into a copy of the envelope.
func nativeFilterMap(batch []byte, count int, w *abi.Writer) error {
	w.Reset()
	rd := abi.NewReader(batch, count)
	for rd.Next() {
		rec := rd.Record()
		raw, ok, err := abi.MapField(rec.Value, "amount")
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		a, err := abi.ReadInt(raw)
		if err != nil || a <= 0 {
			continue
		}
		at := len(rec.Raw) - len(rec.Value) + (cap(rec.Value) - cap(raw)) // offset of amount in the envelope
		w.Buf = append(w.Buf, rec.Raw[:at]...)
		w.Buf = abi.AppendInt(w.Buf, 2*a)
		w.Buf = append(w.Buf, rec.Raw[at+len(raw):]...)
		w.Count++
	}
	return rd.Err()
}

func BenchmarkFilterMap(b *testing.B) {
	batch := benchRecords(benchBatch)
	b.Run("sdk", func(b *testing.B) {
		registerFilterMap()
		h := &discardHost{}
		hostcall.Fake = h
		defer func() { hostcall.Fake = nil }()
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		for b.Loop() {
			if st := hostcall.Guest.Process(0, batch, benchBatch); st != 0 {
				b.Fatal(st)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/record")
	})
	b.Run("native", func(b *testing.B) {
		var w abi.Writer
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		for b.Loop() {
			if err := nativeFilterMap(batch, benchBatch, &w); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/record")
	})
}

// The SDK and the native version produce the same bytes.
func TestFilterMapMatchesNative(t *testing.T) {
	batch := benchRecords(benchBatch)
	var w abi.Writer
	if err := nativeFilterMap(batch, benchBatch, &w); err != nil {
		t.Fatal(err)
	}
	registerFilterMap()
	h := newRecHost()
	defer func() { hostcall.Fake = nil }()
	if st := h.process(0, batch, benchBatch); st != 0 || len(h.emits) != 1 {
		t.Fatalf("status %v, %d emits", st, len(h.emits))
	}
	if got := h.emits[0]; got.count != int32(w.Count) || string(got.buf) != string(w.Buf) || w.Count != 682 {
		t.Fatalf("sdk emitted %d records, native %d; bytes equal: %v", got.count, w.Count, string(got.buf) == string(w.Buf))
	}
}

func amount(i int) int64 {
	if i%3 == 0 {
		return -int64(i)
	}
	return int64(100 + i)
}
