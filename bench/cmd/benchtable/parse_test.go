package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// sample is captured `go test -bench` output from several sets (trimmed),
// with a skipped sub-benchmark and a package that did not build.
const sample = `goos: linux
goarch: amd64
pkg: github.com/sluicehq/sluice/abi
cpu: AMD EPYC
BenchmarkCodec-2                	    5154	     77756 ns/op	 998.34 MB/s	        75.93 ns/record	       0 B/op	       0 allocs/op
BenchmarkCodecNativeStructs-2   	   18763	     14793 ns/op	        14.45 ns/record	       0 B/op	       0 allocs/op
PASS
ok  	github.com/sluicehq/sluice/abi	1.278s
goos: linux
goarch: amd64
pkg: github.com/sluicehq/sluice/plugins/langtest
cpu: AMD EPYC
BenchmarkFilterBatch1024Native/valid-2         	    2698	    101807 ns/op	 598.64 MB/s	        99.42 ns/record	       0 B/op	       0 allocs/op
BenchmarkFilterBatch1024/c-2                   	     178	   1400400 ns/op	  43.52 MB/s	      1368 ns/record	        99.42 native-ns/record	        13.76 x-native
BenchmarkFilterBatch1024/rust
--- SKIP: BenchmarkFilterBatch1024/rust
    bench_test.go:44: open plugins/valid/valid-rust.wasm: no such file or directory
BenchmarkBatchSweep/c/1-2          	   99379	      2133 ns/op	      2133 ns/record	     190 B/op	       3 allocs/op
BenchmarkBatchSweep/c/16-2         	   10736	     30763 ns/op	      1923 ns/record	     176 B/op	       3 allocs/op
BenchmarkBatchSweep/c/4096-2       	      84	   3301989 ns/op	       806.1 ns/record	     176 B/op	       3 allocs/op
PASS
goos: linux
goarch: amd64
pkg: github.com/sluicehq/sluice/host/runtime
cpu: AMD EPYC
BenchmarkEdge/fused-2         	 1000000	      8.0 ns/op	      7.5 cpu-ns/rec	 120000000 records/s	       0 B/op	       0 allocs/op
BenchmarkEdge/rebalance-1to2-2	 1000000	     60.0 ns/op	     58.5 cpu-ns/rec	  16000000 records/s	       0 B/op	       0 allocs/op
BenchmarkEdge/edge-2          	 1000000	     20.0 ns/op	     17.5 cpu-ns/rec	  50000000 records/s	       0 B/op	       0 allocs/op
BenchmarkQuickstart/c-2 	 1368206	      1800 ns/op	      1787 cpu-ns/rec	    555602 records/s	       5 B/op	       0 allocs/op
BenchmarkQuickstartNative-2	 1000000	       500 ns/op	       490 cpu-ns/rec	   2000000 records/s	       0 B/op	       0 allocs/op
BenchmarkChain3/wasm-fused-2 	 100000	 4000 ns/op	 4000 cpu-ns/rec	 250000 records/s
BenchmarkKeyedShuffleParallelism/p1-2      	23755053	       106.4 ns/op	       145.8 cpu-ns/rec	   9394246 records/s	       0 B/op	       0 allocs/op
BenchmarkKeyedShuffleParallelism/p2-2      	25872082	        88.22 ns/op	       154.8 cpu-ns/rec	  11335444 records/s	       0 B/op	       0 allocs/op
BenchmarkKeyedShuffleParallelism/p4-2      	35377639	        62.19 ns/op	       122.6 cpu-ns/rec	  16080917 records/s	       0 B/op	       0 allocs/op
BenchmarkKeyedShuffleNativeParallelism/p1-2         	53891304	        49.84 ns/op	        75.53 cpu-ns/rec	  20065466 records/s	      48 B/op	       0 allocs/op
BenchmarkKeyedShuffleNativeParallelism/p2-2         	42151087	        52.09 ns/op	        96.23 cpu-ns/rec	  19197263 records/s	      48 B/op	       0 allocs/op
BenchmarkKeyedShuffleNativeParallelism/p4-2         	43606644	        54.95 ns/op	       106.1 cpu-ns/rec	  18197447 records/s	      48 B/op	       0 allocs/op
BenchmarkChain3/wasm-fused-p2-2	 100000	 2500 ns/op	 4800 cpu-ns/rec	 400000 records/s
BenchmarkLatency/linger5ms-2   	       1	      8586 max-us	      2271 p50-us	      6326 p99-us	     19981 records/s
PASS
ok  	github.com/sluicehq/sluice/host/runtime	4.248s
FAIL	github.com/sluicehq/sluice/host/plugin/fuel [build failed]
pkg: github.com/sluicehq/sluice/bench/benthos
BenchmarkBenthos/batch1-2         	   20000	     25735 ns/op	     38857 records/s
BenchmarkBenthos/batch1024-2      	   20000	      6629 ns/op	    150849 records/s
PASS
`

func parsed(t *testing.T) *Results {
	t.Helper()
	rs := newResults()
	if err := Parse(strings.NewReader(sample), "github.com/sluicehq/sluice/", rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestParse(t *testing.T) {
	rs := parsed(t)
	for _, c := range []struct {
		key, unit string
		want      float64
	}{
		{"abi.BenchmarkCodec", "ns/record", 75.93},
		{"abi.BenchmarkCodec", "allocs/op", 0},
		{"abi.BenchmarkCodec", "MB/s", 998.34},
		{"abi.BenchmarkCodecNativeStructs", "ns/op", 14793},
		{"plugins/langtest.BenchmarkBatchSweep/c/16", "ns/record", 1923},
		{"host/runtime.BenchmarkEdge/rebalance-1to2", "cpu-ns/rec", 58.5},
		{"host/runtime.BenchmarkLatency/linger5ms", "p99-us", 6326},
		{"bench/benthos.BenchmarkBenthos/batch1024", "records/s", 150849},
	} {
		got, ok := rs.Get(c.key, c.unit)
		if !ok || !near(got, c.want) {
			t.Errorf("%s %s = %v, %v; want %v", c.key, c.unit, got, ok, c.want)
		}
	}
	if r := rs.ByKey["abi.BenchmarkCodec"]; r == nil || r.N != 5154 || r.Pkg != "abi" {
		t.Errorf("BenchmarkCodec parsed as %+v", r)
	}
	if _, ok := rs.ByKey["plugins/langtest.BenchmarkFilterBatch1024/rust"]; ok {
		t.Error("the name line of a skipped benchmark was taken as a result")
	}
	if got := rs.Why("plugins/langtest.BenchmarkFilterBatch1024/rust"); got != "skipped: open plugins/valid/valid-rust.wasm: no such file or directory" {
		t.Errorf("skip reason: %q", got)
	}
	if got := rs.Why("host/plugin/fuel.BenchmarkOverhead/filter1024/fuel"); got != "the package did not build" {
		t.Errorf("build failure: %q", got)
	}
	if got := rs.Why("abi.BenchmarkNothing"); got != "not measured" {
		t.Errorf("missing: %q", got)
	}
	if len(rs.Order) != len(rs.ByKey) || rs.Order[0].Name != "BenchmarkCodec" {
		t.Errorf("order: %d results, %d keys", len(rs.Order), len(rs.ByKey))
	}
}

func rowNamed(t *testing.T, rows []Row, prefix string) Row {
	t.Helper()
	for _, r := range rows {
		if strings.HasPrefix(r.Name, prefix) {
			return r
		}
	}
	t.Fatalf("no row %q", prefix)
	return Row{}
}

func TestPairing(t *testing.T) {
	rows := BuildRows(parsed(t), mechUnknown)

	codec := rowNamed(t, rows, "split + read key")
	if !codec.rOK || !near(codec.r, 75.93/14.45) || codec.Ratio != "5.25×" {
		t.Errorf("codec ratio %v %q", codec.r, codec.Ratio)
	}
	if codec.Met == nil || *codec.Met || !strings.Contains(codec.Verdict, "75.9 ns vs ≤ 40") {
		t.Errorf("codec verdict %q", codec.Verdict)
	}

	c := rowNamed(t, rows, "filter (valid), C")
	if !near(c.r, 13.76) || c.GoalID != gCompiled || c.Met == nil || *c.Met { // its x-native
		t.Errorf("C operator: ratio %v goal %s met %v", c.r, c.GoalID, c.Met)
	}
	rust := rowNamed(t, rows, "filter (valid), Rust")
	if rust.Met != nil || !strings.Contains(rust.Sluice, "skipped") {
		t.Errorf("skipped Rust row: %q, met %v", rust.Sluice, rust.Met)
	}

	// records/s: the ratio is time per record, baseline rate / sluice rate
	q := rowNamed(t, rows, "C plugins vs native")
	if !near(q.r, 2000000/555602.0) || q.Met == nil || *q.Met || !strings.Contains(q.Verdict, "needs 9.0×") {
		t.Errorf("quickstart C: ratio %v verdict %q", q.r, q.Verdict)
	}
	// against Benthos: a speed-up over the faster Benthos variant
	b := rowNamed(t, rows, "C plugins vs Benthos")
	if !near(b.r, 555602/150849.0) || b.Ratio != "3.68× faster" || b.Met == nil || *b.Met {
		t.Errorf("vs Benthos: ratio %v %q", b.r, b.Ratio)
	}
	// scaling: p2 over p1
	s := rowNamed(t, rows, "Wasm chain of 3 (C, fused) scaling")
	if !near(s.r, 1.6) || s.Met == nil || *s.Met {
		t.Errorf("scaling %v", s.r)
	}
	// the keyed shuffle is judged at its best parallelism, against native
	// at the same one
	ks := rowNamed(t, rows, "the best of these")
	if !strings.Contains(ks.Name, "parallelism 4") || !near(ks.r, 18197447/16080917.0) || ks.GoalID != gShuffle ||
		ks.Met == nil || *ks.Met || !strings.Contains(ks.Verdict, "16.08 M") {
		t.Errorf("keyed shuffle: %q ratio %v goal %s met %v verdict %q", ks.Name, ks.r, ks.GoalID, ks.Met, ks.Verdict)
	}
	// an edge is a difference of CPU per record
	e := rowNamed(t, rows, "one non-chained edge")
	if !near(e.r, 10) || e.Ratio != "+10.0 ns/rec" {
		t.Errorf("edge: %v %q", e.r, e.Ratio)
	}
	// a package that did not build: n/a, not judged
	f := rowNamed(t, rows, "fuel metering")
	if f.Met != nil || !strings.Contains(f.Sluice, "did not build") {
		t.Errorf("fuel row: %q %v", f.Sluice, f.Met)
	}
	if note := sweepNote(parsed(t)); !strings.Contains(note, "per call ≈ 1.33 µs") || !strings.Contains(note, "from batch 4096") {
		t.Errorf("sweep note %q", note)
	}
}

const sampleTop = `File: runtime.test
Type: cpu
Duration: 4.10s, Total samples = 4.04s (98.59%)
Showing nodes accounting for 4.04s, 100% of 4.04s total
      flat  flat%   sum%        cum   cum%
     2.12s 52.48% 52.48%      2.12s 52.48%  runtime._ExternalCode
     1.20s 29.70% 82.18%      1.44s 35.64%  github.com/tetratelabs/wazero/internal/engine/wazevo.(*callEngine).callWithStack
     0.16s  3.96% 86.14%      0.16s  3.96%  github.com/tetratelabs/wazero/internal/engine/wazevo/backend/isa/amd64.afterGoFunctionCallEntrypoint
     0.07s  1.73% 87.87%      0.07s  1.73%  runtime.asyncPreempt
     0.06s  1.49% 89.36%      0.07s  1.73%  github.com/sluicehq/sluice/abi.skipN
     0.05s  1.24% 90.59%      0.05s  1.24%  runtime.memmove
     0.05s  1.24% 91.83%      0.05s  1.24%  runtime.mallocgc
     0.05s  1.24% 93.07%      0.05s  1.24%  runtime.findRunnable
     0.03s  0.74% 93.81%      0.15s  3.71%  github.com/sluicehq/sluice/host/connector.(*transactions).appendRecord
     0.02s   0.5% 94.31%      0.03s  0.74%  github.com/sluicehq/sluice/host/runtime.(*edgeOut).hashChannel
     0.02s   0.5% 94.81%      0.03s  0.74%  hash/maphash.String
     0.01s  0.25% 95.06%      0.03s  0.74%  github.com/sluicehq/sluice/host/plugin.checkOutput
         0     0% 95.06%      1.56s 38.61%  github.com/sluicehq/sluice/host/plugin.(*Operator).Process
`

func TestParseTop(t *testing.T) {
	p, err := ParseTop(strings.NewReader(sampleTop))
	if err != nil {
		t.Fatal(err)
	}
	if m := Mechanism([]*Profile{p}); m != mechUnknown {
		t.Errorf("mechanism %q from a profile without fuel or deadline frames", m)
	}
	p.Lines = append(p.Lines, ProfileLine{Func: "github.com/sluicehq/sluice/host/plugin.(*fuelBound).start"})
	if m := Mechanism([]*Profile{p}); m != mechFuel {
		t.Errorf("mechanism %q, want fuel", m)
	}
	p.Lines = p.Lines[:len(p.Lines)-1]
	if len(p.Lines) != 13 || p.Lines[0].Func != "runtime._ExternalCode" || !near(p.Lines[1].Cum, 35.64) {
		t.Fatalf("lines: %+v", p.Lines[:2])
	}
	for _, c := range []struct {
		cat  string
		want float64
	}{
		{catGuest, 52.48 + 29.70},
		{catWazero, 3.96},
		{catCodec, 1.49},
		{catConnector, 0.74},
		{catEngine, 0.5},
		{catPlugin, 0.25},
		{catPreempt, 1.73},
		{catCopy, 1.24},
		{catGC, 1.24},
		{catSched, 1.24},
		{catGo, 0.5},
	} {
		if got := p.ShareOf(c.cat); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %.2f %%, want %.2f", c.cat, got, c.want)
		}
	}
}

// The document renders from parsed results alone (no profile, no run).
func TestDocument(t *testing.T) {
	rep := &Report{Machine: &Machine{Date: "today", CPU: "AMD EPYC", NumCPU: 2, Commands: []string{"go test ./abi"}}, Results: parsed(t)}
	rep.Rows, rep.Start = BuildRows(rep.Results, mechUnknown), BuildStartRows(rep.Results)
	doc := rep.Document()
	for _, want := range []string{"| split + read key", "5.25×", "## Goals (performance.md)", "not measured", "go test ./abi", "No CPU profile"} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %q", want)
		}
	}
}

// With -count=N a benchmark prints N lines: its figure is the median of
// each unit (the mean of the middle two for an even N), its place in the
// order the first line's.
func TestParseMedianOfRuns(t *testing.T) {
	out := `pkg: github.com/sluicehq/sluice/abi
BenchmarkCodec-2   	 100	 50000 ns/op	 48.0 ns/record	 0 allocs/op
BenchmarkCodecNativeStructs-2   	 100	 11000 ns/op	 11.0 ns/record
BenchmarkCodec-2   	 100	 40000 ns/op	 39.0 ns/record	 0 allocs/op
BenchmarkCodec-2   	 120	 90000 ns/op	 88.0 ns/record	 0 allocs/op
BenchmarkCodecNativeStructs-2   	 100	 13000 ns/op	 13.0 ns/record
`
	rs := newResults()
	if err := Parse(strings.NewReader(out), "github.com/sluicehq/sluice/", rs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key, unit string
		want      float64
	}{
		{"abi.BenchmarkCodec", "ns/record", 48},
		{"abi.BenchmarkCodec", "ns/op", 50000},
		{"abi.BenchmarkCodecNativeStructs", "ns/record", 12},
	} {
		if got, ok := rs.Get(c.key, c.unit); !ok || got != c.want {
			t.Errorf("%s %s = %v, %v; want %v", c.key, c.unit, got, ok, c.want)
		}
	}
	if r := rs.ByKey["abi.BenchmarkCodec"]; len(r.Runs) != 3 || r.N != 120 {
		t.Errorf("runs: %+v", r)
	}
	if len(rs.Order) != 2 || rs.Order[0].Name != "BenchmarkCodec" {
		t.Errorf("order: %v", rs.Order)
	}
}

// The caveat at the top of the document follows the CPU other processes
// used during the run, not the load average (which counts the benchmarks
// themselves); a run kept before that was measured says it is not known.
func TestDocumentSaysWhetherTheMachineWasShared(t *testing.T) {
	for _, c := range []struct{ other, want string }{
		{"0.8 %", "**The machine was quiet**: other processes used 0.8 %"},
		{"37.5 %", "**The machine was shared while these figures were taken**: other processes used 37.5 %"},
		{"", "**Whether the machine was shared is not known**"},
	} {
		m := &Machine{Date: "today", NumCPU: 2, Load1Start: "1.9 0.8 0.3", Load1End: "2.1 1.6 1.0", OtherCPU: c.other}
		doc := (&Report{Machine: m, Results: newResults()}).Document()
		if !strings.Contains(doc, c.want) {
			t.Errorf("other CPU %q: the document lacks %q", c.other, c.want)
		}
	}
}

func TestOtherShare(t *testing.T) {
	s := time.Second
	// 2 cores for 10 s: 20 s of CPU; the machine was busy 13 s, we used 12
	if got := otherShare(100*s, 113*s, 5*s, 17*s, 10*s, 2); got != "5.0 %" {
		t.Errorf("otherShare = %q, want 5.0 %%", got)
	}
	// our rusage can run ahead of /proc/stat's ticks: never below zero
	if got := otherShare(100*s, 105*s, 0, 6*s, 10*s, 2); got != "0.0 %" {
		t.Errorf("otherShare = %q, want 0.0 %%", got)
	}
	if got := otherShare(-1, 105*s, 0, 6*s, 10*s, 2); got != "" {
		t.Errorf("otherShare without /proc/stat = %q, want empty", got)
	}
	if b := machineBusy(); b <= 0 {
		t.Errorf("machineBusy = %v on Linux, want > 0", b)
	}
	if o := ownCPU(); o <= 0 {
		t.Errorf("ownCPU = %v, want > 0", o)
	}
}

// A row whose benchmark times both sides alternately takes the median of
// the per-run ratios, not the ratio of two medians from different runs.
func TestPairedRatioIsTheMedianOfTheRuns(t *testing.T) {
	out := `pkg: github.com/sluicehq/sluice/plugins/langtest
BenchmarkFilterBatch1024/double-c-2  	 100	 1 ns/op	 100 ns/record	 50 native-ns/record	 2.0 x-native
BenchmarkFilterBatch1024/double-c-2  	 100	 1 ns/op	 160 ns/record	 100 native-ns/record	 1.6 x-native
BenchmarkFilterBatch1024/double-c-2  	 100	 1 ns/op	 140 ns/record	 95 native-ns/record	 1.4737 x-native
BenchmarkSandbox/double-c-2  	 100	 1 ns/op	 100 ns/record	 90 unmetered-ns/record	 1.11 x-unmetered
`
	rs := newResults()
	if err := Parse(strings.NewReader(out), "github.com/sluicehq/sluice/", rs); err != nil {
		t.Fatal(err)
	}
	rows := BuildRows(rs, mechUnknown)
	// the medians, 140 ns (third run) over 95 ns (third run), would say
	// 1.47x, met; the runs' own ratios 2.0, 1.6 and 1.47 have median 1.6
	c := rowNamed(t, rows, "filter+map (double), C")
	if !near(c.r, 1.6) || c.Ratio != "1.60×" || c.Met == nil || *c.Met {
		t.Errorf("double C: ratio %v %q met %v, want the median x-native 1.60, missed", c.r, c.Ratio, c.Met)
	}
	sb := rowNamed(t, rows, "C double: fuel")
	if !near(sb.r, 1.11) || sb.GoalID != gSandbox {
		t.Errorf("sandbox C double: ratio %v goal %s, want 1.11 against %s", sb.r, sb.GoalID, gSandbox)
	}
}
