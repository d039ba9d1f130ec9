package kafka

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Format is how a Kafka key or value is read into a record (source) or
// written from one (sink).
type Format string

const (
	// FormatJSON is one JSON value: an object becomes a map.
	FormatJSON Format = "json"
	// FormatMsgpack is one msgpack value, kept as it is.
	FormatMsgpack Format = "msgpack"
	// FormatRaw is the bytes themselves: a string when they are valid
	// UTF-8, binary otherwise. A sink writes strings and binary as their
	// bytes, numbers and booleans as their text.
	FormatRaw Format = "raw"
	// FormatCSV is one CSV row: a map of the columns named by the
	// csv-columns option, or an array of the fields without it. Numbers
	// become ints and floats when reading them back gives their text.
	FormatCSV Format = "csv"
)

var formats = []Format{FormatJSON, FormatMsgpack, FormatRaw, FormatCSV}

// StartMode is where a source starts reading a partition it has no
// checkpointed position for: Flink's OffsetsInitializer.
type StartMode string

const (
	StartEarliest  StartMode = "earliest"  // OffsetsInitializer.earliest(), Flink's default
	StartLatest    StartMode = "latest"    // OffsetsInitializer.latest()
	StartCommitted StartMode = "committed" // committedOffsets(fallback): the group's committed offset
	StartTimestamp StartMode = "timestamp" // timestamp(ms): the first record at or after it, else the end
)

// Fallback is what a committed start does for a partition the group has
// no committed offset for (Flink's OffsetResetStrategy).
type Fallback string

const (
	FallbackNone     Fallback = "none" // fail, Flink's committedOffsets() default
	FallbackEarliest Fallback = "earliest"
	FallbackLatest   Fallback = "latest"
)

// Delivery is the sink's guarantee: Flink's DeliveryGuarantee.
type Delivery string

const (
	// DeliveryNone hands records to the producer and waits for nothing
	// at a checkpoint: records in flight at a failure may be lost. It is
	// KafkaSink's default.
	DeliveryNone Delivery = "none"
	// DeliveryAtLeastOnce flushes at every checkpoint: what was written
	// before a checkpoint is in Kafka once the checkpoint completes;
	// after a restore, records since then are written again.
	DeliveryAtLeastOnce Delivery = "at-least-once"
	// DeliveryExactlyOnce writes each checkpoint's records in one Kafka
	// transaction, committed when the checkpoint completes.
	DeliveryExactlyOnce Delivery = "exactly-once"
)

// Partitioner chooses the partition a sink writes a record to.
type Partitioner string

const (
	// PartitionerDefault is Kafka's default partitioner: murmur2 of the
	// key modulo the partition count, and batches spread over partitions
	// (sticky) for records without a key. KafkaSink's default.
	PartitionerDefault Partitioner = "default"
	// PartitionerFixed is Flink's FlinkFixedPartitioner: sink subtask i
	// writes every record to partition i mod the partition count.
	PartitionerFixed Partitioner = "fixed"
)

// Isolation is the source's isolation.level.
type Isolation string

const (
	// ReadUncommitted reads every record, those of open and aborted
	// transactions included: Kafka's consumer default, which Flink keeps.
	ReadUncommitted Isolation = "read-uncommitted"
	// ReadCommitted reads only committed records, up to the last stable
	// offset.
	ReadCommitted Isolation = "read-committed"
)

// SASL mechanisms.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// TLS configures an encrypted connection. Files are PEM.
type TLS struct {
	CAFile     string // trusted roots; the system's when empty
	CertFile   string // client certificate, with KeyFile, for mutual TLS
	KeyFile    string
	ServerName string // the name checked in the broker's certificate; the broker's host when empty
	// InsecureSkipVerify accepts any certificate: for tests only.
	InsecureSkipVerify bool
}

// SASL configures authentication.
type SASL struct {
	Mechanism string // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	Username  string
	Password  string
}

// Connection is how a source or sink reaches the cluster.
type Connection struct {
	Brokers  []string // host:port of some brokers (bootstrap.servers); required
	ClientID string   // client.id; "sluice" when empty
	TLS      *TLS     // nil: plaintext
	SASL     *SASL    // nil: no authentication
	// Timeout is how long a request is retried (an unreachable broker, a
	// leader moving) before the source or sink fails: 0 is
	// DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout is Connection.Timeout's default, Kafka's
// default.api.timeout.ms.
const DefaultTimeout = 60 * time.Second

// Defaults as Flink's KafkaSource and KafkaSink have them.
const (
	// DefaultDiscoveryInterval is partition.discovery.interval.ms's
	// default, five minutes (Kafka's metadata.max.age.ms).
	DefaultDiscoveryInterval = 5 * time.Minute
	// DefaultTransactionTimeout is the transaction timeout a sink asks
	// for: the broker's default transaction.max.timeout.ms, the longest
	// a broker accepts unless it is configured otherwise. It must exceed
	// the checkpoint interval plus the longest recovery.
	DefaultTransactionTimeout = 15 * time.Minute
)

// SourceConfig is a Kafka source's configuration (Flink's KafkaSource
// builder). The zero values of the optional fields are the defaults.
type SourceConfig struct {
	Operator string // the operator id, for errors
	Connection

	// Topics to read, or TopicPattern (a Go regular expression that must
	// match a whole topic name): exactly one of them.
	Topics       []string
	TopicPattern string

	// GroupID is the consumer group offsets are committed to when a
	// checkpoint completes (for monitoring: assignment uses no group) and
	// read from with StartCommitted. Without it nothing is committed.
	GroupID string
	// CommitOffsets commits on checkpoint completion
	// (commit.offsets.on.checkpoint); nil means true when GroupID is set.
	CommitOffsets *bool

	Start             StartMode // "" is earliest
	CommittedFallback Fallback  // with StartCommitted; "" is none
	StartTimestamp    int64     // with StartTimestamp: Unix milliseconds

	// Bounded reads each partition up to the end offset it had when the
	// source started, then ends (Flink's setBounded(latest())). Partition
	// discovery is off, as Flink turns it off for a bounded source.
	Bounded bool

	ValueFormat Format // "" is json
	KeyFormat   Format // "" drops the key (Flink's valueOnly); a format puts it in the envelope
	// CSVColumns names the fields of a csv value (a map); without them a
	// csv value is an array.
	CSVColumns []string

	// EventTimeField takes the event time from this field of the value
	// (an int, in milliseconds); "" takes the Kafka record's timestamp.
	EventTimeField string
	// HeadersField adds the record's headers to the value (a map) under
	// this name, as an array of {"key": string, "value": string or
	// binary}; "" drops them.
	HeadersField string

	Isolation Isolation // "" is read-uncommitted

	// MaxPartitionFetchBytes caps the bytes of one partition in a fetch
	// response (Kafka's max.partition.fetch.bytes), FetchMaxBytes the
	// whole response (fetch.max.bytes); 0 is the client's default, 1 MiB
	// and 50 MiB. A batch larger than either still comes back whole, as
	// Kafka returns the first batch regardless, so they bound memory and
	// the first fetch's size, not what can be read.
	MaxPartitionFetchBytes int32
	FetchMaxBytes          int32

	// DiscoveryInterval is how often new partitions are looked for
	// (partition.discovery.interval.ms): 0 is the default, negative
	// turns discovery off.
	DiscoveryInterval time.Duration
}

// SinkConfig is a Kafka sink's configuration (Flink's KafkaSink builder).
type SinkConfig struct {
	Operator string
	Connection

	// Topic to write to, or TopicField: the field of each record's value
	// (a string) that names its topic. Exactly one of them.
	Topic      string
	TopicField string
	// KeyField is the field of the value written as the Kafka key; ""
	// writes no key.
	KeyField string

	ValueFormat Format // "" is json
	KeyFormat   Format // "" is raw

	Partitioner Partitioner // "" is default
	Delivery    Delivery    // "" is none

	// KeyGroups, when its MaxParallelism is set, writes each record to the
	// partition of its key's key group, as Flink's KeyGroupRangeAssignment
	// picks a subtask: partition = keyGroup * Partitions / MaxParallelism,
	// with the key the one a key-by edge into the sink gave the record
	// (the envelope's). A cluster's internal topic of a HASH edge is
	// written so (host/cluster); it overrides Partitioner.
	KeyGroups KeyGroupPartitioning

	// TransactionalIDPrefix names the transactions of an exactly-once
	// sink: prefix-<subtask>-<checkpoint>. It must be unique to the job:
	// a restore aborts every open transaction whose id starts with it.
	TransactionalIDPrefix string
	TransactionTimeout    time.Duration // 0 is DefaultTransactionTimeout
}

// KeyGroupPartitioning is SinkConfig.KeyGroups: the downstream
// operator's max parallelism and the topic's partition count.
type KeyGroupPartitioning struct {
	MaxParallelism, Partitions int
}

// ConfigError is an invalid option: Option names it as the pipeline
// writes it.
type ConfigError struct {
	Role     string // "source" or "sink"
	Operator string
	Option   string
	Problem  string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("%s %q (kafka): option %q: %s", e.Role, e.Operator, e.Option, e.Problem)
}

type problems struct {
	role, op string
	errs     []error
}

func (p *problems) add(option, format string, args ...any) {
	p.errs = append(p.errs, &ConfigError{Role: p.role, Operator: p.op, Option: option, Problem: fmt.Sprintf(format, args...)})
}

func (p *problems) err() error { return errors.Join(p.errs...) }

func (c *Connection) validate(p *problems) {
	if len(c.Brokers) == 0 {
		p.add("brokers", "is required: the host:port of at least one broker")
	}
	for _, b := range c.Brokers {
		if i := strings.LastIndexByte(b, ':'); i <= 0 || i == len(b)-1 {
			p.add("brokers", "%q is not host:port", b)
		}
	}
	if s := c.SASL; s != nil {
		switch s.Mechanism {
		case SASLPlain, SASLScramSHA256, SASLScramSHA512:
		default:
			p.add("sasl.mechanism", "%q is not one of %s, %s, %s", s.Mechanism, SASLPlain, SASLScramSHA256, SASLScramSHA512)
		}
		if s.Username == "" {
			p.add("sasl.username", "is required with sasl")
		}
	}
	if t := c.TLS; t != nil && (t.CertFile == "") != (t.KeyFile == "") {
		p.add("tls.cert-file", "tls.cert-file and tls.key-file go together")
	}
}

func checkFormat(p *problems, option string, f Format) {
	for _, k := range formats {
		if f == k {
			return
		}
	}
	p.add(option, "%q is not one of json, msgpack, raw, csv", f)
}

// WithDefaults returns c with the defaults filled in.
func (c SourceConfig) WithDefaults() SourceConfig {
	if c.Start == "" {
		c.Start = StartEarliest
	}
	if c.CommittedFallback == "" {
		c.CommittedFallback = FallbackNone
	}
	if c.ValueFormat == "" {
		c.ValueFormat = FormatJSON
	}
	if c.Isolation == "" {
		c.Isolation = ReadUncommitted
	}
	if c.DiscoveryInterval == 0 {
		c.DiscoveryInterval = DefaultDiscoveryInterval
	}
	if c.Bounded {
		c.DiscoveryInterval = -1
	}
	if c.CommitOffsets == nil {
		on := c.GroupID != ""
		c.CommitOffsets = &on
	}
	return c
}

// Validate checks c (with its defaults filled in) and says what is wrong
// with each option that is.
func (c SourceConfig) Validate() error {
	c = c.WithDefaults()
	p := &problems{role: "source", op: c.Operator}
	c.Connection.validate(p)
	switch {
	case len(c.Topics) == 0 && c.TopicPattern == "":
		p.add("topics", "is required (or topic-pattern)")
	case len(c.Topics) > 0 && c.TopicPattern != "":
		p.add("topic-pattern", "give topics or topic-pattern, not both")
	case c.TopicPattern != "":
		if _, err := regexp.Compile(c.TopicPattern); err != nil {
			p.add("topic-pattern", "%v", err)
		}
	}
	for _, t := range c.Topics {
		if t == "" {
			p.add("topics", "a topic name is empty")
		}
	}
	switch c.Start {
	case StartEarliest, StartLatest, StartTimestamp:
	case StartCommitted:
		if c.GroupID == "" {
			p.add("group-id", "is required with start: committed (the group whose offsets are read)")
		}
	default:
		p.add("start", "%q is not one of earliest, latest, committed, timestamp", c.Start)
	}
	switch c.CommittedFallback {
	case FallbackNone, FallbackEarliest, FallbackLatest:
	default:
		p.add("committed-fallback", "%q is not one of none, earliest, latest", c.CommittedFallback)
	}
	if c.Start != StartCommitted && c.CommittedFallback != FallbackNone {
		p.add("committed-fallback", "applies only to start: committed")
	}
	if c.Start == StartTimestamp && c.StartTimestamp < 0 {
		p.add("start-timestamp", "must be Unix milliseconds ≥ 0, got %d", c.StartTimestamp)
	}
	if c.Start != StartTimestamp && c.StartTimestamp != 0 {
		p.add("start-timestamp", "applies only to start: timestamp")
	}
	if *c.CommitOffsets && c.GroupID == "" {
		p.add("commit-offsets", "needs group-id: the group offsets are committed to")
	}
	checkFormat(p, "format", c.ValueFormat)
	if c.KeyFormat != "" {
		checkFormat(p, "key-format", c.KeyFormat)
	}
	if len(c.CSVColumns) > 0 && c.ValueFormat != FormatCSV {
		p.add("csv-columns", "applies only to format: csv")
	}
	if c.HeadersField != "" && (c.ValueFormat == FormatRaw || c.ValueFormat == FormatCSV && len(c.CSVColumns) == 0) {
		p.add("headers-field", "needs values that are maps (format json, msgpack, or csv with csv-columns), not format %s", c.ValueFormat)
	}
	if c.EventTimeField != "" && c.ValueFormat == FormatRaw {
		p.add("event-time-field", "needs values that are maps, not format raw")
	}
	switch c.Isolation {
	case ReadUncommitted, ReadCommitted:
	default:
		p.add("isolation", "%q is not one of read-uncommitted, read-committed", c.Isolation)
	}
	if c.MaxPartitionFetchBytes < 0 {
		p.add("max-partition-fetch-bytes", "must be ≥ 1 (0 is the default, 1 MiB), got %d", c.MaxPartitionFetchBytes)
	}
	if c.FetchMaxBytes < 0 {
		p.add("fetch-max-bytes", "must be ≥ 1 (0 is the default, 50 MiB), got %d", c.FetchMaxBytes)
	}
	return p.err()
}

// WithDefaults returns c with the defaults filled in.
func (c SinkConfig) WithDefaults() SinkConfig {
	if c.ValueFormat == "" {
		c.ValueFormat = FormatJSON
	}
	if c.KeyFormat == "" {
		c.KeyFormat = FormatRaw
	}
	if c.Partitioner == "" {
		c.Partitioner = PartitionerDefault
	}
	if c.Delivery == "" {
		c.Delivery = DeliveryNone
	}
	if c.TransactionTimeout == 0 {
		c.TransactionTimeout = DefaultTransactionTimeout
	}
	return c
}

// Validate checks c (with its defaults filled in).
func (c SinkConfig) Validate() error {
	c = c.WithDefaults()
	p := &problems{role: "sink", op: c.Operator}
	c.Connection.validate(p)
	switch {
	case c.Topic == "" && c.TopicField == "":
		p.add("topic", "is required (or topic-field)")
	case c.Topic != "" && c.TopicField != "":
		p.add("topic-field", "give topic or topic-field, not both")
	}
	checkFormat(p, "format", c.ValueFormat)
	checkFormat(p, "key-format", c.KeyFormat)
	if kg := c.KeyGroups; kg.MaxParallelism != 0 && (kg.MaxParallelism < 0 || kg.Partitions < 1 || kg.Partitions > kg.MaxParallelism) {
		p.add("partitioner", "key groups over %d partitions with max parallelism %d: want 1 to max parallelism partitions", kg.Partitions, kg.MaxParallelism)
	}
	switch c.Partitioner {
	case PartitionerDefault, PartitionerFixed:
	default:
		p.add("partitioner", "%q is not one of default, fixed", c.Partitioner)
	}
	switch c.Delivery {
	case DeliveryNone, DeliveryAtLeastOnce:
		if c.TransactionalIDPrefix != "" {
			p.add("transactional-id-prefix", "applies only to delivery: exactly-once")
		}
	case DeliveryExactlyOnce:
		if c.TransactionalIDPrefix == "" {
			p.add("transactional-id-prefix", "is required with delivery: exactly-once (unique to this job: a restore aborts the open transactions it starts)")
		}
		if strings.TrimSpace(c.TransactionalIDPrefix) != c.TransactionalIDPrefix {
			p.add("transactional-id-prefix", "%q has leading or trailing spaces", c.TransactionalIDPrefix)
		}
	default:
		p.add("delivery", "%q is not one of none, at-least-once, exactly-once", c.Delivery)
	}
	if c.TransactionTimeout < time.Millisecond {
		p.add("transaction-timeout", "must be at least 1ms, got %v", c.TransactionTimeout)
	}
	return p.err()
}
