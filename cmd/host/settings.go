package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/host/settings"
)

// hostSettings reads the host settings for a command: the --config file,
// SLUICE_* environment variables, then the command's own flags named like
// a setting (--slots, --memory-pages, ...), which win.
func hostSettings(cmd *cobra.Command) (settings.Settings, error) {
	file, _ := cmd.Flags().GetString("config")
	return settings.Load(file, os.Environ(), cmd.Flags())
}
