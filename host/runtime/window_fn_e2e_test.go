package runtime_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/runtime"
)

// windowFnCheckpointJob: bids per auction in 1 s tumbling windows of
// event time, the window's function a Wasm plugin (FN), paced so that a
// checkpoint lands while windows are open.
const windowFnCheckpointJob = `
version: 1
name: window-fn-checkpoint
parallelism: 1
plugins:
  reduce-sum: { path: ../plugins/reduce-sum/reduce-sum.wasm, config: { field: price } }
  top-bids: { path: ../plugins/top-bids/top-bids.wasm, config: { n: 2 } }
operators:
  - id: src
    source: { type: generator, preset: bids, count: 30000, rate: 30000, watermarks: { strategy: bounded-out-of-orderness, max-out-of-orderness: 0s } }
  - id: win
    key-by: auction
    window: { type: tumbling, size: 1s }
    FN
  - id: out
    sink: { type: discard }
`

// TestWindowPluginStateCheckpointedAndRescaled: the contents of windows
// whose function is a Wasm plugin (a reduce's accumulators, a
// process-window's records) are keyed state: a checkpoint taken while
// windows are open and restored with the window at parallelism 2 gives,
// with what the sink committed before it, exactly the windows of an
// uninterrupted run (a lost or doubled record would change a sum or the
// top two bids).
func TestWindowPluginStateCheckpointedAndRescaled(t *testing.T) {
	for _, fn := range []string{"reduce: reduce-sum", "process: top-bids"} {
		t.Run(fn, func(t *testing.T) {
			src := strings.Replace(windowFnCheckpointJob, "FN", fn, 1)
			g, plugins := planCheckpointJob(t, src, 0)
			whole := newMarkConnectors()
			if _, err := runtime.Run(context.Background(), g, runtime.Deps{Connectors: whole, Plugins: plugins}); err != nil {
				t.Fatal(err)
			}
			want := jsonSet(t, whole.committed(0))
			got := jsonSet(t, checkpointThenRestore(t, src, 300, 2, "win"))
			if len(want) < 1000 {
				t.Fatalf("only %d windows: too few to tell", len(want))
			}
			if !slices.Equal(got, want) {
				missing, extra := diffSorted(want, got)
				t.Fatalf("restored: %d windows, uninterrupted %d; missing %d (e.g. %v), extra %d (e.g. %v)", len(got), len(want), len(missing), first(missing), len(extra), first(extra))
			}
		})
	}
}

func jsonSet(t *testing.T, vals [][]byte) []string {
	t.Helper()
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		j, err := codec.MsgpackToJSON(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(j))
	}
	slices.Sort(out)
	return out
}

func diffSorted(want, got []string) (missing, extra []string) {
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || i < len(want) && want[i] < got[j]:
			missing = append(missing, want[i])
			i++
		case i == len(want) || got[j] < want[i]:
			extra = append(extra, got[j])
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return missing, extra
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
