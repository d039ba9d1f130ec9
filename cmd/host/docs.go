package main

import (
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/server"
)

func init() { addCommand(newDocsCmd) }

// newDocsCmd writes the reference pages generated from the code. It is
// for the project's own docs (TestDocsConnectorsMatchTheSpecs holds
// docs/connectors.md to it), so help does not list it.
func newDocsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:    "docs",
		Short:  "Print the reference pages generated from the code",
		Hidden: true,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "connectors",
		Short: "Print docs/connectors.md: every source and sink, from their specs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write([]byte(connectorsPage()))
			return err
		},
	})
	return cmd
}

// connectorsPage is docs/connectors.md: the CLI's connectors and host
// serve's.
func connectorsPage() string { return spec.Reference(connector.Set(), server.Connectors()) }
