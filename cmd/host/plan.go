package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/host/cluster"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
	"github.com/sluicehq/sluice/host/settings"
)

func init() { addCommand(newPlanCmd) }

func newPlanCmd() *cobra.Command {
	var format string
	var roots []string
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Print how a pipeline is planned: tasks, chains, edges, key groups, slots",
		Long: `Plan prints the job graph Flink would build for the pipeline: tasks and the
operators chained into each, every edge with its ship strategy and, when it
is not chained, the reason; key-group ranges; the slots the job needs and
which subtasks share each slot; and hints; for a Kafka source whose brokers
answer within 2 s, which subtask reads which partitions. --format json and --format dot
print the same plan for programs and Graphviz. A pipeline that cannot be
planned exits 1 with every reason.

--cluster BROKERS lays the job out for several instances sharing it over
Kafka (docs/cluster.md): which edges cross instances and the internal topic
each uses, the consumer group, the stages and their units, and with
--instances N a sample assignment of units, key groups and partitions to N
instances; with --format json it prints that layout as the document.
host run --cluster runs the job so (docs/cluster.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			write, ok := map[string]func(*cobra.Command, *plan.JobGraph) error{
				"text": func(c *cobra.Command, g *plan.JobGraph) error { return plan.WriteText(c.OutOrStdout(), g) },
				"json": func(c *cobra.Command, g *plan.JobGraph) error { return plan.WriteJSON(c.OutOrStdout(), g) },
				"dot":  func(c *cobra.Command, g *plan.JobGraph) error { return plan.WriteDOT(c.OutOrStdout(), g) },
			}[format]
			if !ok {
				return fmt.Errorf("unknown --format %q: use text, json or dot", format)
			}
			hs, err := hostSettings(cmd)
			if err != nil {
				return err
			}
			p, err := readPipeline(args[0], roots)
			if err == nil {
				err = missingPlugins(args[0], p)
			}
			if err != nil {
				return planFailed(cmd, err)
			}
			opts, err := planOptions(cmd, hs)
			if err != nil {
				return err
			}
			g, err := plan.Plan(p, opts)
			if err != nil {
				return planFailed(cmd, err)
			}
			layout, instances, err := clusterLayout(cmd, g)
			if err != nil {
				return planFailed(cmd, err)
			}
			if layout != nil && format != "text" {
				if format != "json" {
					return planFailed(cmd, fmt.Errorf("--cluster prints text or json, not %s", format))
				}
				return cluster.WriteJSON(cmd.OutOrStdout(), layout, instances)
			}
			if err := write(cmd, g); err != nil || format != "text" {
				return err
			}
			if err := writeFaultTolerance(cmd.OutOrStdout(), p, jobFaultTolerance(args[0], p, hs)); err != nil {
				return err
			}
			writeKafkaAssignment(cmd.Context(), cmd.OutOrStdout(), g)
			if layout != nil {
				return writeCluster(cmd.OutOrStdout(), layout, instances)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, json or dot")
	settings.AddFlags(cmd.Flags(), "state-backend", "state-dir")
	cmd.Flags().Int("slots", 0, "task slots this host offers (0: unlimited); the job is refused if it needs more")
	addModeFlag(cmd)
	addClusterFlags(cmd)
	addPluginRootFlag(cmd, &roots)
	return cmd
}

// addModeFlag adds --mode, the execution mode over the pipeline's, as
// Flink's -Dexecution.runtime-mode at submission.
func addModeFlag(cmd *cobra.Command) {
	cmd.Flags().String("mode", "", "execution mode over the pipeline's: streaming, batch or automatic")
}

// planOptions are the planner's options from the command's flags: the
// host's slots, default state backend and --mode.
func planOptions(cmd *cobra.Command, hs settings.Settings) (plan.Options, error) {
	opts := plan.Options{Slots: hs.Slots, StateBackend: hs.StateBackend, StateDir: hs.StateDir}
	switch m, _ := cmd.Flags().GetString("mode"); pipeline.Mode(m) {
	case "":
	case pipeline.Streaming, pipeline.Batch, pipeline.Automatic:
		opts.Mode, opts.ModeFrom = pipeline.Mode(m), "--mode"
	default:
		return opts, fmt.Errorf("unknown --mode %q: use streaming, batch or automatic", m)
	}
	return opts, nil
}

// planFailed prints every reason a plan could not be made, one per line,
// and exits 1.
func planFailed(cmd *cobra.Command, err error) error {
	fmt.Fprintln(cmd.ErrOrStderr(), err)
	return exitCode(1)
}
