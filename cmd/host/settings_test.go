package main

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/sluicehq/sluice/host/plugin"
)

// TestPluginCommandsTakeEveryPluginSetting: the plugin host of every
// plugin subcommand has every plugin setting of the host settings (here
// from SLUICE_* variables), the restart policy too: host plugin run copied
// the settings by hand and dropped it.
func TestPluginCommandsTakeEveryPluginSetting(t *testing.T) {
	cache := t.TempDir()
	for k, v := range map[string]string{
		"SLUICE_MEMORY_PAGES": "300", "SLUICE_CALL_TIMEOUT": "7s", "SLUICE_CALL_FUEL": "123456",
		"SLUICE_FUEL_RATE": "999999", "SLUICE_MAX_OUTPUT_BYTES": "1234567", "SLUICE_MAX_MODULE_BYTES": "2345678",
		"SLUICE_CACHE_DIR": cache, "SLUICE_RESTART_ATTEMPTS": "9", "SLUICE_RESTART_DELAY": "7ms",
		"SLUICE_RESTART_WINDOW": "70s",
	} {
		t.Setenv(k, v)
	}
	want := plugin.DefaultConfig()
	want.MemoryLimitPages, want.CallTimeout, want.CallFuel, want.FuelRate = 300, 7*time.Second, 123456, 999999
	want.MaxOutputBytes, want.MaxModuleBytes, want.CacheDir = 1234567, 2345678, cache
	want.RestartAttempts, want.RestartDelay, want.RestartWindow = 9, 7*time.Millisecond, 70*time.Second
	for _, sub := range []string{"inspect", "run", "check"} {
		cmd, _, err := newRootCmd().Find([]string{"plugin", sub})
		if err != nil || cmd.Name() != sub {
			t.Fatalf("plugin %s: %v", sub, err)
		}
		if err := cmd.ParseFlags(nil); err != nil {
			t.Fatal(err)
		}
		cmd.SetContext(context.Background())
		h, err := newPluginHost(cmd)
		if err != nil {
			t.Fatalf("plugin %s: %v", sub, err)
		}
		if got := h.Config(); !reflect.DeepEqual(got, want) {
			t.Errorf("plugin %s: plugin host config\n got %+v\nwant %+v", sub, got, want)
		}
		_ = h.Close(context.Background())
	}
}
