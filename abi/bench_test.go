package abi

import (
	"fmt"
	"testing"
)

func benchBatch(n int) ([]byte, int) {
	var w Writer
	for i := 0; i < n; i++ {
		w.Append(int64(i), true, nil, txn(nil, fmt.Sprintf("acct-%04d", i%1000), int64(i%100-49)))
	}
	return w.Buf, w.Count
}

// BenchmarkCodec is the host codec at the boundary: split a batch into
// records, read the key field and re-encode each record with that key (what
// a HASH edge does). Reported per record; goal ≤ 40 ns and 0 allocations.
func BenchmarkCodec(b *testing.B) {
	buf, count := benchBatch(1024)
	var out Writer
	out.Buf = make([]byte, 0, 2*len(buf))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out.Reset()
		rd := NewReader(buf, count)
		for rd.Next() {
			r := rd.Current()
			key, _, err := MapField(r.Value, "accountId")
			if err != nil {
				b.Fatal(err)
			}
			out.Append(r.Time, r.HasTime, key, r.Value)
		}
		if rd.Err() != nil {
			b.Fatal(rd.Err())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*count), "ns/record")
}

// BenchmarkCodecNativeStructs is the baseline: the same work on Go structs
// (read the key, copy the record to an output slice).
func BenchmarkCodecNativeStructs(b *testing.B) {
	type rec struct {
		Time    int64
		Key     string
		Account string
		Amount  int64
		Payload string
	}
	in := make([]rec, 1024)
	for i := range in {
		in[i] = rec{Time: int64(i), Account: fmt.Sprintf("acct-%04d", i%1000), Amount: int64(i%100 - 49), Payload: "0123456789abcdef0123456789abcdef"}
	}
	out := make([]rec, 0, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out = out[:0]
		for j := range in {
			r := in[j]
			r.Key = r.Account
			out = append(out, r)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(in)), "ns/record")
}

func BenchmarkKeyHash(b *testing.B) {
	key := AppendStr(nil, "acct-0042")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := KeyHash(key); err != nil {
			b.Fatal(err)
		}
	}
}
