package settings

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// reaches maps each setting (a leaf field of Settings) to the one field of
// plugin.Config ("plugin.X") or runtime.Options ("runtime.X") it sets, or
// to "elsewhere: who reads it" when neither holds it. A setting added to
// Settings and to neither PluginConfig, RuntimeOptions nor this table
// fails TestEverySettingReachesItsOption, as does one mapped to the wrong
// field.
var reaches = map[string]string{
	"Slots":           "elsewhere: the planner (plan.Options.Slots, cmd/host) and the server's slot count",
	"MemoryPages":     "plugin.MemoryLimitPages",
	"CallTimeout":     "plugin.CallTimeout",
	"MaxOutputBytes":  "plugin.MaxOutputBytes",
	"MaxModuleBytes":  "plugin.MaxModuleBytes",
	"CacheDir":        "plugin.CacheDir",
	"BatchSize":       "runtime.BatchSize",
	"BatchBytes":      "runtime.BatchBytes",
	"Linger":          "runtime.Linger",
	"QueueCapacity":   "runtime.QueueCapacity",
	"Seed":            "runtime.Seed",
	"RestartAttempts": "plugin.RestartAttempts",
	"RestartDelay":    "plugin.RestartDelay",
	"RestartWindow":   "plugin.RestartWindow",
	"JobMemory":       "elsewhere: jobplugins.CheckJobMemory before a job starts (cmd/host run)",
	"DataRoots":       "elsewhere: the file connectors' roots (cmd/host run)",
	"FuelRate":        "plugin.FuelRate",
	"CallFuel":        "plugin.CallFuel",
	"StateMemory":     "runtime.StateBytes",
	"StateBackend":    "elsewhere: plan.Options.StateBackend, for a keyed operator whose state: names no backend (cmd/host planOptions)",
	"StateDir":        "elsewhere: plan.Options.StateDir and pebblestate.Backends.Root (cmd/host)",

	"CheckpointInterval":          "elsewhere: CheckpointConfig, under a pipeline's checkpointing: (the job master)",
	"CheckpointMode":              "elsewhere: CheckpointConfig, under a pipeline's checkpointing: (the job master)",
	"CheckpointTimeout":           "elsewhere: CheckpointConfig, under a pipeline's checkpointing: (the job master)",
	"CheckpointMinPause":          "elsewhere: CheckpointConfig, under a pipeline's checkpointing: (the job master)",
	"CheckpointMaxConcurrent":     "elsewhere: CheckpointConfig, under a pipeline's checkpointing: (the job master)",
	"CheckpointTolerableFailures": "elsewhere: CheckpointConfig, under a pipeline's checkpointing: (the job master)",
	"CheckpointRetain":            "elsewhere: CheckpointConfig, under a pipeline's checkpointing: (the job master)",
	"CheckpointStorage":           "elsewhere: CheckpointConfig, under a pipeline's checkpointing: (the job master)",
	"CheckpointUnaligned":         "elsewhere: CheckpointConfig, under a pipeline's checkpointing: (the job master)",
	"CheckpointIncremental":       "runtime.FullCheckpoints",
	"RestartStrategy":             "elsewhere: pipeline.RestartConfig, for a pipeline that names none (the job master)",
}

// notSettings are the fields of plugin.Config and runtime.Options that no
// host setting sets, with why. A field added to either struct must be
// mapped from a setting (reaches) or named here.
var notSettings = map[string]string{
	"plugin.FuelPacer":             "a tenant's shared pacer, made by the server",
	"plugin.Interruption":          "how runaways stop: fuel, always, outside benchmarks",
	"plugin.StderrCap":             "a fixed tail of guest output",
	"plugin.AllowClock":            "guests get deterministic clocks",
	"plugin.AllowRandom":           "guests get deterministic randomness",
	"plugin.CheckOutput":           "always on outside benchmarks",
	"runtime.DrainTimeout":         "the engine's default",
	"runtime.HotKeyShare":          "the summary's default",
	"runtime.FinalCheckpoint":      "set per execution from the checkpoint interval (jobmaster.StartEngine)",
	"runtime.CheckpointMode":       "the job's checkpointing mode, from the pipeline's checkpointing: over checkpoint-mode, set per execution (jobmaster.StartEngine)",
	"runtime.UnalignedCheckpoints": "from the pipeline's checkpointing: unaligned over checkpoint-unaligned, set per execution (jobmaster.StartEngine)",
}

// leaf is one setting: its field name and where it is in Settings.
type leaf struct {
	name  string
	index []int
}

func leaves(t reflect.Type, prefix []int) []leaf {
	var out []leaf
	for i := range t.NumField() {
		f := t.Field(i)
		idx := append(prefix[:len(prefix):len(prefix)], i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, leaves(f.Type, idx)...)
			continue
		}
		out = append(out, leaf{f.Name, idx})
	}
	return out
}

// validOther holds the settings whose valid values perturb cannot make
// from the default by its rule: a name from a list, a duration off by
// default whose least other value is 10ms.
var validOther = map[string]any{
	"CheckpointMode":     "at-least-once",
	"RestartStrategy":    "fixed-delay",
	"StateBackend":       "pebble",
	"CheckpointInterval": time.Second,
}

// perturb changes v to another valid value of its kind.
func perturb(t *testing.T, name string, v reflect.Value) {
	if o, ok := validOther[name]; ok {
		v.Set(reflect.ValueOf(o))
		return
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		if v.Type() == reflect.TypeOf(time.Duration(0)) {
			v.SetInt(v.Int() + int64(3*time.Millisecond))
		} else {
			v.SetInt(v.Int() + 3)
		}
	case reflect.Uint32:
		v.SetUint(v.Uint() + 3)
	case reflect.String:
		v.SetString(v.String() + "-other")
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.ValueOf("other")))
	case reflect.Bool:
		v.SetBool(!v.Bool())
	default:
		t.Fatalf("setting %s: the test cannot change a %s: teach perturb", name, v.Type())
	}
}

// changed names the fields of a and b (both plugin.Config or both
// runtime.Options) that differ, prefixed by what.
func changed(what string, a, b any) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, what+"."+va.Type().Field(i).Name)
		}
	}
	return out
}

// TestEverySettingReachesItsOption changes each setting in turn and checks
// that exactly its own field of the plugin configuration or the engine's
// options changes, and that every field of those is some setting's or
// named as none's: the copies in cmd/host and the server drifted before
// there was one function to copy them (host plugin run dropped the restart
// policy and the state limit).
func TestEverySettingReachesItsOption(t *testing.T) {
	base := Default()
	base.CacheDir = "/cache"
	basePlugin, baseRuntime := base.PluginConfig(), base.RuntimeOptions()
	set := map[string]bool{}
	all := leaves(reflect.TypeOf(base), nil)
	if len(all) < 18 {
		t.Fatalf("found %d settings: the walk lost some", len(all))
	}
	for _, l := range all {
		want, ok := reaches[l.name]
		if !ok {
			t.Errorf("setting %s: not in reaches: map it in PluginConfig or RuntimeOptions (options.go), or say who reads it", l.name)
			continue
		}
		s := base
		s.DataRoots = append([]string(nil), base.DataRoots...)
		perturb(t, l.name, reflect.ValueOf(&s).Elem().FieldByIndex(l.index))
		if err := s.Validate(); err != nil {
			t.Fatalf("setting %s: the changed value is invalid: %v", l.name, err)
		}
		got := append(changed("plugin", basePlugin, s.PluginConfig()), changed("runtime", baseRuntime, s.RuntimeOptions())...)
		if strings.HasPrefix(want, "elsewhere: ") {
			if len(got) > 0 {
				t.Errorf("setting %s changes %v, but reaches says %q", l.name, got, want)
			}
			continue
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("setting %s changes %v, want [%s]", l.name, got, want)
		}
		set[want] = true
	}
	var fields []string
	for _, x := range []struct {
		what string
		v    any
	}{{"plugin", plugin.Config{}}, {"runtime", runtime.Options{}}} {
		typ := reflect.TypeOf(x.v)
		for i := range typ.NumField() {
			fields = append(fields, x.what+"."+typ.Field(i).Name)
		}
	}
	sort.Strings(fields)
	for _, f := range fields {
		if !set[f] && notSettings[f] == "" {
			t.Errorf("%s: no setting sets it and notSettings does not say why: add a setting, or a line to notSettings", f)
		}
		if set[f] && notSettings[f] != "" {
			t.Errorf("%s: a setting sets it, but notSettings says %q", f, notSettings[f])
		}
	}
}

// TestPluginConfigOfTheDefaults: the default settings give a plugin
// configuration the plugin host accepts, with the settings' own defaults.
func TestPluginConfigOfTheDefaults(t *testing.T) {
	s := Default()
	c := s.PluginConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.MemoryLimitPages != 256 || c.MaxOutputBytes != 64<<20 || c.RestartAttempts != 3 || c.CallTimeout != 5*time.Second {
		t.Errorf("plugin config %+v", c)
	}
	if o := s.RuntimeOptions(); o.StateBytes != 1024<<20 || o.BatchSize != 1024 {
		t.Errorf("runtime options %+v", o)
	}
}
