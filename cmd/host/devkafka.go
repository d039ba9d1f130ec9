package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/sluicehq/sluice/host/connector/kafka/kafkatest"
)

func init() { addCommand(newDevKafkaCmd) }

// newDevKafkaCmd starts an in-process Kafka-protocol broker (franz-go's
// kfake) on localhost, so that the Kafka examples run without installing
// a broker. It keeps records in memory: they are gone when it stops.
func newDevKafkaCmd() *cobra.Command {
	var port int
	var topicFlags []string
	cmd := &cobra.Command{
		Use:   "dev-kafka",
		Short: "Run a Kafka broker on localhost for trying the Kafka connectors (in memory, until interrupted)",
		Long: "dev-kafka starts franz-go's in-process Kafka broker (kfake) on 127.0.0.1 and runs until interrupted.\n" +
			"It is for trying the Kafka examples on one machine: records live in memory and are gone when it stops,\n" +
			"and topics are not created on first use: name them with --topic.\n\n" +
			"  host dev-kafka --topic txns:4 --topic valid-txns:4\n" +
			"  host run configs/kafka-fill-txns.yaml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			topics, err := parseTopicFlags(topicFlags)
			if err != nil {
				return err
			}
			if port < 0 || port > 65535 {
				return fmt.Errorf("--port %d: a port is between 0 (any free one) and 65535", port)
			}
			ctx, stop := signalContext()
			defer stop()
			c, err := kafkatest.Start(1, topics, kfake.Ports(port))
			if err != nil {
				return fmt.Errorf("%w (is port %d in use? choose another with --port)", err, port)
			}
			defer c.Close()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "brokers: %s\n", strings.Join(c.Addrs(), ","))
			names := make([]string, 0, len(topics))
			for t := range topics {
				names = append(names, t)
			}
			sort.Strings(names)
			for _, t := range names {
				fmt.Fprintf(out, "topic %s: %d partitions\n", t, topics[t])
			}
			fmt.Fprintln(out, "ready; interrupt (Ctrl-C) to stop: records are kept in memory only")
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().IntVar(&port, "port", 9092, "the port to listen on (0: any free port, printed)")
	cmd.Flags().StringArrayVar(&topicFlags, "topic", nil, "a topic to create, as name or name:partitions (default 1 partition); repeat it for more")
	return cmd
}

// parseTopicFlags reads --topic values: name or name:partitions.
func parseTopicFlags(flags []string) (map[string]int32, error) {
	topics := map[string]int32{}
	for _, f := range flags {
		name, parts, hasParts := strings.Cut(f, ":")
		n := int64(1)
		if hasParts {
			var err error
			if n, err = strconv.ParseInt(parts, 10, 32); err != nil || n < 1 {
				return nil, fmt.Errorf("--topic %q: the partition count after the colon must be a whole number of at least 1", f)
			}
		}
		if name == "" {
			return nil, fmt.Errorf("--topic %q: the topic needs a name (name or name:partitions)", f)
		}
		if _, dup := topics[name]; dup {
			return nil, fmt.Errorf("--topic %q: topic %s is named twice", f, name)
		}
		topics[name] = int32(n)
	}
	return topics, nil
}
