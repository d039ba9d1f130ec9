package main

import (
	"errors"
	"strconv"

	"github.com/spf13/cobra"
)

// commands holds the constructors of every subcommand; each subcommand file
// appends to it from init, so files never edit each other.
var commands []func() *cobra.Command

func addCommand(c func() *cobra.Command) { commands = append(commands, c) }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "host",
		Short:         "sluice: Flink's execution model with user code in sandboxed WebAssembly",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("config", "", "host settings file (YAML); SLUICE_* environment variables and flags override it")
	// the name the plugin commands took when their --config was the
	// operator's (now --operator-config); it still works everywhere
	root.PersistentFlags().String("host-config", "", "host settings file, the same as --config")
	setVersionFlag(root)
	for _, c := range commands {
		root.AddCommand(c())
	}
	return root
}

// exitCode is an error that carries an exit status and has already printed
// its message (for example lint, which prints every problem then exits 1).
type exitCode int

func (e exitCode) Error() string { return "exit status " + strconv.Itoa(int(e)) }

func asExitCode(err error, ec *exitCode) bool { return errors.As(err, ec) }
