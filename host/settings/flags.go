package settings

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Usage is the one-line help of each setting, for the flag named like it.
var Usage = map[string]string{
	"slots":                         "task slots this host offers (0: unlimited); a job that needs more is refused",
	"memory-pages":                  "memory limit per plugin instance, in 64 KiB pages",
	"call-timeout":                  "longest each call into a plugin may run, on the clock",
	"max-output-bytes":              "most bytes one plugin call may emit",
	"max-module-bytes":              "largest plugin module file",
	"cache-dir":                     "compiled-plugin cache folder (\"\": none)",
	"batch-size":                    "records per batch between tasks",
	"batch-bytes":                   "bytes per batch between tasks",
	"linger":                        "longest a partly filled batch waits before it is sent",
	"queue-capacity":                "batches each channel between tasks holds before the sender waits",
	"seed":                          "seeds the channels REBALANCE starts at and SHUFFLE picks: another seed, other channels (the same seed, the same channels every run)",
	"restart-attempts":              "plugin instances an operator subtask may replace within restart-window after a poisoned record",
	"restart-delay":                 "delay before each plugin instance replacement",
	"restart-window":                "sliding window restart-attempts counts in",
	"job-memory":                    "plugin linear memory a job may reserve, in MiB (0: no budget)",
	"state-memory":                  "keyed state a plugin operator's subtask may hold, in MiB (0: no limit)",
	"state-backend":                 "where keyed state lives when the pipeline's state: names no backend: heap or pebble",
	"state-dir":                     "folder of the Pebble state databases, <state-dir>/<job>/<operator>-<subtask>-* (\"\": the system's temporary folder)",
	"data-roots":                    "folders file sources and sinks may use besides the pipeline's own (repeat or comma-separate)",
	"fuel-rate":                     "fuel units per second the plugins may spend, over all instances (0: no cap)",
	"call-fuel":                     "a deterministic CPU budget per plugin call, in fuel units (about one wasm instruction), instead of call-timeout",
	"checkpoint-interval":           "default checkpoint interval of a pipeline whose checkpointing: says none (0: off)",
	"checkpoint-mode":               "default checkpointing mode: exactly-once or at-least-once",
	"checkpoint-timeout":            "default time a checkpoint may take before it is declined",
	"checkpoint-min-pause":          "default least time from a completed checkpoint to the next",
	"checkpoint-max-concurrent":     "default number of checkpoints that may be in progress at once",
	"checkpoint-tolerable-failures": "default number of failed checkpoints in a row tolerated before the job fails",
	"checkpoint-retain":             "default number of completed checkpoints kept on disk",
	"checkpoint-storage":            "default folder checkpoints are written under (<storage>/<job>/chk-<id>)",
	"checkpoint-unaligned":          "default: unaligned checkpoints (barriers overtake in-flight data, persisted with the checkpoint; exactly-once only)",
	"checkpoint-incremental":        "heap checkpoints write only the key groups' changes since the last completed one (false: every checkpoint in full)",
	"restart-strategy":              "restart strategy of a pipeline that names none: none, fixed-delay, exponential-delay or failure-rate (\"\": Flink's default)",
	"listen":                        "address to listen on",
	"tenants-file":                  "YAML file with tenants: (and admin-token-sha256:)",
	"admin-token-sha256":            "hex SHA-256 of the admin token (\"\": no admin)",
	"max-request-bytes":             "largest plugin upload",
	"max-pipeline-bytes":            "largest pipeline a tenant may submit, at most 4 MiB",
	"rate-limit":                    "requests per second per tenant",
	"rate-burst":                    "requests a tenant may make at once",
	"drain-timeout":                 "how long shutdown lets running jobs end by themselves before cancelling them",
	"output-records":                "records a collect sink keeps per job",
	"output-bytes":                  "bytes a collect sink keeps per job",
	"job-history":                   "ended jobs kept per tenant",
	"kafka-brokers":                 "brokers (host:port) tenants' kafka sources and sinks may name; none: no Kafka for tenants (repeat or comma-separate)",
	"kafka-topic-prefix":            "what a tenant's topics and group ids must start with; {tenant} is its name (\"\": any topic)",
	"kafka-sasl-mechanism":          "SASL mechanism of the server's Kafka connections: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (\"\": none)",
	"kafka-sasl-username":           "SASL user of the server's Kafka connections",
	"kafka-sasl-password":           "SASL password of the server's Kafka connections (better: SLUICE_KAFKA_SASL_PASSWORD)",
	"kafka-tls":                     "encrypt the server's Kafka connections with TLS",
	"kafka-tls-ca-file":             "PEM certificates of the authorities the brokers' certificates are checked against (\"\": the system's)",
	"kafka-tls-cert-file":           "PEM client certificate for mutual TLS (with kafka-tls-key-file)",
	"kafka-tls-key-file":            "PEM private key of kafka-tls-cert-file",
	"kafka-tls-server-name":         "the name the brokers' certificates must carry (\"\": the broker's host)",
}

// AddFlags gives fs a flag for each of keys that it does not have yet,
// named like the setting, of its type, showing its default: flags that
// are not set change nothing (Load reads only the ones given), so the
// host config file and SLUICE_* variables still apply below them.
func AddFlags(fs *pflag.FlagSet, keys ...string) {
	hs, ss := Default(), DefaultServer()
	def := map[string]any{
		"slots": hs.Slots, "memory-pages": hs.MemoryPages, "call-timeout": hs.CallTimeout,
		"max-output-bytes": hs.MaxOutputBytes, "max-module-bytes": hs.MaxModuleBytes, "cache-dir": hs.CacheDir,
		"batch-size": hs.BatchSize, "batch-bytes": hs.BatchBytes, "linger": hs.Linger, "queue-capacity": hs.QueueCapacity, "seed": hs.Seed,
		"restart-attempts": hs.RestartAttempts, "restart-delay": hs.RestartDelay, "restart-window": hs.RestartWindow,
		"job-memory": hs.JobMemory, "data-roots": hs.DataRoots, "fuel-rate": hs.FuelRate, "call-fuel": hs.CallFuel, "state-memory": hs.StateMemory,
		"state-backend": hs.StateBackend, "state-dir": hs.StateDir,
		"checkpoint-interval": hs.CheckpointInterval, "checkpoint-mode": hs.CheckpointMode, "checkpoint-timeout": hs.CheckpointTimeout,
		"checkpoint-min-pause": hs.CheckpointMinPause, "checkpoint-max-concurrent": hs.CheckpointMaxConcurrent,
		"checkpoint-tolerable-failures": hs.CheckpointTolerableFailures, "checkpoint-retain": hs.CheckpointRetain,
		"checkpoint-storage": hs.CheckpointStorage, "checkpoint-unaligned": hs.CheckpointUnaligned, "checkpoint-incremental": hs.CheckpointIncremental, "restart-strategy": hs.RestartStrategy,
		"listen": ss.Listen, "tenants-file": ss.TenantsFile, "admin-token-sha256": ss.AdminTokenSHA256,
		"max-request-bytes": ss.MaxRequestBytes, "max-pipeline-bytes": ss.MaxPipelineBytes, "rate-limit": ss.RateLimit,
		"rate-burst": ss.RateBurst, "drain-timeout": ss.DrainTimeout, "output-records": ss.OutputRecords,
		"output-bytes": ss.OutputBytes, "job-history": ss.JobHistory,
		"kafka-brokers": ss.Kafka.Brokers, "kafka-topic-prefix": ss.Kafka.TopicPrefix, "kafka-sasl-mechanism": ss.Kafka.SASLMechanism,
		"kafka-sasl-username": ss.Kafka.SASLUsername, "kafka-sasl-password": ss.Kafka.SASLPassword, "kafka-tls": ss.Kafka.TLS,
		"kafka-tls-ca-file": ss.Kafka.TLSCAFile, "kafka-tls-cert-file": ss.Kafka.TLSCertFile, "kafka-tls-key-file": ss.Kafka.TLSKeyFile,
		"kafka-tls-server-name": ss.Kafka.TLSServerName,
	}
	for _, k := range keys {
		if fs.Lookup(k) != nil {
			continue
		}
		usage := Usage[k]
		switch d := def[k].(type) {
		case int:
			fs.Int(k, d, usage)
		case int64:
			fs.Int64(k, d, usage)
		case uint32:
			fs.Uint32(k, d, usage)
		case float64:
			fs.Float64(k, d, usage)
		case string:
			fs.String(k, d, usage)
		case time.Duration:
			fs.Duration(k, d, usage)
		case []string:
			fs.StringSlice(k, d, usage)
		case bool:
			fs.Bool(k, d, usage)
		default:
			panic(fmt.Sprintf("settings.AddFlags: no flag type for setting %q (%T)", k, def[k]))
		}
	}
}
