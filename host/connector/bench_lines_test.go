package connector

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// BenchmarkLineReader reads 10,000 records of JSON lines (objects with a
// nested object) or CSV, as the file and stdin sources do.
func BenchmarkLineReader(b *testing.B) {
	const n = 10_000
	var js, csv bytes.Buffer
	csv.WriteString("txnId,accountId,amount,currency,country,ts,note\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&js, `{"txnId":"t%d","accountId":"acct-%04d","amount":%d.25,"currency":"EUR","meta":{"country":"DE","ts":%d,"tags":["a","b"]},"note":"caf\u00e9 %d"}`+"\n", i, i%1000, i%977, 1700000000000+i, i)
		fmt.Fprintf(&csv, "t%d,acct-%04d,%d.25,EUR,DE,%d,café %d\n", i, i%1000, i%977, 1700000000000+i, i)
	}
	for _, tc := range []struct {
		name string
		csv  bool
		text []byte
	}{{"json", false, js.Bytes()}, {"csv", true, csv.Bytes()}} {
		b.Run(tc.name, func(b *testing.B) {
			sink := collectorFunc(func([]byte, int) {})
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			for b.Loop() {
				l := &lineReader{op: "in", input: "bench", csv: tc.csv, parallelism: 1}
				if err := l.run(context.Background(), bytes.NewReader(tc.text), sink); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
