package connector

import (
	"errors"
	"math"
	"strings"
	"time"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/connector/kafka"
	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/runtime"
)

// The Kafka source and sink: their specs and the constructors that build
// the core (host/connector/kafka) from the options. They are not
// Contained (they reach a network): host serve offers them to its tenants
// only under its Kafka policy (ServedWith; host/server/kafka.go).

var kafkaFormats = []string{string(kafka.FormatJSON), string(kafka.FormatMsgpack), string(kafka.FormatRaw), string(kafka.FormatCSV)}

// kafkaConnection are the options of the source and the sink that say how
// to reach the cluster.
var kafkaConnection = []spec.Option{
	{Name: "brokers", Type: spec.String, Required: true,
		Doc: "the host:port of one or more brokers, separated by commas (Kafka's `bootstrap.servers`)"},
	{Name: "client-id", Type: spec.String, Default: "sluice", Doc: "the client id the brokers see (`client.id`)"},
	{Name: "timeout", Type: spec.Duration, MinDuration: 100 * time.Millisecond, Default: kafka.DefaultTimeout,
		Doc: "how long a request is retried (a broker unreachable, a leader moving) before the job fails (Kafka's `default.api.timeout.ms`)"},
	{Name: "tls", Type: spec.Map, Doc: "encrypt the connection with TLS (files are PEM); without it the connection is plaintext", Fields: []spec.Option{
		{Name: "ca-file", Type: spec.String, DefaultDoc: "the system's roots", Doc: "the certificates of the authorities trusted"},
		{Name: "cert-file", Type: spec.String, Doc: "the client's certificate, for mutual TLS (with key-file)"},
		{Name: "key-file", Type: spec.String, Doc: "the client's private key (with cert-file)"},
		{Name: "server-name", Type: spec.String, DefaultDoc: "the broker's host", Doc: "the name the broker's certificate must carry"},
		{Name: "insecure-skip-verify", Type: spec.Bool, Default: false, Doc: "accept any certificate: for tests only"},
	}},
	{Name: "sasl", Type: spec.Map, Doc: "authenticate with SASL", Fields: []spec.Option{
		{Name: "mechanism", Type: spec.Enum, Required: true, Choices: []string{kafka.SASLPlain, kafka.SASLScramSHA256, kafka.SASLScramSHA512}, Doc: "the SASL mechanism"},
		{Name: "username", Type: spec.String, Required: true, Doc: "the user"},
		{Name: "password", Type: spec.String, Empty: true, DefaultDoc: "empty", Doc: "the password; write it as `${KAFKA_PASSWORD}` to take it from the environment"},
	}},
}

func kafkaFormat(name, doc string, def any, defDoc string) spec.Option {
	return spec.Option{Name: name, Type: spec.Enum, Choices: kafkaFormats, Default: def, DefaultDoc: defDoc, Doc: doc}
}

// KafkaSource is the Kafka source's spec (Flink's KafkaSource).
var KafkaSource = &spec.Connector{
	Name:    "kafka",
	Role:    spec.Source,
	Summary: "records from Kafka topics (Flink's KafkaSource)",
	Doc: "Each subtask reads the partitions Flink's KafkaSourceEnumerator gives it (the topic name's Java hashCode picks " +
		"the subtask of partition 0, then round robin by partition) directly, without group balancing; `host plan` shows " +
		"the assignment when the brokers answer. Offsets are part of a checkpoint, so a restored job resumes from them, and " +
		"are committed to `group-id` when a checkpoint completes, for monitoring, as Flink does. The Kafka record's " +
		"timestamp is the record's event time unless `event-time-field` names a field. A record that does not decode " +
		"goes the way of the operator's `on-error`; a dead letter's input names its topic, partition and offset. " +
		"`host dev-kafka` starts a broker on this machine to try it. See [kafka.md](kafka.md).",
	Options: append(append([]spec.Option(nil), kafkaConnection...),
		spec.Option{Name: "topics", Type: spec.List, DefaultDoc: "none: give topics or topic-pattern", Doc: "the topics to read"},
		spec.Option{Name: "topic-pattern", Type: spec.String, Doc: "a regular expression (Go's syntax) a whole topic name matches, instead of topics; topics created later are read once discovered"},
		spec.Option{Name: "group-id", Type: spec.String, Doc: "the consumer group offsets are committed to when a checkpoint completes, and read from with `start: committed`"},
		spec.Option{Name: "commit-offsets", Type: spec.Bool, DefaultDoc: "true with group-id", Doc: "commit offsets to the group when a checkpoint completes (Flink's `commit.offsets.on.checkpoint`)"},
		spec.Option{Name: "start", Type: spec.Enum, Choices: []string{string(kafka.StartEarliest), string(kafka.StartLatest), string(kafka.StartCommitted), string(kafka.StartTimestamp)},
			Default: string(kafka.StartEarliest), Doc: "where a partition without a checkpointed position starts (Flink's OffsetsInitializer); partitions found later start at their earliest offset"},
		spec.Option{Name: "committed-fallback", Type: spec.Enum, Choices: []string{string(kafka.FallbackNone), string(kafka.FallbackEarliest), string(kafka.FallbackLatest)},
			Default: string(kafka.FallbackNone), Only: &spec.Only{Option: "start", Values: []string{string(kafka.StartCommitted)}},
			Doc: "where a partition starts that the group has no committed offset for; none fails (Flink's OffsetResetStrategy)"},
		spec.Option{Name: "start-timestamp", Type: spec.Int, Min: 0, Max: 1 << 53, Only: &spec.Only{Option: "start", Values: []string{string(kafka.StartTimestamp)}},
			Default: int64(0), Doc: "Unix milliseconds: each partition starts at its first record at or after it"},
		spec.Option{Name: "bounded", Type: spec.Enum, Choices: []string{"none", "latest"}, Default: "none",
			Doc: "latest: read each partition up to the end offset it has when the job starts, then end (Flink's `setBounded(latest())`), so mode automatic runs the job as batch; partitions are not discovered then"},
		kafkaFormat("format", "how a record's value is read", string(kafka.FormatJSON), ""),
		kafkaFormat("key-format", "how a record's key is read into the record's key", nil, "none: the key is dropped"),
		spec.Option{Name: "csv-columns", Type: spec.List, Only: &spec.Only{Option: "format", Values: []string{string(kafka.FormatCSV)}},
			DefaultDoc: "none: a row is a list", Doc: "the field names of a csv value's columns"},
		spec.Option{Name: "event-time-field", Type: spec.String, DefaultDoc: "the Kafka timestamp", Doc: "the field of the value (an integer of milliseconds) that is the event time"},
		spec.Option{Name: "headers-field", Type: spec.String, DefaultDoc: "none: headers are dropped", Doc: "the field the record's headers are put in, a list of {key, value}"},
		spec.Option{Name: "isolation", Type: spec.Enum, Choices: []string{string(kafka.ReadUncommitted), string(kafka.ReadCommitted)}, Default: string(kafka.ReadUncommitted),
			Doc: "read-committed reads only the records of committed transactions (Kafka's `isolation.level`)"},
		spec.Option{Name: "max-partition-fetch-bytes", Type: spec.Int, Min: 1, Max: math.MaxInt32, DefaultDoc: "1048576 (1 MiB)",
			Doc: "the most bytes of one partition a fetch returns (Kafka's `max.partition.fetch.bytes`); smaller starts a job sooner and holds less in memory, larger moves more per round trip to a distant cluster"},
		spec.Option{Name: "fetch-max-bytes", Type: spec.Int, Min: 1, Max: math.MaxInt32, DefaultDoc: "52428800 (50 MiB)",
			Doc: "the most bytes a whole fetch response holds (Kafka's `fetch.max.bytes`); a first record batch larger than either limit still comes back"},
		spec.Option{Name: "discovery-interval", Type: spec.Duration, Default: kafka.DefaultDiscoveryInterval,
			Doc: "how often new partitions are looked for (Flink's `partition.discovery.interval.ms`); 0 turns discovery off"},
	),
	Boundedness: func(opts map[string]any) spec.Boundedness {
		if opts["bounded"] == "latest" {
			return spec.Bounded
		}
		return spec.Unbounded
	},
	BoundedDoc:   "with `bounded: latest`",
	UnboundedWhy: "a kafka source without bounded: latest",
	Replayable:   true,
	Guarantee:    spec.ExactlyOnce,
	ServedWith:   "with `kafka-brokers`",
}

// KafkaSink is the Kafka sink's spec (Flink's KafkaSink).
var KafkaSink = &spec.Connector{
	Name:    "kafka",
	Role:    spec.Sink,
	Summary: "records into a Kafka topic (Flink's KafkaSink)",
	Doc: "With `delivery: exactly-once` each checkpoint's records are written in one Kafka transaction, committed when " +
		"the checkpoint completes (Flink's two-phase commit), with transactional ids `<prefix>-<subtask>-<checkpoint>`; a " +
		"restored job aborts the transactions a crashed run left open. `at-least-once` flushes at every checkpoint; `none` " +
		"(KafkaSink's default) waits for nothing. See [kafka.md](kafka.md).",
	Options: append(append([]spec.Option(nil), kafkaConnection...),
		spec.Option{Name: "topic", Type: spec.String, DefaultDoc: "none: give topic or topic-field", Doc: "the topic to write to"},
		spec.Option{Name: "topic-field", Type: spec.String, Doc: "the field of each record (a string) that names its topic, instead of topic"},
		spec.Option{Name: "key-field", Type: spec.String, DefaultDoc: "none: no key", Doc: "the field written as the Kafka key"},
		kafkaFormat("format", "how a record's value is written", string(kafka.FormatJSON), ""),
		kafkaFormat("key-format", "how the key is written", string(kafka.FormatRaw), ""),
		spec.Option{Name: "partitioner", Type: spec.Enum, Choices: []string{string(kafka.PartitionerDefault), string(kafka.PartitionerFixed)}, Default: string(kafka.PartitionerDefault),
			Doc: "default: Kafka's (murmur2 of the key, sticky without one); fixed: Flink's FlinkFixedPartitioner, subtask i writes to partition i mod the partition count"},
		spec.Option{Name: "delivery", Type: spec.Enum, Choices: []string{string(kafka.DeliveryNone), string(kafka.DeliveryAtLeastOnce), string(kafka.DeliveryExactlyOnce)}, Default: string(kafka.DeliveryNone),
			Doc: "the guarantee (Flink's DeliveryGuarantee); exactly-once and at-least-once need checkpoints"},
		spec.Option{Name: "transactional-id-prefix", Type: spec.String, Only: &spec.Only{Option: "delivery", Values: []string{string(kafka.DeliveryExactlyOnce)}},
			DefaultDoc: "required with delivery exactly-once", Doc: "the prefix of the transactional ids, unique to the job: a restore aborts the open transactions whose ids start with it"},
		spec.Option{Name: "transaction-timeout", Type: spec.Duration, MinDuration: time.Millisecond, Default: kafka.DefaultTransactionTimeout,
			Only: &spec.Only{Option: "delivery", Values: []string{string(kafka.DeliveryExactlyOnce)}},
			Doc:  "the transaction timeout asked of the broker; it must exceed the checkpoint interval plus the longest recovery"},
	),
	Guarantee:  spec.ExactlyOnce,
	ServedWith: "with `kafka-brokers`",
}

func init() {
	KafkaSource.Check = func(opts map[string]any) []spec.Problem { return kafkaProblems(KafkaSource, opts) }
	KafkaSink.Check = func(opts map[string]any) []spec.Problem { return kafkaProblems(KafkaSink, opts) }
	registerSource(KafkaSource, func(b *Builtin, o *options, op *pipeline.Operator, subtask, parallelism int) (runtime.Source, error) {
		cfg := kafkaSourceConfig(op.ID, o)
		if err := o.finish(); err != nil {
			return nil, err
		}
		if b.KafkaSourcePolicy != nil {
			if err := b.KafkaSourcePolicy(&cfg); err != nil {
				return nil, err
			}
		}
		src, err := kafka.NewSource(cfg, subtask, parallelism)
		if err != nil {
			return nil, err
		}
		return kafkaSource{src}, nil
	})
	registerSink(KafkaSink, func(b *Builtin, o *options, op *pipeline.Operator, subtask, parallelism int) (runtime.Operator, error) {
		cfg := kafkaSinkConfig(op.ID, o)
		if err := o.finish(); err != nil {
			return nil, err
		}
		if b.KafkaSinkPolicy != nil {
			if err := b.KafkaSinkPolicy(&cfg); err != nil {
				return nil, err
			}
		}
		sink, err := kafka.NewSink(cfg, subtask, parallelism)
		if err != nil {
			return nil, err
		}
		return kafkaSink{sink}, nil
	})
}

// kafkaSource is the Kafka core's source as the engine takes it: a
// runtime.CheckpointedSource (the core's methods), and a
// runtime.CheckpointListener, which commits the offsets of a completed
// checkpoint to the group for monitoring, as Flink does.
type kafkaSource struct{ *kafka.Source }

// NotifyCheckpointAborted keeps the offsets: the next completed checkpoint
// commits its own.
func (kafkaSource) NotifyCheckpointAborted(checkpoint.ID) {}

// kafkaSink is the Kafka core's sink as the engine takes it: a
// runtime.Snapshotter whose state is the core's list (the writer's state
// and the pre-committed transactions, which a restore commits: the core
// reads them from either list) and a runtime.CheckpointListener, which
// commits the transactions of a completed checkpoint (Flink's two-phase
// commit KafkaSink).
type kafkaSink struct{ *kafka.Sink }

func (s kafkaSink) SnapshotState(id checkpoint.ID) (checkpoint.SubtaskState, error) {
	split, union, err := s.Sink.SnapshotState(id)
	return checkpoint.SubtaskState{Split: split, Union: union}, err
}

// NotifyCheckpointAborted keeps what was pre-committed: the next completed
// checkpoint commits it, as the core commits every transaction up to the
// completed checkpoint.
func (kafkaSink) NotifyCheckpointAborted(checkpoint.ID) {}

// KafkaSourceConfig is the core's configuration of source operator op,
// from its options (the CLI's plan asks the brokers with it).
func KafkaSourceConfig(op *pipeline.Operator) (kafka.SourceConfig, error) {
	o := newOptions("source", op.ID, op.Source)
	cfg := kafkaSourceConfig(op.ID, o)
	return cfg, o.finish()
}

// KafkaSinkConfig is the core's configuration of sink operator op, from
// its options (host serve checks it against its Kafka policy).
func KafkaSinkConfig(op *pipeline.Operator) (kafka.SinkConfig, error) {
	o := newOptions("sink", op.ID, op.Sink)
	cfg := kafkaSinkConfig(op.ID, o)
	return cfg, o.finish()
}

func kafkaSourceConfig(id string, o *options) kafka.SourceConfig {
	cfg := kafka.SourceConfig{
		Operator:          id,
		Connection:        kafkaConnectionOf(o),
		Topics:            o.specStrings("topics"),
		TopicPattern:      o.specString("topic-pattern"),
		GroupID:           o.specString("group-id"),
		Start:             kafka.StartMode(o.specEnum("start", "")),
		CommittedFallback: kafka.Fallback(o.specEnum("committed-fallback", "")),
		StartTimestamp:    o.specInt("start-timestamp"),
		Bounded:           o.specEnum("bounded", "") == "latest",
		ValueFormat:       kafka.Format(o.specEnum("format", "")),
		CSVColumns:        o.specStrings("csv-columns"),
		EventTimeField:    o.specString("event-time-field"),
		HeadersField:      o.specString("headers-field"),
		Isolation:         kafka.Isolation(o.specEnum("isolation", "")),
		DiscoveryInterval: o.specDuration("discovery-interval"),
	}
	if o.has("max-partition-fetch-bytes") {
		cfg.MaxPartitionFetchBytes = int32(o.specInt("max-partition-fetch-bytes"))
	}
	if o.has("fetch-max-bytes") {
		cfg.FetchMaxBytes = int32(o.specInt("fetch-max-bytes"))
	}
	if o.has("key-format") {
		cfg.KeyFormat = kafka.Format(o.specEnum("key-format", ""))
	}
	if o.has("commit-offsets") {
		on := o.specBool("commit-offsets")
		cfg.CommitOffsets = &on
	}
	if cfg.DiscoveryInterval == 0 {
		cfg.DiscoveryInterval = -1 // the core's "off"; its 0 is the default
	}
	return cfg
}

func kafkaSinkConfig(id string, o *options) kafka.SinkConfig {
	return kafka.SinkConfig{
		Operator:              id,
		Connection:            kafkaConnectionOf(o),
		Topic:                 o.specString("topic"),
		TopicField:            o.specString("topic-field"),
		KeyField:              o.specString("key-field"),
		ValueFormat:           kafka.Format(o.specEnum("format", "")),
		KeyFormat:             kafka.Format(o.specEnum("key-format", "")),
		Partitioner:           kafka.Partitioner(o.specEnum("partitioner", "")),
		Delivery:              kafka.Delivery(o.specEnum("delivery", "")),
		TransactionalIDPrefix: o.specString("transactional-id-prefix"),
		TransactionTimeout:    o.specDuration("transaction-timeout"),
	}
}

func kafkaConnectionOf(o *options) kafka.Connection {
	c := kafka.Connection{ClientID: o.specString("client-id"), Timeout: o.specDuration("timeout")}
	for _, b := range strings.Split(o.specString("brokers"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.Brokers = append(c.Brokers, b)
		}
	}
	field := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	if t := o.specMap("tls"); t != nil {
		skip, _ := t["insecure-skip-verify"].(bool)
		c.TLS = &kafka.TLS{CAFile: field(t, "ca-file"), CertFile: field(t, "cert-file"), KeyFile: field(t, "key-file"),
			ServerName: field(t, "server-name"), InsecureSkipVerify: skip}
	}
	if s := o.specMap("sasl"); s != nil {
		c.SASL = &kafka.SASL{Mechanism: field(s, "mechanism"), Username: field(s, "username"), Password: field(s, "password")}
	}
	return c
}

// kafkaProblems are the core's own checks across options (topics or
// topic-pattern, group-id with start committed, ...), so that lint finds
// them at the option's line: the core's Validate is the one place they
// are written. An option lint already reports missing is not reported
// again.
func kafkaProblems(c *spec.Connector, opts map[string]any) []spec.Problem {
	o := &options{spec: c, role: c.Role.String(), typ: c.Name, m: opts, known: map[string]bool{}}
	var err error
	if c.Role == spec.Source {
		err = kafkaSourceConfig("", o).Validate()
	} else {
		err = kafkaSinkConfig("", o).Validate()
	}
	if o.err != nil {
		return nil // a value lint reports itself
	}
	var out []spec.Problem
	for _, e := range unjoin(err) {
		var ce *kafka.ConfigError
		if !errors.As(e, &ce) {
			out = append(out, spec.Problem{Msg: e.Error()})
			continue
		}
		top, _, _ := strings.Cut(ce.Option, ".")
		if opt, ok := c.Option(top); ok && (opt.Required && opts[top] == nil ||
			opt.Only != nil && opts[opt.Only.Option] != nil && strings.HasPrefix(ce.Problem, "applies only to")) {
			continue // lint says so itself
		}
		if _, ok := c.Option(top); !ok {
			top = ""
		}
		msg := ce.Option + " " + ce.Problem
		if strings.HasPrefix(ce.Problem, ce.Option+" ") {
			msg = ce.Problem
		}
		out = append(out, spec.Problem{Option: top, Msg: msg})
	}
	return out
}

// unjoin lists the errors errors.Join joined.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
