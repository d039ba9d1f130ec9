package main

import "fmt"

// pebbleRows are the keyed-state rows of issue 31 (set "state",
// host/state/pebblestate): a read-modify-write aggregation on the heap
// and on Pebble, the synchronous part of a Pebble checkpoint at growing
// state sizes, and the aggregation with state larger than Pebble's
// memory.
func pebbleRows(rs *Results) []Row {
	const p = "host/state/pebblestate."
	sec := "Keyed state (issue 31): a read-modify-write sum per key, the heap vs Pebble; Pebble checkpoints"
	recS := func(key string) fig { return fig{key, "records/s", fmtRate} }
	rows := []Row{
		pair(rs, sec, "read-modify-write, 100 k keys, Pebble vs the heap (calls of 1024)", recS(p+"BenchmarkKeyedAggregation/pebble"), ptr(recS(p+"BenchmarkKeyedAggregation/heap")), rate),
	}
	ms := func(v float64) string { return fmtNs(v * 1e6) }
	for _, size := range []string{"keys-10k", "keys-300k", "keys-3M"} {
		key := p + "BenchmarkNativeCheckpointSync/" + size
		row := pair(rs, sec, "synchronous part of a Pebble checkpoint (flush + db.Checkpoint), "+size[len("keys-"):]+" keys", fig{key, "sync-ms", ms}, nil, none)
		if b, ok := rs.Get(key, "state-bytes"); ok && row.sOK {
			row.Sluice += ", state " + fmtBytes(b)
		}
		rows = append(rows, row.maxValue(gPebSync, 60, ms))
	}
	big := pair(rs, sec, "read-modify-write on Pebble, 2 M keys larger than its 64 MiB of cache and memtable, uniform keys", recS(p+"BenchmarkLargerThanMemory"), nil, none)
	if b, ok := rs.Get(p+"BenchmarkLargerThanMemory", "state-bytes"); ok && big.sOK {
		big.Sluice += fmt.Sprintf(", state %s", fmtBytes(b))
	}
	return append(rows, big.minValue(gPebRMW, 200_000, fmtRate))
}
