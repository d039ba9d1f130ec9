package main

import (
	"fmt"
	"math"
	"strings"
)

// Row is one line of the table: a sluice figure, the baseline doing the
// same work measured in the same run, their ratio, and the goal of
// shared/design/performance.md it is judged against.
type Row struct {
	Section  string
	Name     string
	Sluice   string // formatted figures
	Baseline string
	Ratio    string
	Goal     string
	Verdict  string
	Met      *bool  // nil: no goal, or not measured
	GoalID   string // the goal (goals below) the row is judged against

	sv, bv, r     float64 // raw figures; r: the ratio
	sOK, bOK, rOK bool
	why           string // why a figure is missing
}

// Ratio kinds.
const (
	cost   = iota // lower is better in both: ratio = sluice / baseline
	rate          // higher is better (records/s): ratio = baseline / sluice (time per record)
	faster        // higher is better: ratio = sluice / baseline, shown as "× faster"
	diff          // costs whose difference matters: ratio column = sluice - baseline
	none          // no ratio
)

type fig struct {
	key, unit string
	format    func(float64) string
}

// pair builds a row from a sluice figure and a baseline figure.
func pair(rs *Results, section, name string, s fig, b *fig, kind int) Row {
	row := Row{Section: section, Name: name, Baseline: "—", Ratio: "—", Goal: "—", Verdict: "—"}
	row.sv, row.sOK = rs.Get(s.key, s.unit)
	if row.sOK {
		row.Sluice = s.format(row.sv)
	} else {
		row.why = rs.Why(s.key)
		row.Sluice = "n/a (" + row.why + ")"
	}
	if b == nil {
		return row
	}
	row.bv, row.bOK = rs.Get(b.key, b.unit)
	if row.bOK {
		row.Baseline = b.format(row.bv)
	} else {
		row.Baseline = "n/a (" + rs.Why(b.key) + ")"
		if row.why == "" {
			row.why = rs.Why(b.key)
		}
	}
	if !row.sOK || !row.bOK || row.sv == 0 || row.bv == 0 {
		return row
	}
	switch kind {
	case cost:
		row.r, row.rOK = row.sv/row.bv, true
		row.Ratio = fmtRatio(row.r)
	case rate:
		row.r, row.rOK = row.bv/row.sv, true
		row.Ratio = fmtRatio(row.r)
	case faster:
		row.r, row.rOK = row.sv/row.bv, true
		row.Ratio = fmtRatio(row.r) + " faster"
		if row.r < 1 {
			row.Ratio = fmtRatio(row.r) + " (slower)"
		}
	case diff:
		row.r, row.rOK = row.sv-row.bv, true
		row.Ratio = fmt.Sprintf("%+.1f ns/rec", row.r)
	}
	return row
}

// paired makes the row's ratio the median of the benchmark's own per-run
// ratio (key's unit, e.g. x-native): where the benchmark timed both sides
// alternately in one loop, each run's ratio pairs the two sides of the
// same moment, and the median of those is steadier on a drifting machine
// than the ratio of two medians taken separately (which may come from
// different runs). The row keeps the ratio of the medians when the
// benchmark did not report it.
func (row Row) paired(rs *Results, key, unit string) Row {
	if !row.rOK {
		return row
	}
	if r, ok := rs.Get(key, unit); ok && r > 0 {
		row.r, row.Ratio = r, fmtRatio(r)
	}
	return row
}

func judged(row Row, id, goal string, ok bool, verdict string) Row {
	row.GoalID, row.Goal = id, goal
	if !row.sOK || (verdict == "" && !row.rOK) {
		row.Verdict = "not measured"
		return row
	}
	row.Met = &ok
	if ok {
		row.Verdict = "met"
	} else {
		row.Verdict = "missed: " + verdict
	}
	return row
}

// maxRatio: the ratio must be at most g.
func (row Row) maxRatio(id string, g float64) Row {
	goal := "≤ " + fmtRatio(g)
	if !row.rOK {
		return judged(row, id, goal, false, "")
	}
	return judged(row, id, goal, row.r <= g, fmt.Sprintf("%s vs %s (%.0f %% over)", fmtRatio(row.r), goal, 100*(row.r/g-1)))
}

// minRatio: the ratio (a speed-up) must be at least g.
func (row Row) minRatio(id string, g float64) Row {
	goal := "≥ " + fmtRatio(g)
	if !row.rOK {
		return judged(row, id, goal, false, "")
	}
	return judged(row, id, goal, row.r >= g, fmt.Sprintf("%s vs %s (%.0f %% short)", fmtRatio(row.r), goal, 100*(1-row.r/g)))
}

// maxValue: the sluice figure must be at most g.
func (row Row) maxValue(id string, g float64, format func(float64) string) Row {
	goal := "≤ " + format(g)
	return judged(row, id, goal, row.sv <= g, fmt.Sprintf("%s vs %s (%.0f %% over)", format(row.sv), goal, 100*(row.sv/g-1)))
}

// below: the sluice figure must be under g.
func (row Row) below(id string, g float64, format func(float64) string) Row {
	goal := "< " + format(g)
	return judged(row, id, goal, row.sv < g, fmt.Sprintf("%s vs %s (%.1f× the goal)", format(row.sv), goal, row.sv/g))
}

// minValue: the sluice figure (a rate) must be at least g.
func (row Row) minValue(id string, g float64, format func(float64) string) Row {
	goal := "≥ " + format(g)
	return judged(row, id, goal, row.sv >= g, fmt.Sprintf("%s vs %s (needs %.1f×)", format(row.sv), goal, g/row.sv))
}

// note replaces the goal column with a reference figure (no verdict).
func (row Row) note(goal string) Row {
	row.Goal = goal
	return row
}

// ---- formatting ---------------------------------------------------------

func fmtRatio(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f×", r)
	case r >= 10:
		return fmt.Sprintf("%.1f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}

// fmtNs formats nanoseconds, switching to µs and ms.
func fmtNs(ns float64) string {
	switch {
	case ns >= 1e8:
		return fmt.Sprintf("%.0f ms", ns/1e6)
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e4:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	case ns >= 100:
		return fmt.Sprintf("%.0f ns", ns)
	case ns >= 10:
		return fmt.Sprintf("%.1f ns", ns)
	}
	return fmt.Sprintf("%.2f ns", ns)
}

func fmtNsRec(ns float64) string { return fmtNs(ns) + "/rec" }

func fmtCPURec(ns float64) string { return fmtNs(ns) + " cpu/rec" }

func fmtRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2f M rec/s", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.0f K rec/s", r/1e3)
	}
	return fmt.Sprintf("%.0f rec/s", r)
}

func fmtBytes(b float64) string {
	switch {
	case math.Abs(b) >= 1<<20:
		return fmt.Sprintf("%.2f MiB", b/(1<<20))
	case math.Abs(b) >= 1<<10:
		return fmt.Sprintf("%.0f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

func fmtUs(us float64) string { return fmtNs(us * 1e3) }

// ---- the rows -----------------------------------------------------------

const (
	gCodec    = "codec"
	gCompiled = "operator-compiled"
	gGoSDK    = "operator-go"
	gChain    = "chain3"
	gPipeC    = "pipeline-compiled"
	gPipeGo   = "pipeline-go"
	gBenthos  = "benthos"
	gSandbox  = "sandbox"
	gStart    = "start"
	gMemory   = "memory"
	gScale    = "scaling"
	gShuffle  = "shuffle"
	gKafka    = "kafka-loop"
	gKafkaBen = "kafka-benthos"
	gCkpt     = "checkpoints"
	gDirty    = "dirty-tracking"
	gIncr     = "incremental"
	gPebSync  = "pebble-checkpoint-sync"
	gPebRMW   = "pebble-larger-than-memory"
)

// Goal is one goal of performance.md and the rows that judge it.
type Goal struct {
	ID, Text string
}

var goals = []Goal{
	{gCodec, "Host codec at the boundary ≤ 40 ns/record, zero allocations in steady state"},
	{gCompiled, "One compiled-language Wasm operator (C, Rust, AssemblyScript) at batch 1024 ≤ 1.5× native"},
	{gGoSDK, "A Go-SDK operator ≤ 4× native"},
	{gChain, "A fused chain of 3 Wasm operators ≤ 2× the native chain"},
	{gPipeC, "Whole pipeline ≥ 5 M records/s on 2 cores with compiled-language plugins"},
	{gPipeGo, "Whole pipeline ≥ 1.5 M records/s on 2 cores with Go plugins"},
	{gBenthos, "Whole pipeline ≥ 10× Benthos on the same work"},
	{gSandbox, "Sandboxed (interruptible, memory-capped) execution ≤ 1.5× unsandboxed"},
	{gStart, "Plugin start with a warm compilation cache < 1 ms for small guests, < 100 ms for Go guests"},
	{gMemory, "Memory per instance ≤ 1 MB for compiled-language guests, ≤ 8 MB for Go guests"},
	{gScale, "2 subtasks on 2 cores ≥ 1.8× one subtask for a CPU-bound Wasm chain"},
	{gShuffle, "A keyed shuffle through built-in operators ≥ 20 M records/s (issue 4)"},
	{gKafka, "Kafka topic → Wasm filter → Wasm map → topic ≥ 0.7× a plain franz-go consume → produce loop on the same broker (issue 26)"},
	{gKafkaBen, "Kafka topic → Wasm filter → Wasm map → topic ≥ 3× Benthos on the same broker (issue 26; a franz-go input and output stand in for kafka_franz)"},
	{gCkpt, "The quickstart with exactly-once checkpoints every 1 s ≥ 0.9× the throughput without (issue 25)"},
	{gDirty, "Dirty tracking for incremental checkpoints costs ≤ 3 % on the keyed shuffle (issue 31)"},
	{gIncr, "An incremental checkpoint after 10 % of keys changed writes ≤ 50 % of a full one, in bytes and in time (issue 31)"},
	{gPebSync, "The synchronous part of a Pebble checkpoint ≤ 60 ms at any state size (issue 31)"},
	{gPebRMW, "A read-modify-write keyed aggregation on Pebble with state larger than memory ≥ 200 K records/s on 2 cores (issue 31)"},
}

func ptr(f fig) *fig { return &f }

// How the host bounds guest calls, as the profiles show it.
const (
	mechUnknown  = ""
	mechFuel     = "fuel"
	mechDeadline = "deadline"
)

// Mechanism tells from the profiles' function names how the host bounded
// its guest calls in this run: fuel metering (host/plugin/fuel) or
// wazero's WithCloseOnContextDone with a deadline.
func Mechanism(ps []*Profile) string {
	for _, p := range ps {
		for _, l := range p.Lines {
			switch {
			case strings.Contains(l.Func, "host/plugin.(*fuelBound)"), strings.Contains(l.Func, "host/plugin/fuel.(*Meter)"):
				return mechFuel
			case strings.Contains(l.Func, "CloseModuleOnCanceledOrTimeout"), strings.Contains(l.Func, "host/plugin.(*deadlineCtx)"):
				return mechDeadline
			}
		}
	}
	return mechUnknown
}

// BuildRows pairs the results into the table's rows; mech is Mechanism's
// answer (which sandbox row is the host's).
func BuildRows(rs *Results, mech string) []Row {
	var rows []Row
	add := func(r ...Row) { rows = append(rows, r...) }
	nsRec := func(key string) fig { return fig{key, "ns/record", fmtNsRec} }
	recS := func(key string) fig { return fig{key, "records/s", fmtRate} }
	cpuRec := func(key string) fig { return fig{key, "cpu-ns/rec", fmtCPURec} }

	sec := "Host codec"
	codec := pair(rs, sec, "split + read key + re-encode, batch 1024 (abi Codec vs native structs)",
		nsRec("abi.BenchmarkCodec"), ptr(nsRec("abi.BenchmarkCodecNativeStructs")), cost)
	if allocs, ok := rs.Get("abi.BenchmarkCodec", "allocs/op"); ok && codec.sOK {
		codec.Sluice += fmt.Sprintf(", %.0f allocs", allocs)
		over := []string{}
		if codec.sv > 40 {
			over = append(over, fmt.Sprintf("%s vs ≤ 40 ns (%.0f %% over)", fmtNs(codec.sv), 100*(codec.sv/40-1)))
		}
		if allocs > 0 {
			over = append(over, fmt.Sprintf("%.0f allocs per batch", allocs))
		}
		codec = judged(codec, gCodec, "≤ 40 ns/rec, 0 allocs", len(over) == 0, strings.Join(over, "; "))
	} else {
		codec = judged(codec, gCodec, "≤ 40 ns/rec, 0 allocs", false, "")
	}
	add(codec,
		pair(rs, sec, "HASH channel of a key hash (partition HashChannel)", fig{"partition.BenchmarkHashChannel", "ns/op", fmtNs}, nil, none))

	sec = "One Wasm operator, batch 1024, through the host (double: keep amount > 0 and double it; valid: keep amount > 0; each guest batch alternates with the native one)"
	lt := "plugins/langtest.BenchmarkFilterBatch1024"
	// guest is the row of BenchmarkFilterBatch1024's sub-benchmark sub: the
	// guest's ns/record against the native twin timed alternately with it,
	// the ratio the median of the runs' own x-native
	guest := func(name, sub string) Row {
		key := lt + "/" + sub
		return pair(rs, sec, name, nsRec(key), &fig{key, "native-ns/record", fmtNsRec}, cost).paired(rs, key, "x-native")
	}
	add(guest("filter+map (double), Go (Go SDK, wasip1)", "double-go").maxRatio(gGoSDK, 4),
		guest("  the same in Go with no SDK (raw ABI, the host's index: the floor of Go's wasm code)", "double-go-raw"),
		guest("filter+map (double), C", "double-c").maxRatio(gCompiled, 1.5),
		guest("filter+map (double), Rust", "double-rust").maxRatio(gCompiled, 1.5),
		guest("filter+map (double), AssemblyScript", "double-as").maxRatio(gCompiled, 1.5),
		guest("filter (valid), Go (Go SDK, wasip1)", "go").maxRatio(gGoSDK, 4),
		guest("filter (valid), C", "c").maxRatio(gCompiled, 1.5),
		guest("filter (valid), Rust", "rust").maxRatio(gCompiled, 1.5),
		guest("filter (valid), AssemblyScript", "as").maxRatio(gCompiled, 1.5),
		guest("WAT identity (hand-written, checks every envelope)", "wat-identity"),
		pair(rs, sec, "WAT filter + double (host/plugin FilterMap)", nsRec("host/plugin.BenchmarkFilterMap/wasm"), ptr(nsRec("host/plugin.BenchmarkFilterMap/native")), cost),
		pair(rs, sec, "  same, output check off", nsRec("host/plugin.BenchmarkFilterMap/wasm-unchecked-output"), ptr(nsRec("host/plugin.BenchmarkFilterMap/native")), cost),
		pair(rs, sec, "Go plugins valid → enrich (host/plugin GoSDK)", nsRec("host/plugin.BenchmarkGoSDK/wasm"), ptr(nsRec("host/plugin.BenchmarkGoSDK/native")), cost).maxRatio(gGoSDK, 4),
		pair(rs, sec, "Go SDK filter + double run natively, no Wasm (sdk/go FilterMap)", nsRec("sdk/go.BenchmarkFilterMap/sdk"), ptr(nsRec("sdk/go.BenchmarkFilterMap/native")), cost),
		pair(rs, sec, "one call, one record, no-op guest (host/plugin CallOverhead)", fig{"host/plugin.BenchmarkCallOverhead/wasm", "ns/op", fmtNs}, ptr(fig{"host/plugin.BenchmarkCallOverhead/native", "ns/op", fmtNs}), cost))

	sec = "Chains and edges (engine runs, replayed transactions → … → discard)"
	c3 := "host/runtime.BenchmarkChain3/"
	add(pair(rs, sec, "chain of 3 C operators (valid → enrich → valid), fused", recS(c3+"wasm-fused"), ptr(recS(c3+"native-fused")), rate).maxRatio(gChain, 2),
		pair(rs, sec, "same, not fused (chaining: false: 4 queues)", recS(c3+"wasm-unfused"), ptr(recS(c3+"native-unfused")), rate),
		pair(rs, sec, "Wasm chain: not fused vs fused", recS(c3+"wasm-unfused"), ptr(recS(c3+"wasm-fused")), rate),
		pair(rs, sec, "one non-chained edge: source → map ⇢ sink vs fused (Edge; ratio column: the edge's CPU)", cpuRec("host/runtime.BenchmarkEdge/edge"), ptr(cpuRec("host/runtime.BenchmarkEdge/fused")), diff).note("limit: +6–14 cpu-ns per edge"),
		pair(rs, sec, "rebalance 1 → 2, per-record routing, vs fused (Edge)", cpuRec("host/runtime.BenchmarkEdge/rebalance-1to2"), ptr(cpuRec("host/runtime.BenchmarkEdge/fused")), diff).note("a per-record channel: ~50 ns"))

	sec = "Keyed shuffle (sources → HASH accountId → keyed sum → discard) vs native structs + goroutines"
	ks := "host/runtime.BenchmarkKeyedShuffleParallelism/"
	kn := "host/runtime.BenchmarkKeyedShuffleNativeParallelism/"
	for _, p := range []string{"p1", "p2", "p4"} {
		add(pair(rs, sec, "parallelism "+p[1:], recS(ks+p), ptr(recS(kn+p)), rate))
	}
	bp := bestOf(rs, ks+"p1", ks+"p2", ks+"p4")
	add(pair(rs, sec, "the best of these (parallelism "+bp[len(ks)+1:]+") vs native at the same parallelism", recS(bp), ptr(recS(kn+bp[len(ks):])), rate).minValue(gShuffle, 20e6, fmtRate))
	add(pair(rs, sec, "sluice scaling 1 → 2 subtasks", recS(ks+"p2"), ptr(recS(ks+"p1")), faster),
		pair(rs, sec, "sluice scaling 1 → 4 subtasks", recS(ks+"p4"), ptr(recS(ks+"p1")), faster),
		pair(rs, sec, "native scaling 1 → 2 (the limit on this machine)", recS(kn+"p2"), ptr(recS(kn+"p1")), faster),
		pair(rs, sec, "Wasm chain of 3 (C, fused) scaling 1 → 2 subtasks", recS(c3+"wasm-fused-p2"), ptr(recS(c3+"wasm-fused")), faster).minRatio(gScale, 1.8),
		pair(rs, sec, "  its CPU per record, 2 subtasks vs 1 (≈ 1× with a low speed-up means cores busy elsewhere)", cpuRec(c3+"wasm-fused-p2"), ptr(cpuRec(c3+"wasm-fused")), cost),
		pair(rs, sec, "native chain of 3 scaling 1 → 2 subtasks", recS(c3+"native-fused-p2"), ptr(recS(c3+"native-fused")), faster))

	sec = "Sandboxing (fuel metering vs unmetered, 1024 records per call: host/plugin/fuel Overhead on a WAT filter; plugins/langtest Sandbox on the example plugins through the host)"
	fu := "host/plugin/fuel.BenchmarkOverhead/filter1024/"
	ns := func(key string) fig { return fig{key, "ns/op", fmtNs} }
	fuelRow := pair(rs, sec, "fuel metering vs unmetered", ns(fu+"fuel"), ptr(ns(fu+"unmetered")), cost)
	codRow := pair(rs, sec, "WithCloseOnContextDone + per-call deadline vs unmetered", ns(fu+"close-on-done"), ptr(ns(fu+"unmetered")), cost)
	switch mech {
	case mechFuel:
		fuelRow.Name += " (the host's mechanism in this run)"
		codRow = codRow.note("reference: the mechanism fuel replaced")
		fuelRow = fuelRow.maxRatio(gSandbox, 1.5)
	case mechDeadline:
		codRow.Name += " (the host's mechanism in this run)"
		fuelRow = fuelRow.note("reference: the candidate replacement")
		codRow = codRow.maxRatio(gSandbox, 1.5)
	default:
		fuelRow, codRow = fuelRow.maxRatio(gSandbox, 1.5), codRow.maxRatio(gSandbox, 1.5)
	}
	add(fuelRow, codRow)
	// The example plugins through two Hosts, one with Interruption fuel
	// (the default) and one with "none", batches alternating: compiled
	// code has calls in its loops, which the WAT filter has not. Judged
	// whatever the host's default: the benchmark names its mechanism.
	sb := "plugins/langtest.BenchmarkSandbox/"
	unm := func(key string) *fig { return &fig{key, "unmetered-ns/record", fmtNsRec} } // measured interleaved with key
	for _, v := range []struct{ key, name string }{
		{"double-c", "C double"}, {"double-rust", "Rust double"}, {"double-as", "AssemblyScript double"}, {"double-go", "Go double (Go SDK)"},
		{"c", "C valid"}, {"rust", "Rust valid"}, {"as", "AssemblyScript valid"}, {"go", "Go valid (Go SDK)"},
	} {
		add(pair(rs, sec, v.name+": fuel (the default) vs Interruption none", nsRec(sb+v.key), unm(sb+v.key), cost).paired(rs, sb+v.key, "x-unmetered").maxRatio(gSandbox, 1.5))
	}

	sec = "Whole pipeline: quickstart (generator → Wasm valid → Wasm enrich → keyBy → sum → discard), 2 cores"
	q := "host/runtime.BenchmarkQuickstart"
	add(pair(rs, sec, "Go plugins vs native Go loop", recS(q+"/go"), ptr(recS(q+"Native")), rate).minValue(gPipeGo, 1.5e6, fmtRate),
		pair(rs, sec, "C plugins vs native Go loop", recS(q+"/c"), ptr(recS(q+"Native")), rate).minValue(gPipeC, 5e6, fmtRate))
	bb := bestBenthos(rs)
	add(pair(rs, sec, "C plugins vs Benthos (generate → bloblang filter + double → drop)", recS(q+"/c"), ptr(recS(bb)), faster).minRatio(gBenthos, 10),
		pair(rs, sec, "Go plugins vs Benthos", recS(q+"/go"), ptr(recS(bb)), faster).minRatio(gBenthos, 10),
		pair(rs, sec, "the transactions generator alone (connector Generator)", recS("host/connector.BenchmarkGenerator/transactions"), nil, none))

	add(nexmarkRows(rs)...)

	sec = "Kafka: topic → Wasm valid → Wasm enrich → topic (bounded: latest, parallelism 2, host run in-process), in-process kfake broker"
	kb, bk := "cmd/host.BenchmarkKafka/", "bench/benthos.BenchmarkBenthosKafka/franz-go"
	steadyS := func(key string) fig { return fig{key, "steady-records/s", fmtRate} }
	add(pair(rs, sec, "Go plugins vs a plain franz-go consume → produce loop (the limit)", recS(kb+"sluice"), ptr(recS(kb+"franz-go")), faster).minRatio(gKafka, 0.7),
		pair(rs, sec, "same, from the first output record on (either side's start left out)", steadyS(kb+"sluice"), ptr(steadyS(kb+"franz-go")), faster),
		pair(rs, sec, "CPU per input record, the whole process (broker included)", cpuRec(kb+"sluice"), ptr(cpuRec(kb+"franz-go")), cost),
		pair(rs, sec, "Go plugins vs Benthos (bloblang filter + enrich; a franz-go input and output stand in for kafka_franz)", recS(kb+"sluice"), ptr(recS(bk)), faster).minRatio(gKafkaBen, 3),
		pair(rs, sec, "  CPU per input record vs Benthos's, the whole process (broker included)", cpuRec(kb+"sluice"), ptr(cpuRec(bk)), cost))

	sec = "Batch-size sweep: C valid through the host vs native on the same bytes"
	for _, n := range []string{"1", "16", "256", "1024", "4096"} {
		add(pair(rs, sec, "batch "+n, nsRec("plugins/langtest.BenchmarkBatchSweep/c/"+n), ptr(nsRec("plugins/langtest.BenchmarkBatchSweep/native/"+n)), cost))
	}
	if len(rows) > 0 {
		if note := sweepNote(rs); note != "" {
			rows[len(rows)-1] = rows[len(rows)-1].note(note)
		}
	}

	sec = "Latency source → sink at 20 000 records/s (map chained to the source, one edge, native operators)"
	for _, l := range []struct{ name, label string }{
		{"linger0", "linger 0 (batch size 1: sent at once)"}, {"linger1ms", "linger 1 ms"},
		{"linger5ms", "linger 5 ms (default)"}, {"linger20ms", "linger 20 ms"},
	} {
		key := "host/runtime.BenchmarkLatency/" + l.name
		row := pair(rs, sec, l.label, fig{key, "p50-us", fmtUs}, nil, none)
		if row.sOK {
			p99, _ := rs.Get(key, "p99-us")
			mx, _ := rs.Get(key, "max-us")
			got, _ := rs.Get(key, "records/s")
			row.Sluice = fmt.Sprintf("p50 %s · p99 %s · max %s", fmtUs(row.sv), fmtUs(p99), fmtUs(mx))
			row.Baseline = fmt.Sprintf("(%s achieved)", fmtRate(got))
		}
		add(row)
	}

	sec = "Checkpoints (issue 25): host run with the job master writing each checkpoint to disk; a 1 M-key keyed sum's state; a restart after kill -9"
	qc := "cmd/host.BenchmarkRunQuickstartCheckpoints/"
	ck := pair(rs, sec, "quickstart → discard, exactly-once checkpoints every 1 s vs none (records/s over the job's duration)",
		recS(qc+"exactly-once-1s"), ptr(recS(qc+"none")), faster).minRatio(gCkpt, 0.9)
	if n, ok := rs.Get(qc+"exactly-once-1s", "checkpoints"); ok && ck.sOK {
		ck.Sluice += fmt.Sprintf(", %.0f checkpoints", n)
		if n == 0 { // a run shorter than the interval (-quick) checkpointed nothing: no verdict
			ck.Met, ck.Verdict = nil, "not measured: no checkpoint completed in the run"
		}
	}
	add(ck)
	snap := pair(rs, sec, "snapshot of 1 M keys in one subtask (host/runtime KeyedStore SnapshotKeyGroups)",
		fig{"host/runtime.BenchmarkKeyedStoreSnapshot1M/snapshot", "ns/op", fmtNs}, nil, none)
	if bytes, ok := rs.Get("host/runtime.BenchmarkKeyedStoreSnapshot1M/snapshot", "bytes"); ok && snap.sOK {
		snap.Sluice += ", " + fmtBytes(bytes)
	}
	add(snap,
		pair(rs, sec, "  restore of it (RestoreKeyGroups)", fig{"host/runtime.BenchmarkKeyedStoreSnapshot1M/restore", "ns/op", fmtNs}, nil, none),
		pair(rs, sec, "write + fsync + publish 32 MiB of state, 128 key groups (host/checkpoint Write1MKeys)", fig{"host/checkpoint.BenchmarkWrite1MKeys", "ns/op", fmtNs}, nil, none),
		pair(rs, sec, "open + restore all 128 key groups (host/checkpoint Restore1MKeys)", fig{"host/checkpoint.BenchmarkRestore1MKeys", "ns/op", fmtNs}, nil, none),
		pair(rs, sec, "restart to the first output after kill -9 (host run --from latest: process, plugin load, restore, first batch)", fig{"cmd/host.BenchmarkRestartAfterKill", "restart-ms", func(ms float64) string { return fmtNs(ms * 1e6) }}, nil, none))

	sec = "Incremental checkpoints (issue 31): the heap backend's dirty tracking and its checkpoints of what changed"
	dt := "host/runtime.BenchmarkDirtyTracking/"
	add(pair(rs, sec, "keyed shuffle, checkpoints every 100 ms: dirty tracking on vs off (CPU per record)",
		fig{dt + "on", "cpu-ns/rec", fmtNsRec}, ptr(fig{dt + "off", "cpu-ns/rec", fmtNsRec}), cost).maxRatio(gDirty, 1.03),
		pair(rs, sec, "  the write path alone: one KeyedStore Put, tracking on vs off", fig{"host/runtime.BenchmarkDirtyTrackingStore/on", "ns/op", fmtNs},
			ptr(fig{"host/runtime.BenchmarkDirtyTrackingStore/off", "ns/op", fmtNs}), cost))
	ic := "host/runtime.BenchmarkIncrementalCheckpoint/"
	add(pair(rs, sec, "checkpoint of 200 000 keys after 10 % changed, incremental vs full: bytes written",
		fig{ic + "incremental", "bytes", fmtBytes}, ptr(fig{ic + "full", "bytes", fmtBytes}), cost).maxRatio(gIncr, 0.5),
		pair(rs, sec, "  the same: time to snapshot, write, fsync and publish",
			fig{ic + "incremental", "ns/op", fmtNs}, ptr(fig{ic + "full", "ns/op", fmtNs}), cost).maxRatio(gIncr, 0.5))
	rows = append(rows, pebbleRows(rs)...)
	return rows
}

// bestOf is the key of keys with the most records/s (the first when none
// has a figure).
func bestOf(rs *Results, keys ...string) string {
	best, bv := keys[0], 0.0
	for _, k := range keys {
		if v, ok := rs.Get(k, "records/s"); ok && v > bv {
			best, bv = k, v
		}
	}
	return best
}

// bestBenthos is the Benthos variant with the most records/s (the
// generator's default batch of 1, or batches of 1024).
func bestBenthos(rs *Results) string {
	return bestOf(rs, "bench/benthos.BenchmarkBenthos/batch1024", "bench/benthos.BenchmarkBenthos/batch1")
}

// sweepNote says where the per-call cost stops mattering: the smallest
// batch within 25 % of the 4096 figure, and the per-call cost estimated
// from batch 1 minus batch 4096.
func sweepNote(rs *Results) string {
	k := "plugins/langtest.BenchmarkBatchSweep/c/"
	big, ok := rs.Get(k+"4096", "ns/record")
	one, ok1 := rs.Get(k+"1", "ns/record")
	if !ok || !ok1 {
		return ""
	}
	at := ""
	for _, n := range []string{"1", "16", "256", "1024", "4096"} {
		if v, ok := rs.Get(k+n, "ns/record"); ok && v <= 1.25*big {
			at = n
			break
		}
	}
	return fmt.Sprintf("per call ≈ %s (batch 1 − batch 4096); within 25 %% of batch 4096 from batch %s", fmtNs(one-big), at)
}

// StartRow is one guest language's start-up figures.
type StartRow struct {
	Guest                   string
	Cold, Warm, Instantiate string
	Linear, Heap, Total     string
	WarmGoal, WarmVerdict   string
	MemGoal, MemVerdict     string
	WarmMet, MemMet         *bool
	warm, total             float64
	warmOK, memOK           bool
}

// BuildStartRows gathers compile, instantiate and memory figures per guest.
func BuildStartRows(rs *Results) []StartRow {
	p := "host/plugin."
	type src struct{ cold, warm, inst, mem string }
	guests := []struct {
		name  string
		small bool
		src
	}{
		{"WAT (identity)", true, src{p + "BenchmarkStartCold/wat", p + "BenchmarkStartWarmCache/wat", p + "BenchmarkInstantiate/wat", p + "BenchmarkMemoryPerInstance/wat"}},
		{"C (valid)", true, src{p + "BenchmarkStartCold/c", p + "BenchmarkStartWarmCacheLangs/c", p + "BenchmarkInstantiateLangs/c", p + "BenchmarkMemoryPerInstanceLangs/c"}},
		{"Rust (valid)", true, src{p + "BenchmarkStartCold/rust", p + "BenchmarkStartWarmCacheLangs/rust", p + "BenchmarkInstantiateLangs/rust", p + "BenchmarkMemoryPerInstanceLangs/rust"}},
		{"AssemblyScript (valid)", true, src{p + "BenchmarkStartCold/as", p + "BenchmarkStartWarmCacheLangs/as", p + "BenchmarkInstantiateLangs/as", p + "BenchmarkMemoryPerInstanceLangs/as"}},
		{"Go (valid)", false, src{p + "BenchmarkStartCold/go", p + "BenchmarkStartWarmCache/go", p + "BenchmarkInstantiate/go", p + "BenchmarkMemoryPerInstance/go"}},
	}
	var out []StartRow
	for _, g := range guests {
		r := StartRow{Guest: g.name}
		get := func(key, unit string, format func(float64) string) (string, float64, bool) {
			v, ok := rs.Get(key, unit)
			if !ok {
				return "n/a", 0, false
			}
			return format(v), v, true
		}
		r.Cold, _, _ = get(g.cold, "ns/op", fmtNs)
		r.Warm, r.warm, r.warmOK = get(g.warm, "ns/op", fmtNs)
		r.Instantiate, _, _ = get(g.inst, "ns/op", fmtNs)
		var lin, heap float64
		var lok, hok bool
		r.Linear, lin, lok = get(g.mem, "linear-B/instance", fmtBytes)
		r.Heap, heap, hok = get(g.mem, "heap-B/instance", fmtBytes)
		r.memOK = lok && hok
		r.total = lin + heap
		r.Total = "n/a"
		if r.memOK {
			r.Total = fmtBytes(r.total)
		}
		warmGoal, memGoal := 1e6, float64(1<<20)
		if !g.small {
			warmGoal, memGoal = 100e6, 8<<20
		}
		r.WarmGoal, r.MemGoal = "< "+fmtNs(warmGoal), "≤ "+fmtBytes(memGoal)
		r.WarmVerdict, r.MemVerdict = "not measured", "not measured"
		if r.warmOK {
			ok := r.warm < warmGoal
			r.WarmMet = &ok
			r.WarmVerdict = "met"
			if !ok {
				r.WarmVerdict = fmt.Sprintf("missed: %.1f× the goal", r.warm/warmGoal)
			}
		}
		if r.memOK {
			ok := r.total <= memGoal
			r.MemMet = &ok
			r.MemVerdict = "met"
			if !ok {
				r.MemVerdict = fmt.Sprintf("missed: %.0f %% over", 100*(r.total/memGoal-1))
			}
		}
		out = append(out, r)
	}
	return out
}
