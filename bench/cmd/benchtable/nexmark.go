package main

// Nexmark (issue 27): q7, the highest bid per 10 s tumbling window, and
// q5, the hottest auction per sliding window of 10 s every 2 s, through
// the whole engine (host/runtime BenchmarkNexmark) with the built-in
// window aggregations and with a Wasm window function (plugins/top-bids),
// against one native Go loop doing the same windows over the same
// generator's bids, all in the same run; and each per core (records per
// CPU second) beside Flink's published Nexmark figure per core.

// flinkNexmark is Flink's published Throughput/Cores of the Nexmark
// queries: the Nexmark project's README (nexmark/nexmark README.md,
// "Benchmark Results", Flink 1.13, 8 workers of 8 cores, parallelism 8,
// 100 M events of which 92 % bids, RocksDB with checkpoints every 3
// minutes). Its events are persons, auctions and bids; ours are bids.
var flinkNexmark = map[string]float64{"q5": 22.14e3, "q7": 12.33e3}

const flinkNexmarkSource = "Flink 1.13 on 8 × 8 cores, RocksDB: nexmark/nexmark README"

func nexmarkRows(rs *Results) []Row {
	const sec = "Nexmark (issue 27): generator bids → windows → discard, whole engine at parallelism 2 on 2 cores"
	const key = "host/runtime.BenchmarkNexmark/"
	recS := func(k string) fig { return fig{key + k, "records/s", fmtRate} }
	var rows []Row
	for _, q := range []struct{ id, what string }{
		{"q7", "q7 highest bid, 10 s tumbling window-all"},
		{"q5", "q5 hot items, count per auction over 10 s / 2 s sliding windows, then the max"},
	} {
		rows = append(rows,
			pair(rs, sec, q.what+": built-in max-by vs native Go loop", recS(q.id+"/builtin"), ptr(recS(q.id+"/native")), rate),
			pair(rs, sec, q.what+": Wasm window function (top-bids, Go SDK) vs native Go loop", recS(q.id+"/wasm"), ptr(recS(q.id+"/native")), rate))
		for _, v := range []struct{ k, name string }{{"builtin", "built-in"}, {"wasm", "Wasm window function"}} {
			row := pair(rs, sec, q.id+" "+v.name+", records per CPU second vs Flink's per core", fig{key + q.id + "/" + v.k, "cpu-ns/rec", fmtCPURec}, nil, none)
			flink := flinkNexmark[q.id]
			row.Baseline = fmtRate(flink) + " per core (" + flinkNexmarkSource + ")"
			if row.sOK && row.sv > 0 {
				perCore := 1e9 / row.sv
				row.Sluice = fmtRate(perCore) + " per core"
				row.r, row.rOK = perCore/flink, true
				row.Ratio = fmtRatio(row.r) + " Flink's"
			}
			rows = append(rows, row)
		}
	}
	return rows
}
