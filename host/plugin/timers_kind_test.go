package plugin

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

// A plugin that registers timers runs as a keyed process: on_timer's
// output has any count, which a map's or a filter's output check would
// not hold, so plugins/timeout used as a map is refused at open, naming
// the import and the kind; as a process it opens.
func TestTimersOnlyForProcess(t *testing.T) {
	h := newHost(t, nil)
	m, err := h.LoadFile(context.Background(), filepath.Join("..", "..", "plugins", "timeout", "timeout.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	st := runtime.NewKeyedStore(128, 0, 127)
	for _, kind := range []pipeline.Kind{pipeline.KindMap, pipeline.KindFilter} {
		op := m.NewOperator(context.Background(), "t", nil)
		err := op.Open(&runtime.OpenContext{Operator: "t", Kind: kind, State: st, Parallelism: 1, MaxParallelism: 128})
		op.Close(nil)
		if err == nil || !strings.Contains(err.Error(), "timer_register") || !strings.Contains(err.Error(), "runs here as a "+string(kind)) {
			t.Errorf("as a %s: %v", kind, err)
		}
	}
	open(t, m, runtime.OpenContext{Kind: pipeline.KindProcess, State: st})
}
