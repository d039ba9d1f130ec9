package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/connector/kafka"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plan"
)

// kafkaPlanTimeout bounds how long host plan waits for a Kafka source's
// brokers to say how many partitions its topics have.
const kafkaPlanTimeout = 2 * time.Second

// writeKafkaAssignment prints, for each Kafka source of g, which subtask
// reads which partitions: the planner stays pure, and the CLI asks the
// brokers for the partition counts and prints what the source's
// SplitOwner (Flink's KafkaSourceEnumerator) gives each subtask. Brokers
// that do not answer get a line that says so.
func writeKafkaAssignment(ctx context.Context, w io.Writer, g *plan.JobGraph) {
	for _, op := range g.Operators {
		if op.Kind != pipeline.KindSource || op.Spec.Source == nil || op.Spec.Source.Type != "kafka" {
			continue
		}
		cfg, err := connector.KafkaSourceConfig(op.Spec)
		if err != nil {
			fmt.Fprintf(w, "\nkafka source %s: %v\n", op.ID, err)
			continue
		}
		brokers := strings.Join(cfg.Brokers, ",")
		lctx, cancel := context.WithTimeout(ctx, kafkaPlanTimeout)
		counts, err := kafka.ListPartitions(lctx, cfg)
		cancel()
		if err != nil {
			fmt.Fprintf(w, "\nkafka source %s: partitions per subtask not shown: the brokers did not answer within %v: %v\n",
				op.ID, kafkaPlanTimeout, err)
			continue
		}
		fmt.Fprintf(w, "\nkafka source %s (brokers %s): partitions per subtask (Flink's KafkaSourceEnumerator)\n", op.ID, brokers)
		if len(counts) == 0 {
			fmt.Fprintf(w, "  no topic matches yet\n")
			continue
		}
		for i, byTopic := range kafka.Assignment(counts, op.Parallelism) {
			topics := make([]string, 0, len(byTopic))
			for t := range byTopic {
				topics = append(topics, t)
			}
			sort.Strings(topics)
			var parts []string
			for _, t := range topics {
				parts = append(parts, fmt.Sprintf("%s %s", t, joinInts(byTopic[t])))
			}
			if len(parts) == 0 {
				parts = []string{"nothing (more subtasks than partitions)"}
			}
			fmt.Fprintf(w, "  subtask %d: %s\n", i, strings.Join(parts, "; "))
		}
	}
}

func joinInts(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return "[" + strings.Join(s, " ") + "]"
}
