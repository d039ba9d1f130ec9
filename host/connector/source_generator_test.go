package connector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

func genSpec(opts map[string]any) *pipeline.Operator { return sourceSpec("gen", "generator", opts) }

// The first records of each preset at seed 0 are fixed: changing them
// changes every pipeline's output.
func TestGeneratorPresetsFirstRecords(t *testing.T) {
	tests := []struct {
		preset string
		want   []string
		time   bool
	}{
		{"transactions", []string{
			`{"txnId":"t000000000","accountId":"acct-0812","amount":2550,"currency":"USD","country":"NL","ts":1704067200000}`,
			`{"txnId":"t000000001","accountId":"acct-0454","amount":8990,"currency":"EUR","country":"ES","ts":1704067200001}`,
			`{"txnId":"t000000002","accountId":"acct-0023","amount":-3148,"currency":"GBP","country":"NL","ts":1704067200002}`,
		}, true},
		{"sensors", []string{
			`{"deviceId":"sensor-073","ts":1704067200000,"value":8.1}`,
			`{"deviceId":"sensor-035","ts":1704067200001,"value":15.29}`,
			`{"deviceId":"sensor-095","ts":1704067200002,"value":4.72}`,
		}, true},
		{"words", []string{
			`{"line":"slow slot fox operator plugin slow river map and word sink state"}`,
			`{"line":"slow water a batch early river join join time window"}`,
			`{"line":"slot and state record record the quick river batch"}`,
		}, false},
		{"sequence", []string{`{"n":0}`, `{"n":1}`, `{"n":2}`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			c, src := runSource(t, &Builtin{}, genSpec(map[string]any{"preset": tt.preset, "count": 3}), 0, 1)
			if got := strings.Join(c.jsons(), "\n"); got != strings.Join(tt.want, "\n") {
				t.Errorf("records:\n%s\nwant:\n%s", got, strings.Join(tt.want, "\n"))
			}
			if src.Total() != 3 {
				t.Errorf("Total = %d, want 3", src.Total())
			}
			for i, r := range c.records {
				if r.key != nil {
					t.Errorf("record %d has key %x, want nil", i, r.key)
				}
				if r.hasTime != tt.time {
					t.Errorf("record %d has event time: %v, want %v", i, r.hasTime, tt.time)
				}
				if tt.time && r.time != tsEpoch+int64(i) {
					t.Errorf("record %d event time %d, want its ts %d", i, r.time, tsEpoch+int64(i))
				}
			}
		})
	}
}

func TestGeneratorDeterministicAcrossRuns(t *testing.T) {
	for _, p := range []string{"transactions", "sensors", "words", "sequence", "bids", "auctions"} {
		opts := map[string]any{"preset": p, "count": 2000, "seed": 7}
		a, _ := runSource(t, &Builtin{}, genSpec(opts), 0, 1)
		b, _ := runSource(t, &Builtin{}, genSpec(opts), 0, 1)
		if strings.Join(a.jsons(), "\n") != strings.Join(b.jsons(), "\n") {
			t.Errorf("%s: two runs differ", p)
		}
		other, _ := runSource(t, &Builtin{}, genSpec(map[string]any{"preset": p, "count": 2000, "seed": 8}), 0, 1)
		if p != "sequence" && strings.Join(a.jsons(), "\n") == strings.Join(other.jsons(), "\n") {
			t.Errorf("%s: seeds 7 and 8 give the same records", p)
		}
	}
}

// seqOf reads a record's sequence number from the field that carries it.
func seqOf(t *testing.T, preset string, r record) uint64 {
	t.Helper()
	switch preset {
	case "transactions":
		raw, _, _ := abi.MapField(r.value, "txnId")
		s, _ := abi.ReadStr(raw)
		var n uint64
		fmt.Sscanf(string(s), "t%d", &n)
		return n
	case "sensors":
		raw, _, _ := abi.MapField(r.value, "ts")
		ts, _ := abi.ReadInt(raw)
		return uint64(ts - tsEpoch)
	case "sequence":
		raw, _, _ := abi.MapField(r.value, "n")
		n, _ := abi.ReadInt(raw)
		return uint64(n)
	}
	t.Fatalf("no sequence field in %s", preset)
	return 0
}

// The union of the subtasks' records at parallelism 3 is exactly the
// records at parallelism 1, each subtask holding n % 3 == i in order.
func TestGeneratorParallelismSplitsTheSameRecords(t *testing.T) {
	for _, p := range []string{"transactions", "sensors", "sequence"} {
		t.Run(p, func(t *testing.T) {
			opts := map[string]any{"preset": p, "count": 1001, "seed": 3, "skew": 0.3}
			if p == "sequence" {
				delete(opts, "skew")
			}
			one, _ := runSource(t, &Builtin{}, genSpec(opts), 0, 1)
			want := map[uint64]string{}
			for i, r := range one.records {
				if n := seqOf(t, p, r); n != uint64(i) {
					t.Fatalf("p=1 record %d has sequence number %d", i, n)
				}
				want[uint64(i)] = r.json
			}
			got := map[uint64]string{}
			for i := 0; i < 3; i++ {
				c, _ := runSource(t, &Builtin{}, genSpec(opts), i, 3)
				last := -1
				for _, r := range c.records {
					n := seqOf(t, p, r)
					if n%3 != uint64(i) || int(n) <= last {
						t.Fatalf("subtask %d emitted n=%d after %d", i, n, last)
					}
					last = int(n)
					got[n] = r.json
				}
			}
			if len(got) != len(want) {
				t.Fatalf("p=3 gave %d records, p=1 %d", len(got), len(want))
			}
			for n, j := range want {
				if got[n] != j {
					t.Fatalf("record %d: p=3 %s, p=1 %s", n, got[n], j)
				}
			}
		})
	}
}

func TestGeneratorCountSplitExactly(t *testing.T) {
	for _, tc := range []struct{ count, p int }{{10, 3}, {2, 3}, {0, 2}, {3000, 4}, {1, 1}} {
		sum := 0
		for i := 0; i < tc.p; i++ {
			c, src := runSource(t, &Builtin{}, genSpec(map[string]any{"preset": "sequence", "count": tc.count}), i, tc.p)
			want := tc.count / tc.p
			if i < tc.count%tc.p {
				want++
			}
			if len(c.records) != want || src.Total() != int64(want) {
				t.Errorf("count %d p %d subtask %d: %d records, Total %d, want %d", tc.count, tc.p, i, len(c.records), src.Total(), want)
			}
			sum += len(c.records)
		}
		if sum != tc.count {
			t.Errorf("count %d p %d: subtasks produced %d", tc.count, tc.p, sum)
		}
	}
}

func fieldShare(t *testing.T, c *collector, field string, pred func(raw []byte) bool) float64 {
	t.Helper()
	hits := 0
	for _, r := range c.records {
		raw, ok, err := abi.MapField(r.value, field)
		if !ok || err != nil {
			t.Fatalf("record %s has no field %s", r.json, field)
		}
		if pred(raw) {
			hits++
		}
	}
	return float64(hits) / float64(len(c.records))
}

func isStr(want string) func([]byte) bool {
	return func(raw []byte) bool { s, _ := abi.ReadStr(raw); return string(s) == want }
}

func TestGeneratorSkewAndDistributions(t *testing.T) {
	const n = 100_000
	c, _ := runSource(t, &Builtin{}, genSpec(map[string]any{"preset": "transactions", "count": n, "skew": 0.8}), 0, 1)
	if s := fieldShare(t, c, "accountId", isStr("acct-corp")); math.Abs(s-0.8) > 0.01 {
		t.Errorf("hot key share %.4f, want 0.8 ± 0.01", s)
	}
	c, _ = runSource(t, &Builtin{}, genSpec(map[string]any{"preset": "transactions", "count": n}), 0, 1)
	if s := fieldShare(t, c, "amount", func(raw []byte) bool { v, _ := abi.ReadInt(raw); return v > 0 }); math.Abs(s-0.5) > 0.01 {
		t.Errorf("share of amount > 0 is %.4f, want about half", s)
	}
	if s := fieldShare(t, c, "accountId", isStr("acct-corp")); s != 0 {
		t.Errorf("hot key share %.4f without skew", s)
	}
	accounts := map[string]bool{}
	for _, r := range c.records {
		raw, _, _ := abi.MapField(r.value, "accountId")
		s, _ := abi.ReadStr(raw)
		accounts[string(s)] = true
	}
	if len(accounts) != 1000 || !accounts["acct-0000"] || !accounts["acct-0999"] {
		t.Errorf("%d distinct accounts, want acct-0000..acct-0999", len(accounts))
	}
	c, _ = runSource(t, &Builtin{}, genSpec(map[string]any{"preset": "sensors", "count": 20_000, "skew": 0.25, "hot-key": "boiler", "devices": 5}), 0, 1)
	if s := fieldShare(t, c, "deviceId", isStr("boiler")); math.Abs(s-0.25) > 0.015 {
		t.Errorf("sensors hot key share %.4f, want 0.25", s)
	}
	if s := fieldShare(t, c, "deviceId", isStr("sensor-004")); math.Abs(s-0.75/5) > 0.015 {
		t.Errorf("sensor-004 share %.4f, want 0.15", s)
	}
	c, _ = runSource(t, &Builtin{}, genSpec(map[string]any{"preset": "transactions", "count": 100, "skew": 1}), 0, 1)
	if s := fieldShare(t, c, "accountId", isStr("acct-corp")); s != 1 {
		t.Errorf("skew 1: hot key share %.4f", s)
	}
}

func TestGeneratorUnboundedStopsOnCancel(t *testing.T) {
	src, err := (&Builtin{}).Source(genSpec(map[string]any{"preset": "words"}), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if src.Total() != -1 {
		t.Errorf("Total = %d, want -1", src.Total())
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{t: t, onEmit: func(c *collector) {
		if c.batches == 5 {
			cancel()
		}
	}}
	if err := src.Run(ctx, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if c.batches != 5 || len(c.records) != 5*maxBatchRecords {
		t.Errorf("%d batches, %d records", c.batches, len(c.records))
	}
}

func TestGeneratorBatchesCutByBytes(t *testing.T) {
	// words lines average ~45 bytes: 512 records stay under 64 KiB, so
	// use the collector's per-batch check and look at the sizes directly.
	g, err := newGenerator(newOptions("source", "gen", &pipeline.Connector{Type: "generator",
		Options: map[string]any{"preset": "sequence", "count": 5000}}), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	g.preset = bigRecords{}
	var sizes []int
	sink := collectorFunc(func(buf []byte, count int) { sizes = append(sizes, len(buf)) })
	if err := g.Run(context.Background(), sink); err != nil {
		t.Fatal(err)
	}
	for _, s := range sizes {
		if s > maxBatchBytes+1100 {
			t.Fatalf("batch of %d bytes", s)
		}
	}
	if len(sizes) < 5000*1000/maxBatchBytes {
		t.Errorf("%d batches for 5 MB", len(sizes))
	}
}

type bigRecords struct{}

func (bigRecords) appendRecord(b []byte, n uint64) []byte {
	return abi.AppendStrBytes(appendNoTimeNoKey(b), bytes.Repeat([]byte{'x'}, 1000))
}

type collectorFunc func(buf []byte, count int)

func (f collectorFunc) Emit(_ int, buf []byte, count int) error { f(buf, count); return nil }

func TestGeneratorOptionErrors(t *testing.T) {
	tests := []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{}, `option "preset" is required`},
		{map[string]any{"preset": "stocks"}, `option "preset" must be one of transactions, sensors, words, sequence, bids, auctions, got "stocks"`},
		{map[string]any{"preset": "sequence", "count": -1}, `option "count" must be between 0`},
		{map[string]any{"preset": "sequence", "count": 1.5}, `option "count" must be a whole number`},
		{map[string]any{"preset": "sequence", "rate": "fast"}, `option "rate" must be a number`},
		{map[string]any{"preset": "transactions", "skew": 1.5}, `option "skew" must be between 0 and 1`},
		{map[string]any{"preset": "sequence", "skew": 0.5}, `unknown option "skew"`},
		{map[string]any{"preset": "sensors", "accounts": 5}, `unknown option "accounts"`},
		{map[string]any{"preset": "transactions", "accounts": 0}, `option "accounts" must be between 1`},
	}
	for _, tt := range tests {
		_, err := (&Builtin{}).Source(genSpec(tt.opts), 0, 1)
		wantErrContaining(t, err, `source "gen" (generator)`, tt.want)
	}
	// YAML writes 1e6 as a float: a whole one is a count.
	if _, err := (&Builtin{}).Source(genSpec(map[string]any{"preset": "sequence", "count": 1e6}), 0, 1); err != nil {
		t.Errorf("count 1e6: %v", err)
	}
}

func TestBounded(t *testing.T) {
	b := &Builtin{}
	for _, tc := range []struct {
		c    pipeline.Connector
		want bool
	}{
		{pipeline.Connector{Type: "generator", Options: map[string]any{"preset": "words", "count": 3}}, true},
		{pipeline.Connector{Type: "generator", Options: map[string]any{"preset": "words"}}, false},
		{pipeline.Connector{Type: "elements"}, true},
		{pipeline.Connector{Type: "file"}, true},
		{pipeline.Connector{Type: "stdin"}, true}, // it ends at the end of its input: a BATCH job may read it
		{pipeline.Connector{Type: "kafka"}, false},
	} {
		if got := b.Bounded(&tc.c); got != tc.want {
			t.Errorf("Bounded(%s %v) = %v", tc.c.Type, tc.c.Options, got)
		}
	}
}

func TestUnknownTypes(t *testing.T) {
	b := &Builtin{}
	_, err := b.Source(sourceSpec("k", "pulsar", nil), 0, 1)
	wantErrContaining(t, err, `source "k": unknown source type "pulsar"`, "elements, file, generator, kafka, stdin")
	_, err = b.Sink(sinkSpec("s", "s3", nil), 0, 1)
	wantErrContaining(t, err, `sink "s": unknown sink type "s3"`)
	_, err = b.Source(sinkSpec("s", "print", nil), 0, 1)
	wantErrContaining(t, err, `operator "s" is not a source`)
	_, err = b.Source(genSpec(map[string]any{"preset": "words"}), 2, 2)
	wantErrContaining(t, err, "subtask 2 out of range")
}

var _ runtime.Source = (*generatorSource)(nil)

func BenchmarkGenerator(b *testing.B) {
	for _, p := range []string{"sequence", "transactions", "sensors", "words"} {
		b.Run(p, func(b *testing.B) {
			g, err := newGenerator(newOptions("source", "gen", &pipeline.Connector{Type: "generator",
				Options: map[string]any{"preset": p, "count": b.N, "skew": 0.1}}), 0, 1)
			if p == "words" || p == "sequence" {
				g, err = newGenerator(newOptions("source", "gen", &pipeline.Connector{Type: "generator",
					Options: map[string]any{"preset": p, "count": b.N}}), 0, 1)
			}
			if err != nil {
				b.Fatal(err)
			}
			var bytes int64
			sink := collectorFunc(func(buf []byte, count int) { bytes += int64(len(buf)) })
			b.ReportAllocs()
			b.ResetTimer()
			if err := g.Run(context.Background(), sink); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.SetBytes(bytes / int64(max(b.N, 1)))
		})
	}
}

// Ids come from a table for small key spaces and are formatted per record
// above it: both give the same text.
func TestIDFormatting(t *testing.T) {
	for _, tc := range []struct {
		n     uint64
		i     uint64
		width int
		want  string
	}{{1000, 42, 4, "acct-0042"}, {1000, 999, 4, "acct-0999"}, {70_000, 42, 4, "acct-00042"}, {70_000, 69_999, 4, "acct-69999"}, {5, 3, 3, "acct-003"}} {
		tbl := newIDTable("acct-", tc.n, tc.width)
		if (tbl.flat != nil) != (tc.n <= maxIDTable) {
			t.Errorf("n=%d: table built: %v", tc.n, tbl.flat != nil)
		}
		got, _ := abi.ReadStr(tbl.append(nil, tc.i))
		if string(got) != tc.want {
			t.Errorf("n=%d id %d: %q, want %q", tc.n, tc.i, got, tc.want)
		}
	}
	for _, v := range []uint64{0, 9, 10, 99, 100, 12345, 1<<64 - 1} {
		got, _ := abi.ReadStr(appendID(nil, "t", v, 9))
		if want := fmt.Sprintf("t%09d", v); string(got) != want {
			t.Errorf("appendID(%d) = %q, want %q", v, got, want)
		}
	}
}

// idCounter gives appendID's bytes for every n, whether n follows the last
// one by a step (digits carried, across a new digit too) or not.
func TestIDCounterMatchesAppendID(t *testing.T) {
	starts := []uint64{0, 95, 999_999_990, 99_999_999_999, 1<<64 - 1 - 5000}
	for _, width := range []int{1, 9} {
		for _, step := range []uint64{1, 3, 7, 64, maxIDStep, maxIDStep + 1} {
			var c idCounter
			for _, start := range starts {
				for k := uint64(0); k < 200; k++ {
					n := start + k*step
					if n < start {
						break // wrapped
					}
					if got, want := c.append(nil, "t", n, width), appendID(nil, "t", n, width); string(got) != string(want) {
						t.Fatalf("width %d step %d: n=%d: % x, appendID: % x", width, step, n, got, want)
					}
				}
			}
		}
	}
	var c idCounter // a long prefix: the str8 of appendID
	long := "0123456789012345678901234"
	if got, want := c.append(nil, long, 123456789, 9), appendID(nil, long, 123456789, 9); string(got) != string(want) {
		t.Fatalf("long prefix: % x, appendID: % x", got, want)
	}
}

// The transactions preset's in-place writer gives appendRecordSlow's
// bytes for every record: across account-table sizes, hot keys short and
// long, skews, steps of a subtask's sequence, and numbers where the txn id
// gains a digit (1e9) or leaves the fast path (16 digits), and at the ends
// of the amount's encodings.
func TestTransactionsFastPath(t *testing.T) {
	type run struct {
		accounts    int64
		hot         string
		skew        float64
		start, step uint64
	}
	var runs []run
	for _, acc := range []int64{1, 7, 1000, 10_000, 1 << 16, 70_000} {
		for _, h := range []struct {
			key  string
			skew float64
		}{{"acct-corp", 0}, {"acct-corp", 0.5}, {"k", 1}, {strings.Repeat("h", 29), 0.3}, {strings.Repeat("h", 31), 0.3}, {strings.Repeat("h", 40), 0.3}} {
			for _, st := range [][2]uint64{{0, 1}, {3, 4}, {999_999_990, 3}, {999_999_999_999_990, 1}, {9_999_999_999_999_990, 7}, {1 << 40, 1 << 17}} {
				runs = append(runs, run{acc, h.key, h.skew, st[0], st[1]})
			}
		}
	}
	fastSeen := 0
	for _, r := range runs {
		hk := newHotKey(r.hot, r.skew)
		fast, slow := newTransactions(42, r.accounts, hk), newTransactions(42, r.accounts, hk)
		var fb, sb []byte
		for k, n := 0, r.start; k < 300; k, n = k+1, n+r.step {
			fb, sb = fast.appendRecord(fb[:0], n), slow.appendRecordSlow(sb[:0], n)
			if string(fb) != string(sb) {
				t.Fatalf("accounts %d hot %q skew %v record %d:\nfast %x\nslow %x", r.accounts, r.hot, r.skew, n, fb, sb)
			}
			if fast.fast && n < 1e15 {
				fastSeen++
			}
		}
	}
	if fastSeen == 0 {
		t.Fatal("no record took the fast path")
	}
	// the amount's encodings: every value in [-10000, 10000] as AppendInt writes it
	tx := newTransactions(0, 1000, newHotKey("acct-corp", 0))
	seen := map[int64]bool{}
	var b []byte
	for n := uint64(0); len(seen) < 20001 && n < 5_000_000; n++ {
		b = tx.appendRecord(b[:0], n)
		if a := int64(below(newDraws(tx.seed, n).draw(2), 20001)) - 10000; !seen[a] {
			seen[a] = true
			if got := tx.appendRecordSlow(nil, n); string(got) != string(b) {
				t.Fatalf("record %d (amount %d): fast %x, slow %x", n, a, b, got)
			}
		}
	}
	for _, a := range []int64{-10000, -129, -128, -33, -32, -1, 0, 127, 128, 255, 256, 10000} {
		if !seen[a] {
			t.Errorf("amount %d never drawn in 5M records", a)
		}
	}
}
