package plugin

import (
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
)

// TestServes: which plugin kind may run which operator kind. A process
// plugin (the general kind) runs flat-map and the connected kinds too: the
// C, Rust and AssemblyScript SDKs describe a two-input plugin as a process
// taking port 1, and refusing it broke every co-map and co-process built
// with them. The clear mismatches stay refused.
func TestServes(t *testing.T) {
	for _, tc := range []struct {
		plugin abi.Kind
		op     pipeline.Kind
		want   bool
	}{
		{abi.KindMap, pipeline.KindMap, true},
		{abi.KindFilter, pipeline.KindFilter, true},
		{abi.KindCoMap, pipeline.KindCoMap, true},
		{abi.KindProcess, pipeline.KindProcess, true},
		{abi.KindProcess, pipeline.KindCoProcess, true},
		{abi.KindProcess, pipeline.KindCoMap, true},
		{abi.KindProcess, pipeline.KindFlatMap, true},
		{abi.KindReduce, pipeline.KindReduce, true},
		{abi.KindMap, pipeline.KindFilter, false},
		{abi.KindFilter, pipeline.KindMap, false},
		{abi.KindFlatMap, pipeline.KindMap, false},
		{abi.KindProcess, pipeline.KindMap, false},
		{abi.KindMap, pipeline.KindCoMap, false},
		{abi.KindPartitioner, pipeline.KindMap, false},
		{abi.KindKeySelector, pipeline.KindProcess, false},
	} {
		if got := serves(tc.plugin, tc.op); got != tc.want {
			t.Errorf("a %s plugin as a %s: %v, want %v", tc.plugin, tc.op, got, tc.want)
		}
	}
	if got := useAs(abi.KindPartitioner, "p"); got != "a partitioner goes on an input: partition: { custom: p, key: FIELD }" {
		t.Errorf("partitioner: %s", got)
	}
}
