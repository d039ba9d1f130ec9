package jobplugins

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plugin"
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
	// each hint leads to a pipeline lint takes (write map: on a connect
	// was refused in turn: connect is for co-operators)
	for _, c := range []struct {
		plugin abi.Kind
		used   pipeline.Kind
		want   string
	}{
		{abi.KindPartitioner, pipeline.KindMap, "a partitioner goes on an input: partition: { custom: p, key: FIELD }"},
		{abi.KindMap, pipeline.KindFilter, "write map: p"},
		{abi.KindMap, pipeline.KindCoMap, "a map reads one input: write map: p with input: [first, second] (a union) instead of connect, or use a co-map or co-process plugin"},
		{abi.KindCoMap, pipeline.KindMap, "a co-map reads two inputs: write co-map: p with connect: [first, second]"},
		{abi.KindCoProcess, pipeline.KindCoMap, "write co-process: p"},
	} {
		if got := useAs(c.plugin, "p", c.used); got != c.want {
			t.Errorf("a %s used as a %s: %s", c.plugin, c.used, got)
		}
	}
}

// wat compiles ../plugin/testdata/name.wat (host/plugin's fixtures) with
// wat2wasm (Debian package wabt) and loads it into a new Host whose calls
// stop at CallFuel units.
func wat(t *testing.T, name string, callFuel int64) *plugin.Module {
	t.Helper()
	out := filepath.Join(t.TempDir(), name+".wasm")
	if msg, err := exec.Command("wat2wasm", filepath.Join("..", "plugin", "testdata", name+".wat"), "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s.wat (install wabt): %v\n%s", name, err, msg)
	}
	cfg := plugin.DefaultConfig()
	cfg.CallFuel = callFuel
	h, err := plugin.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	m, err := h.LoadFile(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCheckUsesWantsAKeyByForKeyedState: a plugin whose describe says it
// keeps keyed state, run without a key-by, is refused before the job
// starts, at the operator's line; with a key-by it passes.
func TestCheckUsesWantsAKeyByForKeyedState(t *testing.T) {
	m := wat(t, "keyedproc", 0)
	if info, err := m.Inspect(context.Background()); err != nil || !info.Keyed {
		t.Fatalf("inspect: keyed %v, %v", info.Keyed, err)
	}
	const src = `version: 1
name: keyed
plugins:
  kp: { path: kp.wasm }
operators:
  - id: src
    source: { type: generator, preset: sequence, count: 10 }
  - id: p
    %s
    process: kp
  - id: out
    sink: { type: discard }
`
	for _, keyBy := range []string{"parallelism: 1", "key-by: n"} {
		p, err := pipeline.Parse("keyed.yaml", []byte(fmt.Sprintf(src, keyBy)), pipeline.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = CheckUses(context.Background(), p, map[string]*plugin.Module{"kp": m})
		if keyBy == "key-by: n" {
			if err != nil {
				t.Errorf("with a key-by: %v", err)
			}
			continue
		}
		want := `keyed.yaml:10:5: operator "p" uses plugin "kp", which keeps keyed state (its sluice_describe), but has no key-by: keyed state needs one (add key-by: FIELD to the operator)`
		if err == nil || err.Error() != want {
			t.Errorf("without a key-by:\n got %v\nwant %s", err, want)
		}
	}
}

// TestCheckUsesNamesThePluginOnce: a describe that fails (here, one that
// never returns, stopped at its fuel budget) is a PluginError, which names
// the plugin already: CheckUses adds no second `plugin "kp":` before it.
func TestCheckUsesNamesThePluginOnce(t *testing.T) {
	m := wat(t, "spindescribe", 1<<20).Named("kp")
	p, err := pipeline.Parse("f.yaml", []byte("version: 1\nname: f\nplugins:\n  kp: { path: kp.wasm }\noperators:\n  - id: src\n    source: { type: generator, preset: sequence, count: 10 }\n  - id: v\n    process: kp\n  - id: out\n    sink: { type: discard }\n"), pipeline.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = CheckUses(context.Background(), p, map[string]*plugin.Module{"kp": m})
	if err == nil || !strings.HasPrefix(err.Error(), `plugin "kp" `) || strings.Count(err.Error(), `plugin "kp"`) != 1 || !errors.Is(err, plugin.ErrDeadline) {
		t.Fatalf("got %v, want one `plugin \"kp\"` at the start of a deadline", err)
	}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{errors.New(`plugin "kp": trap`), true},
		{errors.New(`plugin "kp" export sluice_describe: trap`), true},
		{errors.New(`plugin "kpx": trap`), false},
		{errors.New(`open kp.wasm: no such file`), false},
	} {
		if got := namesPlugin(c.err, "kp"); got != c.want {
			t.Errorf("namesPlugin(%q): %v", c.err, got)
		}
	}
}
