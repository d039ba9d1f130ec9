package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/host/settings"
)

// hostSettings reads the host settings for a command: the --config file,
// SLUICE_* environment variables, then the command's own flags named like
// a setting (--slots, --memory-pages, ...), which win.
func hostSettings(cmd *cobra.Command) (settings.Settings, error) {
	return settings.Load(settingsFile(cmd), os.Environ(), cmd.Flags())
}

// settingsFile is the host settings file: --host-config, else --config.
func settingsFile(cmd *cobra.Command) string {
	file, _ := cmd.Flags().GetString("host-config")
	if file == "" {
		file, _ = cmd.Flags().GetString("config")
	}
	return file
}

// addPluginLimitFlags adds the plugin limits a command takes as flags
// named like their settings (hostSettings reads them).
func addPluginLimitFlags(f *pflag.FlagSet) {
	f.Uint32("memory-pages", 0, "memory limit per plugin instance, in 64 KiB pages (default from host settings)")
	f.Duration("call-timeout", 0, "longest each call into a plugin may run, on the clock (default from host settings)")
	f.Int64("call-fuel", 0, "a deterministic CPU budget per plugin call, in fuel units (about one wasm instruction), instead of call-timeout")
	f.String("cache-dir", "", "compiled-plugin cache folder (default from host settings)")
}
