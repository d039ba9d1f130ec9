package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ListPartitions asks the brokers for the partition count of every topic
// the source cfg reads (its topics, or those topic-pattern matches now),
// within ctx: what host plan shows the assignment from.
func ListPartitions(ctx context.Context, cfg SourceConfig) (map[string]int32, error) {
	s, err := NewSource(cfg, 0, 1)
	if err != nil {
		return nil, err
	}
	opts, err := s.cfg.clientOpts(&s.brokerErrs)
	if err != nil {
		return nil, fmt.Errorf("source %q (kafka): %w", cfg.Operator, err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("source %q (kafka): %w", cfg.Operator, err)
	}
	defer cl.Close()
	s.cl, s.adm = cl, kadm.NewClient(cl)
	return s.listPartitions(ctx)
}
