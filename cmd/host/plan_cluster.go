package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/host/cluster"
	"github.com/sluicehq/sluice/host/plan"
)

// addClusterFlags adds --cluster, --instances and --max-partitions to
// host plan.
func addClusterFlags(cmd *cobra.Command) {
	cmd.Flags().String("cluster", "", "Kafka brokers (host:port,...) of a cluster to lay the job out on: print which edges cross instances, their internal topics and the consumer group (the brokers are not contacted)")
	cmd.Flags().Int("instances", 0, "with --cluster: print the assignment of units, key groups and partitions to this many instances starting together")
	cmd.Flags().Int("max-partitions", 0, "with --cluster: cap on an internal topic's partitions (0: one partition per key group)")
}

// clusterLayout lays g out on --cluster; nil when the flag is not given.
func clusterLayout(cmd *cobra.Command, g *plan.JobGraph) (*cluster.Layout, int, error) {
	brokers, _ := cmd.Flags().GetString("cluster")
	n, _ := cmd.Flags().GetInt("instances")
	maxParts, _ := cmd.Flags().GetInt("max-partitions")
	if brokers == "" {
		if n != 0 || maxParts != 0 {
			return nil, 0, fmt.Errorf("--instances and --max-partitions need --cluster BROKERS")
		}
		return nil, 0, nil
	}
	if n < 0 || n > 1000 {
		return nil, 0, fmt.Errorf("--instances %d: want 0 to 1000", n)
	}
	var list []string
	for _, b := range strings.Split(brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			list = append(list, b)
		}
	}
	l, err := cluster.Plan(g, cluster.Config{Brokers: list, MaxPartitions: maxParts})
	return l, n, err
}

// writeCluster prints the layout after the text plan.
func writeCluster(w io.Writer, l *cluster.Layout, n int) error {
	fmt.Fprintln(w)
	if err := cluster.WriteText(w, l, n); err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintln(w, "\n(--instances N prints a sample assignment for N instances)")
	}
	fmt.Fprintln(w, "\nhost run --cluster BROKERS --instance NAME runs it on several instances: docs/cluster.md")
	return nil
}
